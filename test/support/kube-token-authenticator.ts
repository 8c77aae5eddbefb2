import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestHandler } from 'express';
import { setIdentity } from '../../src/http/request-context.ts';
import type { Identity } from '../../src/kernel/identity.ts';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { HttpError } from '../../src/http/error-mapper.ts';

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] } };
}

/**
 * Test-only bearer authentication: the kube-apiserver's own static tokens (admin, alice, bob),
 * checked by a real TokenReview. Lets the node routes be exercised with real identities below the
 * platform's own token issuing. Answers are remembered so requests keep working while a test has
 * the apiserver stopped.
 */
export function kubeTokenAuthenticator(kc: KubeConfig): RequestHandler {
  const known = new Map<string, Identity>();
  return async (req, res, next) => {
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token) throw new HttpError(401, 'Unauthorized');
    let identity = known.get(token);
    if (!identity) {
      const review = await kubeRequest<TokenReview>(kc, '/apis/authentication.k8s.io/v1/tokenreviews', {
        method: 'POST',
        timeoutMs: 5000,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const user = review.status?.user;
      if (!review.status?.authenticated || !user?.username) throw new HttpError(401, 'Unauthorized');
      identity = { username: user.username, groups: user.groups ?? [] };
      known.set(token, identity);
    }
    setIdentity(res, identity);
    next();
  };
}
