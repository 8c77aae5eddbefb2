import { jsonResponse, statusResponse, type ApiDescription } from '../http/openapi-components.ts';

/** GET /version: the kube-apiserver's version object (kube-version-routes.ts). */
export function kubeVersionApi(): ApiDescription {
  return {
    tags: [{ name: 'kubernetes', description: 'What this server passes on from the Kubernetes cluster.' }],
    paths: {
      '/version': {
        get: {
          operationId: 'getVersion',
          tags: ['kubernetes'],
          summary: 'Version of the Kubernetes cluster behind this server (the kube-apiserver’s /version)',
          description:
            'What kubectl version and helm (`.Capabilities.KubeVersion`, a chart’s `kubeVersion`) read. ' +
            'A copy of the kube-apiserver’s object, at most a minute old. As in Kubernetes ' +
            '(system:public-info-viewer), callers without credentials get it too; a token that is sent ' +
            'must be valid. This server’s own version is not here.',
          security: [{}, { bearer: [] }],
          responses: {
            '200': jsonResponse('The kube-apiserver’s version object, as it sent it.', {
              type: 'object',
              required: ['major', 'minor', 'gitVersion'],
              properties: {
                major: { type: 'string' },
                minor: { type: 'string' },
                gitVersion: { type: 'string', pattern: '^v\\d+\\.\\d+' },
                gitCommit: { type: 'string' },
                gitTreeState: { type: 'string' },
                buildDate: { type: 'string' },
                goVersion: { type: 'string' },
                compiler: { type: 'string' },
                platform: { type: 'string' },
              },
              additionalProperties: true,
            }),
            '401': statusResponse('A token was sent and is not valid.', {
              'WWW-Authenticate': {
                description: '`Bearer …` challenge.',
                schema: { type: 'string', pattern: '^Bearer' },
              },
            }),
            '503': statusResponse('The kube-apiserver has not been reached yet.'),
          },
        },
      },
    },
  };
}
