import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../../src/config/config.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import {
  allFeaturesValues,
  ChartTools,
  chartDir,
  findObject,
  parseObjects,
  type RenderedObject,
} from '../support/chart-tools.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const execFileAsync = promisify(execFile);
const serviceMonitorCrd = fileURLToPath(new URL('../fixtures/servicemonitor-crd.yaml', import.meta.url));

type Container = {
  name: string;
  image: string;
  args: string[];
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string; scheme?: string } };
  readinessProbe: { httpGet: { path: string; port: string; scheme?: string } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string }[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
};
type PodSpec = {
  serviceAccountName: string;
  priorityClassName?: string;
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string }; configMap?: { name: string } }[];
  topologySpreadConstraints: { topologyKey: string; maxSkew: number; whenUnsatisfiable: string }[];
};
type DeploymentSpec = {
  replicas: number;
  strategy: { type: string; rollingUpdate: { maxUnavailable: number; maxSurge: number } };
  template: {
    metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    spec: PodSpec;
  };
};

const spec = <T>(o: RenderedObject) => o['spec'] as T;
const kinds = (objects: RenderedObject[]) => objects.map((o) => o.kind).sort();

/** The server's config file as rendered into the ConfigMap, loaded by the server's own loader. */
function loadRenderedConfig(objects: RenderedObject[]) {
  const configMap = findObject(objects, 'ConfigMap');
  const text = (configMap['data'] as Record<string, string>)['config.yaml']!;
  return loadConfig({ argv: ['--config=/config.yaml'], env: {}, readFile: () => text });
}

/** Applies a rendered stream with a server-side dry run: the kube-apiserver's full validation and admission. */
async function dryRunApply(tools: ChartTools, rendered: string, namespace: string): Promise<string[]> {
  const out = await tools.kubectl(['apply', '--dry-run=server', `--namespace=${namespace}`], {
    input: rendered,
  });
  return out.trim().split('\n');
}

// One control plane for both suites (a private one, stopped at the end, when this file runs alone).
const cp: ControlPlane = await testControlPlane();

describe('helm chart: lint, render, server-side dry run', () => {
  let tools: ChartTools;
  let namespace: string;

  before(async () => {
    tools = new ChartTools(cp);
    namespace = await tools.createNamespace('chart-render');
    // The rendered User (first admin) needs the chart's CRDs to be served, as after a real install.
    // They stay: other tests use the same CRDs, and deleting one deletes every object of its kind.
    await tools.installChartCrds();
  });
  after(async () => {
    await tools.deleteNamespace(namespace);
    tools.cleanup();
  });

  test('helm lint --strict passes with default values and with every optional feature on', async () => {
    for (const args of [[], ['-f', allFeaturesValues]]) {
      const out = await tools.helm(['lint', '--strict', chartDir, ...args]);
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  test('default values: hardened Deployment, ClusterIP Service, and the kube-apiserver accepts every object', async () => {
    const rendered = await tools.template('platform', namespace);
    const objects = parseObjects(rendered);
    assert.deepEqual(kinds(objects), [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      // Users, sessions, login throttles, groups and group bindings; workspace templates, workspaces,
      // workspace roles and bindings.
      ...Array<string>(9).fill('CustomResourceDefinition'),
      'Deployment',
      // The `helm test` hook Pod (templates/tests/).
      'Pod',
      'PodDisruptionBudget',
      // Leader election: the Lease in the release's namespace.
      'Role',
      'RoleBinding',
      'Secret',
      'Secret',
      'Service',
      'ServiceAccount',
    ]);

    for (const o of objects) {
      const labels = o.metadata.labels ?? {};
      for (const key of ['name', 'instance', 'version', 'component', 'managed-by']) {
        assert.ok(
          labels[`app.kubernetes.io/${key}`],
          `${o.kind} ${o.metadata.name} lacks app.kubernetes.io/${key}`,
        );
      }
      assert.equal(labels['app.kubernetes.io/instance'], 'platform');
    }

    const deployment = spec<DeploymentSpec>(findObject(objects, 'Deployment'));
    assert.equal(deployment.replicas, 2);
    assert.deepEqual(deployment.strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    const pod = deployment.template.spec;
    assert.equal(pod.serviceAccountName, 'platform');
    assert.equal(pod.securityContext['runAsNonRoot'], true);
    assert.deepEqual(pod.securityContext['seccompProfile'], { type: 'RuntimeDefault' });
    assert.deepEqual(
      pod.topologySpreadConstraints.map((c) => [c.topologyKey, c.maxSkew]),
      [['kubernetes.io/hostname', 1]],
    );
    const [container] = pod.containers;
    assert.ok(container);
    assert.deepEqual(container.args, ['--config=/etc/platform-apiserver/config.yaml']);
    assert.deepEqual(container.ports, [{ name: 'http', containerPort: 9090, protocol: 'TCP' }]);
    // A terminating Pod serves on for the preStop sleep (endpoints and Ingress controllers catch up), then
    // the server drains for shutdownGraceSeconds; the grace period covers both.
    assert.deepEqual(container.lifecycle, { preStop: { sleep: { seconds: 10 } } });
    assert.equal(pod.terminationGracePeriodSeconds, 10 + 30 + 5);
    assert.equal(container.image, 'platform-apiserver:0.1.0');
    assert.deepEqual(container.livenessProbe.httpGet, { path: '/livez', port: 'http', scheme: 'HTTP' });
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'http', scheme: 'HTTP' });
    assert.ok(container.resources.requests?.['cpu'] && container.resources.limits?.['memory']);
    assert.equal(container.securityContext['allowPrivilegeEscalation'], false);
    assert.equal(container.securityContext['readOnlyRootFilesystem'], true);
    assert.equal(container.securityContext['runAsNonRoot'], true);
    assert.deepEqual(container.securityContext['capabilities'], { drop: ['ALL'] });
    assert.deepEqual(container.securityContext['seccompProfile'], { type: 'RuntimeDefault' });
    assert.deepEqual(
      pod.volumes.filter((v) => v.secret).map((v) => v.secret!.secretName),
      ['platform-signing-keys', 'platform-admin'],
    );

    // In-cluster URL http://<release>.<namespace>.svc: the Service is named after the release, port 80.
    const service = findObject(objects, 'Service', 'platform');
    assert.deepEqual(spec<Record<string, unknown>>(service)['type'], 'ClusterIP');
    assert.deepEqual(spec<Record<string, unknown>>(service)['ports'], [
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
    ]);

    const applied = await dryRunApply(tools, rendered, namespace);
    assert.equal(applied.length, objects.length, applied.join('\n'));
    // The CRDs are installed already (before()): the dry run would update them; everything else is new.
    for (const line of applied)
      assert.match(line, /^customresourcedefinition|created \(server dry run\)$/, line);
  });

  test('every optional feature on: Ingress, ServiceMonitor, NetworkPolicy accepted by the kube-apiserver', async () => {
    // The Prometheus Operator is not part of this cluster: a minimal ServiceMonitor CRD stands in for it.
    await tools.kubectl(['apply', '-f', serviceMonitorCrd]);
    after(() => tools.kubectl(['delete', '-f', serviceMonitorCrd, '--wait=false']));
    await tools.waitForCrds(['servicemonitors.monitoring.coreos.com']);

    const rendered = await tools.template('platform', namespace, ['-f', allFeaturesValues]);
    const objects = parseObjects(rendered);
    for (const kind of ['Ingress', 'ServiceMonitor', 'NetworkPolicy', 'PodDisruptionBudget'])
      findObject(objects, kind);

    const ingress = spec<{
      ingressClassName: string;
      tls: { hosts: string[]; secretName: string }[];
      rules: { host: string; http: { paths: { path: string; backend: { service: { name: string } } }[] } }[];
    }>(findObject(objects, 'Ingress'));
    assert.equal(ingress.ingressClassName, 'nginx');
    assert.deepEqual(ingress.tls, [
      { hosts: ['platform.example.com', 'api.platform.example.com'], secretName: 'platform-example-tls' },
    ]);
    assert.deepEqual(
      ingress.rules.flatMap((r) => r.http.paths.map((p) => `${r.host}${p.path}->${p.backend.service.name}`)),
      [
        'platform.example.com/->platform',
        'api.platform.example.com/kapis->platform',
        'api.platform.example.com/oauth->platform',
      ],
    );
    const deployment = spec<DeploymentSpec>(findObject(objects, 'Deployment'));
    assert.equal(deployment.replicas, 3);
    // The log store's password comes from its Secret as an environment variable, never the ConfigMap.
    const apiserver = deployment.template.spec.containers[0]!;
    assert.deepEqual(
      apiserver.env?.find((e) => e.name === 'PLATFORM_LOGGING_PASSWORD'),
      {
        name: 'PLATFORM_LOGGING_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'log-store-credentials', key: 'password' } },
      },
    );
    // The allocator settings of the image (docs/benchmarks.md, soak), the credentials from Secrets, then extraEnv.
    assert.deepEqual(
      apiserver.env?.map((e) => e.name),
      [
        'MALLOC_ARENA_MAX',
        'MALLOC_MMAP_THRESHOLD_',
        'PLATFORM_LOGGING_USERNAME',
        'PLATFORM_LOGGING_PASSWORD',
        'PLATFORM_AUTH_CLIENTS',
        'NODE_EXTRA_CA_CERTS',
        'POD_NAME',
      ],
    );
    assert.deepEqual(apiserver.env?.find((e) => e.name === 'PLATFORM_LOGGING_USERNAME')?.valueFrom, {
      secretKeyRef: { name: 'log-store-credentials', key: 'username' },
    });
    // OAuth client secrets: a Secret of the chart, given as an environment variable; never in the ConfigMap.
    assert.deepEqual(apiserver.env?.find((e) => e.name === 'PLATFORM_AUTH_CLIENTS')?.valueFrom, {
      secretKeyRef: { name: 'platform-oauth-clients', key: 'clients' },
    });
    const clientsSecret = findObject(objects, 'Secret', 'platform-oauth-clients');
    const clients = Buffer.from(
      (clientsSecret['data'] as Record<string, string>)['clients']!,
      'base64',
    ).toString();
    assert.equal(clients, 'console:console-secret-for-tests,cli:cli-secret-for-tests');
    const configText = JSON.stringify(findObject(objects, 'ConfigMap'));
    assert.doesNotMatch(configText, /secret-for-tests|clients/);
    // The server reads them from that variable (its own loader, as at start).
    const fromEnv = loadConfig({
      argv: ['--config=/config.yaml'],
      env: { PLATFORM_AUTH_CLIENTS: clients },
      readFile: () => (findObject(objects, 'ConfigMap')['data'] as Record<string, string>)['config.yaml']!,
    });
    assert.equal(fromEnv.auth.clients, clients);

    // The escape hatches: image by digest, extra volumes and mounts, labels, priority, spread, drain.
    const pod = deployment.template.spec;
    assert.equal(
      apiserver.image,
      'registry.example.com/platform/platform-apiserver@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
    assert.deepEqual(
      apiserver.volumeMounts.map((m) => m.name),
      ['config', 'signing-keys', 'admin', 'tmp', 'tls', 'logging-ca', 'extra-ca'],
    );
    assert.deepEqual(
      pod.volumes.find((v) => v.name === 'extra-ca'),
      { name: 'extra-ca', configMap: { name: 'corporate-ca' } },
    );
    assert.equal(pod.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(
      pod.topologySpreadConstraints.map((c) => [c.topologyKey, c.whenUnsatisfiable]),
      [['topology.kubernetes.io/zone', 'DoNotSchedule']],
    );
    assert.deepEqual(apiserver.lifecycle, { preStop: { sleep: { seconds: 15 } } });
    assert.equal(pod.terminationGracePeriodSeconds, 15 + 20 + 5);
    assert.equal(deployment.template.metadata.labels['example.com/team'], 'platform');
    assert.equal(deployment.template.metadata.labels['example.com/cost-center'], 'platform-42');
    assert.equal(deployment.template.metadata.annotations['example.com/scrape'], 'true');
    for (const o of objects.filter((o) => o.kind !== 'CustomResourceDefinition'))
      assert.equal(
        o.metadata.labels?.['example.com/cost-center'],
        'platform-42',
        `${o.kind} ${o.metadata.name}`,
      );
    // Egress: the kube-apiserver, the log store and Prometheus on their URLs' ports, DNS, and the extra
    // rule; nothing else.
    assert.deepEqual(spec<{ egress: unknown }>(findObject(objects, 'NetworkPolicy')).egress, [
      {
        to: [{ ipBlock: { cidr: '10.0.0.1/32' } }, { ipBlock: { cidr: '192.168.10.0/24' } }],
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 6443, protocol: 'TCP' },
        ],
      },
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'logging' } } }],
        ports: [{ port: 9200, protocol: 'TCP' }],
      },
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 9090, protocol: 'TCP' }],
      },
      {
        to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
      { to: [{ ipBlock: { cidr: '192.168.20.0/24' } }], ports: [{ port: 4317, protocol: 'TCP' }] },
    ]);
    assert.ok(apiserver.volumeMounts.some((m) => m.name === 'logging-ca'));
    // Serving TLS itself: probes and the ServiceMonitor speak HTTPS.
    assert.equal(apiserver.readinessProbe.httpGet.scheme, 'HTTPS');
    assert.equal(apiserver.livenessProbe.httpGet.scheme, 'HTTPS');
    const endpoints = spec<{ endpoints: { scheme: string }[] }>(
      findObject(objects, 'ServiceMonitor'),
    ).endpoints;
    assert.equal(endpoints[0]?.scheme, 'https');
    assert.equal(
      deployment.template.spec.containers[0]?.args[0],
      '--config=/etc/platform-apiserver/config.yaml',
    );

    const applied = await dryRunApply(tools, rendered, namespace);
    assert.equal(applied.length, objects.length, applied.join('\n'));
    assert.ok(applied.includes(`servicemonitor.monitoring.coreos.com/platform created (server dry run)`));
    assert.ok(applied.includes(`networkpolicy.networking.k8s.io/platform created (server dry run)`));
    assert.ok(applied.includes(`ingress.networking.k8s.io/platform created (server dry run)`));
  });

  test("the rendered config file is accepted by the server's own config loader", async () => {
    const defaultObjects = parseObjects(await tools.template('platform', namespace));
    const defaults = loadRenderedConfig(defaultObjects);
    assert.equal(defaults.http.host, '0.0.0.0');
    // The key file named in the config is where the Deployment mounts the keys Secret.
    const container = spec<DeploymentSpec>(findObject(defaultObjects, 'Deployment')).template.spec
      .containers[0]!;
    const keysMount = container.volumeMounts.find((m) => m.name === 'signing-keys')!.mountPath;
    assert.equal(defaults.auth.signingKeyFile, `${keysMount}/signing-key.pem`);
    assert.equal(defaults.auth.signingAlgorithm, 'ES256');
    assert.equal(defaults.auth.publicUrl, '');
    // The server creates the first administrator from the mounted password Secret.
    const adminMount = container.volumeMounts.find((m) => m.name === 'admin')!.mountPath;
    assert.deepEqual(defaults.auth.bootstrapAdmin, {
      username: 'admin',
      passwordFile: `${adminMount}/password`,
      groups: ['system:masters'],
    });
    assert.deepEqual(defaults.auth.verificationKeyFiles, []);
    assert.equal(defaults.http.port, 9090);
    assert.deepEqual(defaults.http.trustedProxies, []);

    const all = loadRenderedConfig(
      parseObjects(await tools.template('platform', namespace, ['-f', allFeaturesValues])),
    );
    assert.equal(all.http.shutdownGraceSeconds, 20);
    assert.equal(all.log.level, 'debug');
    assert.deepEqual(all.http.trustedProxies, ['10.244.0.0/16', 'fd00:10:244::/56']);
    assert.equal(all.http.tlsCertFile, '/etc/platform-apiserver-tls/tls.crt');
    assert.equal(all.http.tlsKeyFile, '/etc/platform-apiserver-tls/tls.key');
    assert.equal(all.logging.tls.caFile, '/etc/platform-apiserver-logging-ca/ca.crt');
    assert.equal(all.logging.password, '', 'the password is not in the file');
    // {base_url} from the first Ingress host, https because that host has TLS.
    assert.equal(all.auth.publicUrl, 'https://platform.example.com');

    const custom = loadRenderedConfig(
      parseObjects(await tools.template('platform', namespace, ['--set', 'containerPort=8080'])),
    );
    assert.equal(custom.http.port, 8080);

    const ownKeys = loadRenderedConfig(
      parseObjects(
        await tools.template('platform', namespace, [
          '--set',
          'signingKeys.existingSecret=my-keys',
          '--set',
          'signingKeys.key=tls.key',
          '--set',
          'signingKeys.algorithm=RS256',
          '--set',
          'externalBaseUrl=https://api.example.org/',
        ]),
      ),
    );
    assert.equal(ownKeys.auth.signingKeyFile, '/etc/platform-apiserver-keys/tls.key');
    assert.equal(ownKeys.auth.signingAlgorithm, 'RS256');
    assert.equal(ownKeys.auth.publicUrl, 'https://api.example.org');

    const rotating = loadRenderedConfig(
      parseObjects(
        await tools.template('platform', namespace, [
          '--set',
          'signingKeys.verificationKeys={old-1.pem,old-2.pem}',
          '--set',
          'admin.create=false',
        ]),
      ),
    );
    assert.deepEqual(rotating.auth.verificationKeyFiles, [
      '/etc/platform-apiserver-keys/old-1.pem',
      '/etc/platform-apiserver-keys/old-2.pem',
    ]);
    assert.equal(rotating.auth.bootstrapAdmin.username, '');
  });

  test('existing Secrets named by the user replace the generated ones', async () => {
    const objects = parseObjects(
      await tools.template('platform', namespace, [
        '--set',
        'signingKeys.existingSecret=my-keys',
        '--set',
        'admin.existingSecret=my-admin',
        '--set',
        'admin.passwordKey=first-password',
        '--set',
        'oauth.existingSecret=my-clients',
        '--set',
        'oauth.key=list',
        // Ignored: the existing Secret replaces them.
        '--set',
        'oauth.clients[0].id=console',
        '--set',
        'oauth.clients[0].secret=unused',
      ]),
    );
    assert.equal(
      objects.filter((o) => o.kind === 'Secret').length,
      0,
      'no Secret is rendered when both are given',
    );
    const volumes = spec<DeploymentSpec>(findObject(objects, 'Deployment')).template.spec.volumes;
    const byName = Object.fromEntries(volumes.map((v) => [v.name, v]));
    assert.equal(byName['signing-keys']?.secret?.secretName, 'my-keys');
    assert.deepEqual(byName['admin']?.secret, {
      secretName: 'my-admin',
      defaultMode: 0o400, // 256
      items: [{ key: 'first-password', path: 'password' }],
    });
    const container = spec<DeploymentSpec>(findObject(objects, 'Deployment')).template.spec.containers[0]!;
    assert.deepEqual(container.env?.find((e) => e.name === 'PLATFORM_AUTH_CLIENTS')?.valueFrom, {
      secretKeyRef: { name: 'my-clients', key: 'list' },
    });
  });

  test("egress to the kube-apiserver: looked up from the kubernetes Service's EndpointSlice at install", async () => {
    // This control plane runs without the endpoint reconciler (it listens on loopback only), so the
    // EndpointSlice it would keep is written here, as it writes it; the e2e cluster has the real one.
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'] }, { addresses: ['192.0.2.11'] }],
      ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
    };
    await tools.kubectl(['apply'], { input: JSON.stringify(slice) });
    after(() => tools.kubectl(['delete', 'endpointslice', 'kubernetes', '-n', 'default']));
    // A server-side dry run looks objects up as an install does; helm template alone cannot.
    const out = await tools.helm([
      'install',
      'np',
      chartDir,
      `--namespace=${namespace}`,
      '--dry-run=server',
      '--set',
      'networkPolicy.enabled=true',
      '--set',
      'networkPolicy.egress.enabled=true',
      '--set',
      'networkPolicy.egress.dnsTo=null',
    ]);
    const manifest = out.slice(out.indexOf('MANIFEST:') + 'MANIFEST:'.length, out.indexOf('NOTES:'));
    const policy = findObject(parseObjects(manifest), 'NetworkPolicy');
    assert.deepEqual(spec<{ egress: unknown }>(policy).egress, [
      {
        to: [{ ipBlock: { cidr: '192.0.2.10/32' } }, { ipBlock: { cidr: '192.0.2.11/32' } }],
        ports: [{ port: 6443, protocol: 'TCP' }],
      },
    ]);
  });

  test('values.schema.json and the templates reject bad values, naming what is wrong', async () => {
    const cases: [string[], RegExp][] = [
      [['--set', 'replicaCount=0'], /replicaCount.*minimum/],
      [['--set', 'ingress.enabled=yes'], /ingress\/enabled.*want boolean/],
      [['--set', 'config.http.trustedProxies=10.0.0.0/8'], /trustedProxies.*want array/],
      [['--set', 'config.platformName=Not_A_Label'], /platformName/],
      [['--set', 'replicas=2'], /additional properties 'replicas' not allowed/],
      [
        ['--set', 'config.logging.password=hunter2'],
        /config\.logging\.password: do not put the log store's password/,
      ],
      [
        ['--set', 'networkPolicy.enabled=true', '--set', 'networkPolicy.egress.enabled=true'],
        /networkPolicy\.egress\.kubeApiServerCidrs must list.*helm template cannot/,
      ],
      [
        [
          '--set',
          'networkPolicy.enabled=true',
          '--set',
          'networkPolicy.egress.enabled=true',
          '--set',
          'networkPolicy.egress.kubeApiServerCidrs={10.0.0.1/32}',
          '--set',
          'config.logging.hosts={https://opensearch.logging.svc:9200}',
        ],
        /networkPolicy\.egress\.logStoreTo must name where the log store runs/,
      ],
      [
        [
          '--set',
          'networkPolicy.enabled=true',
          '--set',
          'networkPolicy.egress.enabled=true',
          '--set',
          'networkPolicy.egress.kubeApiServerCidrs={10.0.0.1/32}',
          '--set',
          'config.monitoring.endpoint=https://prometheus.monitoring.svc',
        ],
        /networkPolicy\.egress\.monitoringTo must name where Prometheus runs/,
      ],
      [
        ['--set', 'config.auth.clients=console:hunter2'],
        /config\.auth\.clients: do not put OAuth client secrets in the ConfigMap/,
      ],
      [
        ['--set', 'oauth.clients[0].id=console', '--set-string', 'oauth.clients[0].secret=a\\,b'],
        /oauth\.clients\[0\]\.secret must not contain a comma or whitespace/,
      ],
      [['--set', 'oauth.clients[0].id=a/b', '--set', 'oauth.clients[0].secret=s'], /oauth\/clients\/0\/id/],
      [['--set', 'image.digest=latest'], /image\/digest.*does not match pattern/],
      [['--set', 'preStopSleepSeconds=-1'], /preStopSleepSeconds.*minimum/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(tools.template('platform', namespace, args), message, args.join(' '));
    }
  });

  test('an unknown key under config, at any depth, fails helm lint and helm template', async () => {
    // A typo in a values file: before the config schema was closed, helm accepted it and the server
    // silently ran with the default.
    const typo = path.join(tools.dir, 'typo-values.yaml');
    writeFileSync(typo, 'config:\n  auth:\n    lockout:\n      maxTries: 3\n');
    await assert.rejects(tools.helm(['lint', '--strict', chartDir, '-f', typo]), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /1 chart\(s\) linted, 1 chart\(s\) failed/);
      assert.match(
        err.message,
        /\[ERROR\] values\.yaml: - at '\/config\/auth\/lockout': additional properties 'maxTries' not allowed/,
      );
      return true;
    });
    const cases: [string, RegExp][] = [
      ['config.platfromName=acme', /at '\/config': additional properties 'platfromName' not allowed/],
      ['config.http.prot=8080', /at '\/config\/http': additional properties 'prot' not allowed/],
      ['config.logging.tls.caFiel=/ca.crt', /at '\/config\/logging\/tls': additional properties 'caFiel'/],
    ];
    for (const [set, message] of cases) {
      await assert.rejects(tools.template('platform', namespace, ['--set', set]), message, set);
    }
    // The same keys spelt right pass (the schema is closed, not wrong).
    await tools.template('platform', namespace, [
      '--set',
      'config.platformName=acme',
      '--set',
      'config.auth.lockout.maxFailures=3',
      '--set',
      'config.logging.tls.caFile=/ca.crt',
    ]);
  });

  test("the custom resources' API group follows config.platformName", async () => {
    const objects = parseObjects(
      await tools.template('platform', namespace, ['--set', 'config.platformName=acme']),
    );
    const groups = (findObject(objects, 'ClusterRole')['rules'] as { apiGroups: string[] }[]).flatMap(
      (r) => r.apiGroups,
    );
    assert.deepEqual(
      [...new Set(groups)],
      [
        '',
        'apps',
        'batch',
        'snapshot.storage.k8s.io',
        'iam.acme.io',
        'tenant.acme.io',
        'rbac.authorization.k8s.io',
        'authorization.k8s.io',
      ],
    );
  });

  test('the ClusterRole grants exactly what the server needs, with no wildcard', async () => {
    const objects = parseObjects(await tools.template('platform', namespace));
    const role = findObject(objects, 'ClusterRole');
    assert.equal(role.metadata.name, `platform-${namespace}`);
    assert.deepEqual(role['rules'], [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
      {
        apiGroups: ['apps'],
        resources: ['deployments', 'statefulsets', 'daemonsets'],
        verbs: ['list', 'watch'],
      },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['list', 'watch'] },
      {
        apiGroups: ['snapshot.storage.k8s.io'],
        resources: ['volumesnapshotclasses'],
        verbs: ['list', 'watch'],
      },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['users'],
        verbs: ['get', 'list', 'watch', 'update', 'create', 'delete'],
      },
      { apiGroups: ['iam.platform.io'], resources: ['users/status'], verbs: ['update', 'patch'] },
      { apiGroups: ['iam.platform.io'], resources: ['loginthrottles'], verbs: ['get', 'create', 'update'] },
      { apiGroups: ['iam.platform.io'], resources: ['loginrecords'], verbs: ['list', 'create', 'delete'] },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['sessions'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      },
      {
        apiGroups: ['tenant.platform.io'],
        resources: ['workspacetemplates', 'workspaces'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['tenant.platform.io'],
        resources: ['workspacetemplates'],
        verbs: ['create', 'update', 'patch', 'delete'],
      },
      { apiGroups: ['iam.platform.io'], resources: ['workspacerolebindings'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'update', 'delete'] },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['globalroles', 'globalrolebindings', 'workspaceroles', 'workspacerolebindings'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['tenant.platform.io'],
        resources: ['workspaces'],
        verbs: ['create', 'update', 'patch', 'delete'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['patch'] },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['workspaceroles', 'workspacerolebindings'],
        verbs: ['create', 'update', 'patch', 'delete'],
      },
      { apiGroups: ['iam.platform.io'], resources: ['rolebases'], verbs: ['list', 'watch'] },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['roles'],
        verbs: ['create', 'update', 'escalate'],
      },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create', 'delete'] },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['roles'],
        resourceNames: ['admin'],
        verbs: ['bind'],
      },
      { apiGroups: ['iam.platform.io'], resources: ['globalrolebindings'], verbs: ['create', 'delete'] },
      { apiGroups: ['iam.platform.io'], resources: ['globalroles'], verbs: ['create', 'update', 'delete'] },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterrolebindings', 'rolebindings'],
        verbs: ['delete'],
      },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles'],
        verbs: ['create', 'update', 'delete', 'escalate', 'bind'],
      },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterrolebindings', 'rolebindings'],
        verbs: ['create', 'update', 'delete'],
      },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['groups'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      },
      {
        apiGroups: ['iam.platform.io'],
        resources: ['groupbindings'],
        verbs: ['get', 'list', 'watch', 'create', 'delete'],
      },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      { apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] },
    ]);
    assert.doesNotMatch(JSON.stringify(role['rules']), /\*/);
    // Without a first administrator to create, the users API still creates users (as its callers allow).
    const noAdmin = parseObjects(
      await tools.template('platform', namespace, ['--set', 'admin.create=false']),
    );
    const userRule = (
      findObject(noAdmin, 'ClusterRole')['rules'] as { resources: string[]; verbs: string[] }[]
    ).find((r) => r.resources.includes('users'));
    assert.deepEqual(userRule?.verbs, ['get', 'list', 'watch', 'update', 'create', 'delete']);
    const binding = findObject(objects, 'ClusterRoleBinding');
    assert.deepEqual(binding['roleRef'], {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: `platform-${namespace}`,
    });
    assert.deepEqual(binding['subjects'], [{ kind: 'ServiceAccount', name: 'platform', namespace }]);

    // Leader election: one Lease in the release's namespace, and the server told to use that namespace.
    const leaseRole = findObject(objects, 'Role');
    assert.equal(leaseRole.metadata.namespace, namespace);
    assert.deepEqual(leaseRole['rules'], [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['platform-apiserver'],
        verbs: ['get', 'update'],
      },
    ]);
    assert.deepEqual(findObject(objects, 'RoleBinding')['subjects'], [
      { kind: 'ServiceAccount', name: 'platform', namespace },
    ]);
    assert.equal(loadRenderedConfig(objects).leaderElection.leaseNamespace, namespace);
  });
});

describe('helm chart installed into the real kube-apiserver', () => {
  let tools: ChartTools;
  let namespace: string;
  const release = 'chart-e2e';

  before(async () => {
    tools = new ChartTools(cp);
    namespace = await tools.createNamespace('chart-install');
    await tools.helm(['install', release, chartDir, `--namespace=${namespace}`]);
  });
  after(async () => {
    await tools.helm(['uninstall', release, `--namespace=${namespace}`]);
    await tools.deleteNamespace(namespace);
    tools.cleanup();
  });

  const secretData = async (name: string) =>
    JSON.parse(
      await tools.kubectl(['get', 'secret', name, `--namespace=${namespace}`, '-o', 'jsonpath={.data}']),
    ) as Record<string, string>;

  test('helm upgrade keeps the signing key and the admin password', async () => {
    const keysBefore = await secretData(`${release}-signing-keys`);
    const adminBefore = await secretData(`${release}-admin`);
    assert.match(
      Buffer.from(keysBefore['signing-key.pem']!, 'base64').toString(),
      /^-----BEGIN [A-Z ]*PRIVATE KEY-----/,
    );
    assert.equal(Buffer.from(adminBefore['password']!, 'base64').toString().length, 24);
    const checksum = async () =>
      tools.kubectl([
        'get',
        'deployment',
        release,
        `--namespace=${namespace}`,
        '-o',
        'jsonpath={.spec.template.metadata.annotations.checksum/config}',
      ]);
    const checksumBefore = await checksum();

    await tools.helm([
      'upgrade',
      release,
      chartDir,
      `--namespace=${namespace}`,
      '--set',
      'config.log.level=debug',
    ]);

    assert.notEqual(
      await checksum(),
      checksumBefore,
      'the upgrade changed the config and so the pod template',
    );
    assert.deepEqual(await secretData(`${release}-signing-keys`), keysBefore);
    assert.deepEqual(await secretData(`${release}-admin`), adminBefore);
    const history = await tools.helm(['history', release, `--namespace=${namespace}`, '-o', 'json']);
    assert.equal((JSON.parse(history) as unknown[]).length, 2);
  });

  test('the ServiceAccount token may do what the ClusterRole allows, and nothing else', async () => {
    const token = (
      await tools.kubectl(['create', 'token', release, `--namespace=${namespace}`, '--duration=10m'])
    ).trim();
    assert.match(token, /^ey/);
    const kubeconfig = tools.writeKubeconfig('sa', token);
    // SelfSubjectAccessReviews asked with the token itself: the kube-apiserver's RBAC answers.
    const sa = new KubeConfig();
    sa.loadFromFile(kubeconfig);
    const authz = sa.makeApiClient(AuthorizationV1Api);
    const canI = async (verb: string, resourcePath: string, group = '', ns?: string) => {
      const [resource, subresource] = resourcePath.split('/');
      const attributes = {
        verb,
        resource,
        group,
        ...(subresource ? { subresource } : {}),
        ...(ns ? { namespace: ns } : {}),
      };
      const review = await authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: attributes } },
      });
      return review.status?.allowed === true;
    };
    const allowed: [string, string, string?, string?][] = [
      ['list', 'nodes'],
      ['watch', 'nodes'],
      ['get', 'nodes'],
      ['create', 'subjectaccessreviews', 'authorization.k8s.io'],
      ['impersonate', 'users'],
      ['impersonate', 'groups'],
      // The resources API's caches: read only.
      ['watch', 'pods'],
      ['list', 'deployments', 'apps'],
      ['watch', 'statefulsets', 'apps'],
      ['list', 'daemonsets', 'apps'],
      ['watch', 'jobs', 'batch'],
      ['list', 'cronjobs', 'batch'],
      ['watch', 'services'],
      ['list', 'users', 'iam.platform.io'],
      ['watch', 'sessions', 'iam.platform.io'],
      ['create', 'sessions', 'iam.platform.io'],
      ['delete', 'sessions', 'iam.platform.io'],
      ['update', 'users/status', 'iam.platform.io'],
      ['patch', 'users/status', 'iam.platform.io'],
      ['update', 'users', 'iam.platform.io'],
      ['delete', 'users', 'iam.platform.io'],
      ['create', 'globalrolebindings', 'iam.platform.io'],
      ['update', 'globalroles', 'iam.platform.io'],
      ['delete', 'clusterrolebindings', 'rbac.authorization.k8s.io'],
      ['delete', 'rolebindings', 'rbac.authorization.k8s.io', namespace],
      ['update', 'loginthrottles', 'iam.platform.io'],
      ['list', 'workspacetemplates', 'tenant.platform.io'],
      ['get', 'workspaces', 'tenant.platform.io'],
      ['create', 'workspacetemplates', 'tenant.platform.io'],
      ['update', 'workspacetemplates', 'tenant.platform.io'],
      ['patch', 'workspacetemplates', 'tenant.platform.io'],
      ['delete', 'workspacetemplates', 'tenant.platform.io'],
      ['list', 'workspacerolebindings', 'iam.platform.io'],
      ['get', 'namespaces'],
      ['create', 'namespaces'],
      ['update', 'namespaces'],
      ['delete', 'namespaces'],
      ['watch', 'globalrolebindings', 'iam.platform.io'],
      ['list', 'workspaceroles', 'iam.platform.io'],
      ['list', 'rolebindings', 'rbac.authorization.k8s.io'],
      ['watch', 'clusterroles', 'rbac.authorization.k8s.io'],
      // The tenant reconciler.
      ['patch', 'workspacetemplates', 'tenant.platform.io'],
      ['create', 'workspaces', 'tenant.platform.io'],
      ['delete', 'workspacerolebindings', 'iam.platform.io'],
      ['update', 'workspaceroles', 'iam.platform.io'],
      ['watch', 'rolebases', 'iam.platform.io'],
      ['delete', 'namespaces'],
      ['patch', 'namespaces'],
      ['create', 'roles', 'rbac.authorization.k8s.io', namespace],
      ['escalate', 'roles', 'rbac.authorization.k8s.io', namespace],
      ['create', 'rolebindings', 'rbac.authorization.k8s.io', namespace],
      // The IAM API: a member removed from a workspace loses their bindings in its projects.
      ['delete', 'rolebindings', 'rbac.authorization.k8s.io', namespace],
      // The RBAC reconciler: the platform's roles and bindings as ClusterRoles and their bindings.
      ['create', 'clusterroles', 'rbac.authorization.k8s.io'],
      ['escalate', 'clusterroles', 'rbac.authorization.k8s.io'],
      ['bind', 'clusterroles', 'rbac.authorization.k8s.io'],
      ['create', 'clusterrolebindings', 'rbac.authorization.k8s.io'],
      ['update', 'rolebindings', 'rbac.authorization.k8s.io', namespace],
      // The groups API.
      ['watch', 'groups', 'iam.platform.io'],
      ['create', 'groups', 'iam.platform.io'],
      ['update', 'groups', 'iam.platform.io'],
      ['delete', 'groups', 'iam.platform.io'],
      ['list', 'groupbindings', 'iam.platform.io'],
      ['create', 'groupbindings', 'iam.platform.io'],
      ['delete', 'groupbindings', 'iam.platform.io'],
      // Leader election, in the release's namespace.
      ['create', 'leases', 'coordination.k8s.io', namespace],
    ];
    const refused: [string, string, string?, string?][] = [
      ['delete', 'nodes'],
      ['patch', 'nodes'],
      ['get', 'secrets', '', namespace],
      ['create', 'pods', '', namespace],
      ['update', 'deployments', 'apps', namespace],
      ['delete', 'jobs', 'batch', namespace],
      ['create', 'services', '', namespace],
      ['list', 'configmaps', '', namespace],
      ['impersonate', 'serviceaccounts', '', namespace],
      ['impersonate', 'uids', 'authentication.k8s.io'],
      ['escalate', 'clusterrolebindings', 'rbac.authorization.k8s.io'],
      ['patch', 'globalroles', 'iam.platform.io'],
      ['list', 'customresourcedefinitions', 'apiextensions.k8s.io'],
      ['list', 'users', 'iam.other.io'],
      ['patch', 'users', 'iam.platform.io'],
      ['delete', 'loginthrottles', 'iam.platform.io'],
      ['deletecollection', 'sessions', 'iam.platform.io'],
      ['deletecollection', 'workspacetemplates', 'tenant.platform.io'],
      ['deletecollection', 'namespaces'],
      ['delete', 'roles', 'rbac.authorization.k8s.io', namespace],
      ['bind', 'roles', 'rbac.authorization.k8s.io', namespace],
      ['patch', 'groups', 'iam.platform.io'],
      ['update', 'groupbindings', 'iam.platform.io'],
      ['deletecollection', 'groupbindings', 'iam.platform.io'],
      ['create', 'leases', 'coordination.k8s.io', 'default'],
      ['update', 'leases', 'coordination.k8s.io', 'kube-system'],
    ];
    for (const [verb, resource, group, ns] of allowed)
      assert.equal(await canI(verb, resource, group, ns), true, `${verb} ${resource}.${group ?? ''}`);
    for (const [verb, resource, group, ns] of refused)
      assert.equal(await canI(verb, resource, group, ns), false, `${verb} ${resource}.${group ?? ''}`);

    // Real requests with the token, not only the access review.
    assert.match(await tools.kubectl(['get', 'nodes', '-o', 'name'], { kubeconfig }), /^$|^node\//m);
    await assert.rejects(
      tools.kubectl(['get', 'secrets', `--namespace=${namespace}`], { kubeconfig }),
      /Forbidden.*system:serviceaccount:.*:chart-e2e.*cannot list resource "secrets"/s,
    );
  });
});

describe('plain manifests in deploy/', () => {
  let tools: ChartTools;
  const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
  const manifests = path.join(repoRoot, 'deploy/platform-apiserver.yaml');

  before(() => {
    tools = new ChartTools(cp);
  });
  after(() => tools.cleanup());

  test('are in sync with the chart (deploy/render-manifests.sh --check)', async () => {
    const { stderr } = await execFileAsync('bash', [
      path.join(repoRoot, 'deploy/render-manifests.sh'),
      '--check',
    ]);
    assert.match(stderr, /is up to date/);
  });

  test('hold no secret, and the kube-apiserver accepts them', async () => {
    const text = readFileSync(manifests, 'utf8');
    const objects = parseObjects(text);
    assert.equal(objects.filter((o) => o.kind === 'Secret').length, 0);
    assert.doesNotMatch(text, /PRIVATE KEY|password: [A-Za-z0-9+/=]{8,}/);
    const namespace = findObject(objects, 'Namespace').metadata.name;
    assert.equal(namespace, 'platform-system');
    const volumes = spec<DeploymentSpec>(findObject(objects, 'Deployment')).template.spec.volumes;
    assert.deepEqual(
      volumes.filter((v) => v.secret).map((v) => v.secret!.secretName),
      ['platform-apiserver-signing-keys', 'platform-apiserver-admin'],
    );

    // A server-side dry run of namespaced objects needs their namespace to exist for real.
    await tools.kubectl(['create', 'namespace', namespace]);
    try {
      const applied = await dryRunApply(tools, text, namespace);
      assert.equal(applied.length, objects.length, applied.join('\n'));
      for (const line of applied) assert.match(line, /(created|configured|unchanged) \(server dry run\)$/);
    } finally {
      await tools.deleteNamespace(namespace);
    }
  });
});

describe('the helm commands of docs/deployment.md and the README, as written', () => {
  let tools: ChartTools;
  const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

  before(() => {
    tools = new ChartTools(cp);
  });
  after(() => tools.cleanup());

  /** The `helm …` commands of a page's "Install with Helm" section, continuation lines joined, split into words like a shell would. */
  function helmCommands(page: string): string[][] {
    const text = readFileSync(path.join(repoRoot, page), 'utf8');
    const start = text.indexOf('## Install with Helm');
    assert.ok(start >= 0, `${page} has an "Install with Helm" section`);
    const end = text.indexOf('\n## ', start + 1);
    const section = text.slice(start, end < 0 ? undefined : end);
    return section
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('helm '))
      .map((l) => [...l.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!).slice(1));
  }

  test("the README's helm install is the deployment guide's", () => {
    const install = (page: string) => helmCommands(page).filter((c) => c[0] === 'install');
    assert.equal(install('docs/deployment.md').length, 1);
    assert.deepEqual(install('README.md'), install('docs/deployment.md'));
  });

  test('helm install as written passes a server-side dry run and prints the in-cluster URL', async () => {
    const install = helmCommands('docs/deployment.md').find((c) => c[0] === 'install');
    assert.ok(install, 'the section has a helm install command');
    assert.ok(install.includes('charts/platform-apiserver'));
    const out = await tools.helm([
      ...install.map((w) => (w === 'charts/platform-apiserver' ? chartDir : w)),
      '--dry-run=server',
    ]);
    assert.match(out, /STATUS: pending-install/);
    assert.match(out, /http:\/\/platform\.platform-system\.svc\n/);
    assert.match(out, /kubectl -n platform-system get secret platform-admin/);
  });

  test('the Ingress upgrade as written renders the Ingress, TLS, the external URL and the trusted proxies', async () => {
    const upgrade = helmCommands('docs/deployment.md').find((c) => c[0] === 'upgrade');
    assert.ok(upgrade, 'the section has a helm upgrade command');
    // Rendered alone (no release to reuse values from): the command's own values.
    const args = upgrade
      .slice(1)
      .filter((w) => w !== '--reuse-values')
      .map((w) => (w === 'charts/platform-apiserver' ? chartDir : w));
    const objects = parseObjects(await tools.helm(['template', ...args]));
    const ingress = findObject(objects, 'Ingress');
    assert.equal(ingress.metadata.namespace, 'platform-system');
    assert.deepEqual(spec<{ tls: unknown }>(ingress).tls, [
      { hosts: ['platform.example.com'], secretName: 'platform-tls' },
    ]);
    const config = loadRenderedConfig(objects);
    assert.deepEqual(config.http.trustedProxies, ['10.244.0.0/16']);
    assert.equal(config.auth.publicUrl, 'https://platform.example.com');
  });
});
