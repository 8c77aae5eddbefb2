// What one password login costs the kube-apiserver at steady state: its requests per login by verb and
// resource, and its CPU per login. A private real control plane with the original's users CRD (no status
// subresource) and LoginRecord CRD, as beside the original (vs-original.bench.ts); one user (bcrypt cost
// 10: the kube-apiserver's share does not depend on it), 4 clients logging in as fast as answered. First
// 130 logins, so the user's sessions and login records are at their limits (100 each), then the measured ones.
// Also the server's main-thread CPU per login (the event loop's share; the comparisons run on the pool), its
// login thread's (auth.loginThread), and
// that of a second replica beside it that no one logs into: what the logins' watch events alone cost.
// Prints one JSON line; asserts nothing.
//
//   source scripts/ensure-node.sh && node test/bench/login-writes.bench.ts [--logins=200] [--platform=platform]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile, execFileSync } from 'node:child_process';
import { startControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  generateTestKeys,
  installCrdFiles,
  installIamCrds,
  passwordLogin,
  SEED_CRD_FILES,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { benchArgs } from './bench-args.ts';
import { cpuSecondsOf, statCpuMs } from './proc-cpu.ts';

const LOGINS = Number(benchArgs().get('logins') ?? 200);
// kubesphere (default): the original's users CRD (status in the object) and LoginRecords; platform: our
// own CRDs (a status subresource, no LoginRecords), as the node benchmark's login storm runs.
const PLATFORM = benchArgs().get('platform') ?? 'kubesphere';
const USER = { name: 'bench-login', password: 'bench-Pa55word!', email: 'bench-login@example.com' };
const RESOURCES = ['users', 'sessions', 'loginrecords', 'loginthrottles'];
// --apiserver-profile=FILE: a Go CPU profile of the kube-apiserver over the measured logins' first
// --profile-seconds (default 15), for `go tool pprof`: where its share of a login goes.
const PROFILE = benchArgs().get('apiserver-profile');
const PROFILE_SECONDS = Number(benchArgs().get('profile-seconds') ?? 15);

const cp = await startControlPlane(PROFILE ? { apiserverArgs: ['--profiling=true'] } : {});
const keys = generateTestKeys();
try {
  const kubectl = cp.binaries.kubectl;
  /** apiserver_request_total of the IAM resources, by "VERB resource[/subresource]". */
  const requests = (): Map<string, number> => {
    const text = execFileSync(kubectl, ['--kubeconfig', cp.kubeconfigPath, 'get', '--raw', '/metrics'], {
      maxBuffer: 1 << 28,
    }).toString();
    const counts = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (!line.startsWith('apiserver_request_total{')) continue;
      const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
      if (!RESOURCES.includes(resource)) continue;
      const sub = /subresource="([^"]*)"/.exec(line)?.[1];
      const key = `${/verb="([^"]*)"/.exec(line)?.[1]} ${resource}${sub ? `/${sub}` : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + Number(line.split(' ').pop()));
    }
    return counts;
  };
  /** Waits until the writes a login leaves for after its answer (records, sessions beyond the limit) are done. */
  const settled = async (): Promise<Map<string, number>> => {
    let last = requests();
    return waitFor(
      'the logins’ last writes',
      async () => {
        const now = requests();
        const same = [...now].every(([k, v]) => last.get(k) === v) && now.size === last.size;
        last = now;
        return same ? now : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  };

  const kc = adminKubeConfig(cp.kubeconfigPath);
  if (PLATFORM === 'kubesphere') {
    await installCrdFiles(kc, SEED_CRD_FILES, PLATFORM);
    await installIamCrds(kc, PLATFORM, { except: ['users'] });
  } else await installIamCrds(kc, PLATFORM);
  await createUser(kc, { ...USER, groups: [], passwordCost: 10 }, PLATFORM);
  const serverArgs = [
    `--platformName=${PLATFORM}`,
    `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
    `--auth.signingKeyFile=${keys.es256}`,
    '--auth.addressRequestsPerMinute=0',
    '--log.access.mode=exceptions',
  ];
  const server = await startReadyServer(serverArgs);
  const replica = await startReadyServer(serverArgs);
  try {
    const logins = async (n: number) => {
      let next = 0;
      let ok = 0;
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          while (next++ < n) {
            const r = await passwordLogin(server.url, USER.name, USER.password, {
              id: PLATFORM,
              secret: PLATFORM,
            });
            if (r.status === 200) ok++;
          }
        }),
      );
      return ok;
    };
    await logins(130);
    const before = await settled();
    const apiserver0 = cpuSecondsOf(cp.pids[1]!);
    // The server's main thread (its thread id is the pid): the event loop's share of a login, without
    // the pool threads' password comparisons.
    const mainThreadStat = (pid: number) => `/proc/${pid}/task/${pid}/stat`;
    // The login thread (auth.loginThread), found by the name the server gives it; none when it is off.
    const loginThreadStat = loginThreadStatOf(server.child.pid!);
    const loginThreadMs = () => (loginThreadStat ? statCpuMs(loginThreadStat) : 0);
    const loginThread0 = loginThreadMs();
    const mainThread0 = statCpuMs(mainThreadStat(server.child.pid!));
    const replicaThread0 = statCpuMs(mainThreadStat(replica.child.pid!));
    const started = performance.now();
    const profile = PROFILE ? captureProfile(cp.binaries.kubectl, cp.kubeconfigPath, PROFILE) : undefined;
    const ok = await logins(LOGINS);
    await profile;
    const seconds = (performance.now() - started) / 1000;
    const after = await settled();
    const apiserverMs = (cpuSecondsOf(cp.pids[1]!) - apiserver0) * 1000;
    const mainThreadMs = statCpuMs(mainThreadStat(server.child.pid!)) - mainThread0;
    const loginThreadCpuMs = loginThreadMs() - loginThread0;
    const replicaThreadMs = statCpuMs(mainThreadStat(replica.child.pid!)) - replicaThread0;
    const perLogin: Record<string, number> = {};
    for (const [key, count] of after) {
      const delta = count - (before.get(key) ?? 0);
      if (delta > 0) perLogin[key] = Math.round((delta / ok) * 100) / 100;
    }
    process.stdout.write(
      JSON.stringify({
        logins: ok,
        refused: LOGINS - ok,
        logins_per_s: Math.round((ok / seconds) * 10) / 10,
        apiserver_cpu_ms_per_login: Math.round((apiserverMs / ok) * 100) / 100,
        server_main_thread_cpu_ms_per_login: Math.round((mainThreadMs / ok) * 100) / 100,
        ...(loginThreadStat
          ? { server_login_thread_cpu_ms_per_login: Math.round((loginThreadCpuMs / ok) * 100) / 100 }
          : {}),
        // The replica no one logs into: the users' and sessions' watch events of the logins, and its own timers.
        replica_main_thread_cpu_ms_per_login: Math.round((replicaThreadMs / ok) * 100) / 100,
        apiserver_requests_per_login: perLogin,
        load_average: (await import('node:os')).loadavg().map((x) => Math.round(x * 100) / 100),
      }) + '\n',
    );
  } finally {
    await Promise.all([server.stop(), replica.stop()]);
  }
} finally {
  await cp.stop();
  keys.cleanup();
}

/** Fetches the kube-apiserver's CPU profile over the next PROFILE_SECONDS into file. */
async function captureProfile(kubectl: string, kubeconfig: string, file: string): Promise<void> {
  const body = await new Promise<Buffer>((resolve, reject) =>
    execFile(
      kubectl,
      ['--kubeconfig', kubeconfig, 'get', '--raw', `/debug/pprof/profile?seconds=${PROFILE_SECONDS}`],
      { encoding: 'buffer', maxBuffer: 1 << 28 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  writeFileSync(file, body);
}

/** The stat file of the server's login thread, by the thread's name; undefined without one. */
function loginThreadStatOf(pid: number): string | undefined {
  const tasks = `/proc/${pid}/task`;
  const id = readdirSync(tasks).find((t) => {
    try {
      return readFileSync(`${tasks}/${t}/comm`, 'utf8').trim() === 'login-thread';
    } catch {
      return false;
    }
  });
  return id ? `${tasks}/${id}/stat` : undefined;
}
