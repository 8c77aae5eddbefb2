// Logins through the real server against a private real control plane: answer times for a wrong password
// and for an unknown user side by side (they must not tell which accounts exist), and how other requests
// fare while logins are in flight (bcrypt runs off the event loop). Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/login.bench.ts [--rounds=20]
import { startControlPlane } from '../cluster/control-plane.ts';
import { hashPassword } from '../../src/users/passwords.ts';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  adminKubeConfig,
  generateTestKeys,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';

const rounds = Number(/^--rounds=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 20);
const fmt = (n: number) => n.toFixed(1);
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

const cp = await startControlPlane();
const keys = generateTestKeys();
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installIamCrds(kc);
  // Default cost (12), as `platform-apiserver user create` writes it.
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: 'iam.platform.io',
    version: 'v1alpha2',
    plural: 'users',
    body: {
      apiVersion: 'iam.platform.io/v1alpha2',
      kind: 'User',
      metadata: { name: 'bench-user' },
      spec: { password: await hashPassword('bench-Pa55word!'), groups: [] },
    },
  });
  const server = await startReadyServer([
    `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
    `--auth.signingKeyFile=${keys.es256}`,
    '--auth.addressRequestsPerMinute=0',
    `--auth.lockout.maxFailures=100`,
  ]);
  try {
    const timed = async (username: string, password: string) => {
      const started = performance.now();
      const res = await passwordLogin(server.url, username, password);
      return { ms: performance.now() - started, status: res.status };
    };
    await timed('bench-user', 'bench-Pa55word!'); // warm-up
    const wrong: number[] = [];
    const unknown: number[] = [];
    const right: number[] = [];
    for (let i = 0; i < rounds; i++) {
      wrong.push((await timed('bench-user', `wrong-${i}`)).ms);
      unknown.push((await timed(`bench-nobody-${i}`, `wrong-${i}`)).ms);
      if (i % 4 === 0) right.push((await timed('bench-user', 'bench-Pa55word!')).ms);
      // Stay under the lockout: a success clears the failure count.
    }
    console.log(`## login answer times, ${rounds} each, sequential (bcrypt cost 12)`);
    for (const [label, values] of [
      ['wrong password', wrong],
      ['unknown user', unknown],
      ['right password (session created)', right],
    ] as const) {
      console.log(
        `${label}: mean ${fmt(mean(values))} ms, p50 ${fmt(percentile(values, 50))} ms, p95 ${fmt(percentile(values, 95))} ms`,
      );
    }
    console.log(
      `unknown/wrong: mean ${(mean(unknown) / mean(wrong)).toFixed(3)}, p50 ${(percentile(unknown, 50) / percentile(wrong, 50)).toFixed(3)}`,
    );

    console.log('\n## GET /healthz while 8 logins are in flight');
    const healthz = async (n: number) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        await (await fetch(`${server.url}/healthz`)).text();
        times.push(performance.now() - started);
      }
      return times;
    };
    const idle = await healthz(50);
    let loginsDone = false;
    const logins = Promise.all(
      Array.from({ length: 8 }, (_, i) => timed('bench-user', `wrong-busy-${i}`)),
    ).finally(() => (loginsDone = true));
    const busy: number[] = [];
    while (!loginsDone) busy.push(...(await healthz(1)));
    const loginTimes = (await logins).map((l) => l.ms);
    console.log(`idle: p50 ${fmt(percentile(idle, 50))} ms, max ${fmt(Math.max(...idle))} ms`);
    console.log(
      `during logins (${busy.length} requests): p50 ${fmt(percentile(busy, 50))} ms, max ${fmt(Math.max(...busy))} ms ` +
        `(the 8 logins took ${fmt(Math.max(...loginTimes))} ms in all)`,
    );
  } finally {
    await server.stop();
  }
} finally {
  keys.cleanup();
  await cp.stop();
}
