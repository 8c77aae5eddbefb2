// Streams node status updates into the kube-apiserver at a fixed rate, like kubelets posting heartbeats.
// Usage: node test/bench/churn.ts <kubeconfig> <prefix> <nodeCount> <updatesPerSecond>
// Prints a JSON line {updates, failures, seconds} when it receives SIGTERM.
import { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';

const [kubeconfig, prefix, countText, rateText] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig!);
kc.setCurrentContext('admin');
const count = Number(countText);
const rate = Number(rateText);

let updates = 0;
let failures = 0;
const reasons = new Map<string, number>();
let next = 0;
const startedAt = Date.now();
let sent = 0;
const send = () => {
  sent++;
  const name = `${prefix}-${String(next++ % count).padStart(4, '0')}`;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  // Condition 3 is Ready in the fixtures; a heartbeat changes its lastHeartbeatTime.
  kubeRequest(kc, `/api/v1/nodes/${name}/status`, {
    method: 'PATCH',
    contentType: 'application/json-patch+json',
    body: [{ op: 'replace', path: '/status/conditions/3/lastHeartbeatTime', value: now }],
    timeoutMs: 10_000,
  })
    .then(() => updates++)
    .catch((err: Error) => {
      failures++;
      reasons.set(err.message, (reasons.get(err.message) ?? 0) + 1);
    });
};
// Catches up when the machine is busy, so the rate holds on average.
const timer = setInterval(() => {
  const due = Math.floor(((Date.now() - startedAt) / 1000) * rate);
  while (sent < due) send();
}, 10);
process.on('SIGTERM', () => {
  clearInterval(timer);
  process.stdout.write(
    JSON.stringify({
      updates,
      failures,
      seconds: (Date.now() - startedAt) / 1000,
      reasons: Object.fromEntries([...reasons].slice(0, 5)),
    }) + '\n',
  );
  process.exit(0);
});
