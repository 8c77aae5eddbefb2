import { ANONYMOUS, jsonResponse, type ApiDescription } from '../http/openapi-components.ts';

const text = (description: string, extra: Record<string, unknown> = {}) => ({
  type: 'string',
  description,
  ...extra,
});

/** `/kapis/version`: anonymous, in the shape of the system we re-create, plus our own build. */
export function versionApi(): ApiDescription {
  return {
    schemas: {
      ServerVersion: {
        type: 'object',
        required: [
          'gitVersion',
          'gitMajor',
          'gitMinor',
          'gitCommit',
          'gitTreeState',
          'buildDate',
          'nodeVersion',
          'compiler',
          'platform',
          'platformApiserver',
        ],
        properties: {
          gitVersion: text(
            "With `platformName: kubesphere`, the original's release whose API this server implements (`compatibleRelease`, `v3.4.1`), which its clients choose paths and features by; otherwise this server's version: the nearest `v*` git tag (git describe), else `v<package.json version>`.",
            { pattern: '^v\\d+\\.\\d+' },
          ),
          gitMajor: text('Major version, from gitVersion.', { pattern: '^\\d+$' }),
          gitMinor: text('Minor version, from gitVersion.', { pattern: '^\\d+$' }),
          gitCommit: text('Full commit hash the server was built from, or `unknown`.'),
          gitTreeState: { enum: ['clean', 'dirty', 'unknown'] },
          buildDate: text('When it was built (RFC 3339, UTC).'),
          nodeVersion: text('Node.js running the server.', { pattern: '^v\\d+\\.' }),
          compiler: text('`tsc <version>` for a built server; type stripping when run from source.'),
          platform: text('`<os>/<arch>`, in Go spelling (`linux/amd64`).'),
          kubernetes: {
            type: 'object',
            description:
              "The kube-apiserver's own `/version` object (`major`, `minor`, `gitVersion`, …); absent when it cannot be reached.",
          },
          platformApiserver: {
            type: 'object',
            description: "This server's own build, whatever the platform name.",
            required: ['version', 'gitCommit', 'buildDate'],
            properties: {
              version: text('Nearest `v*` git tag (git describe), else `v<package.json version>`.', {
                pattern: '^v\\d+\\.\\d+',
              }),
              gitCommit: text('Full commit hash, or `unknown`.'),
              buildDate: text('When it was built (RFC 3339, UTC).'),
            },
          },
        },
      },
    },
    paths: {
      '/kapis/version': {
        get: {
          operationId: 'getKapisVersion',
          tags: ['health'],
          summary:
            "Version of the API served (the original's release under its platform name), of this server's build and of the kube-apiserver",
          security: ANONYMOUS,
          responses: {
            '200': jsonResponse('Versions.', { $ref: '#/components/schemas/ServerVersion' }),
          },
        },
      },
    },
  };
}
