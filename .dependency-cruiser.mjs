// The layering of src/ (CONTRIBUTING.md, "Layout"), checked by `npm run lint`.
// One folder per feature; a feature's edge files (*-routes.ts, *-module.ts, *-api.ts) speak HTTP,
// everything else in it is domain code that throws ApiError and knows no transport.
const FEATURES =
  'tokens|access|list-query|nodes|kube-proxy|log-query|health|build-info|platform-config|iam|tenant|monitoring|resources|reconcile';
const DOMAIN = `^src/(${FEATURES}|cluster|config|observability)/`;
const EDGE_FILE = '-(routes|module|api)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'kernel-imports-nothing-of-ours',
      comment: 'src/kernel/ is the transport-neutral core every folder may use; it uses none of them.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: { path: '^src/', pathNot: '^src/kernel/' },
    },
    {
      name: 'domain-code-knows-no-http',
      comment:
        "Domain code throws ApiError and never imports express or src/http/; only a feature's edge files " +
        '(*-routes.ts, *-module.ts, *-api.ts) do.',
      severity: 'error',
      from: { path: DOMAIN, pathNot: EDGE_FILE },
      to: { path: ['^src/http/', '(^|/)node_modules/(express|@types/express)/'] },
    },
    {
      name: 'http-knows-no-feature',
      comment: 'src/http/ sits below the features: it never imports one (features plug in through modules).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: `^src/(${FEATURES})/` },
    },
    {
      name: 'no-cycles-between-folders',
      comment: 'Folders depend on each other one way only: no folder reaches back into one that imports it.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles between files either.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
