import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
} from '../http/openapi-components.ts';

const quantities = { type: 'object', additionalProperties: { type: 'string' } } as const;
const namespace: Parameter = { name: 'namespace', in: 'path', required: true, schema: { type: 'string' } };
const common = {
  '401': statusResponse('No or invalid bearer token.'),
  '403': statusResponse('The kube-apiserver does not let the caller list what the card is made of.'),
  '503': statusResponse('The kube-apiserver cannot be reached.'),
  default: DEFAULT_STATUS_RESPONSE,
};

/** The v1alpha2 overview cards: components, a namespace's quota usage and its workloads not ready. */
export function overviewApi(ctx: ApiContext): ApiDescription {
  const base = `/kapis/resources.${ctx.platformName}.io/v1alpha2`;
  return {
    schemas: {
      ComponentStatus: {
        type: 'object',
        description: 'A Service with a selector in a system namespace, and the pods it selects.',
        required: ['name', 'namespace', 'selfLink', 'label', 'startedAt', 'totalBackends', 'healthyBackends'],
        properties: {
          name: { type: 'string' },
          namespace: { type: 'string' },
          selfLink: { type: 'string', description: 'Always empty, as in the original.' },
          label: {
            type: 'object',
            additionalProperties: { type: 'string' },
            description: "The Service's selector.",
          },
          startedAt: { type: 'string', format: 'date-time', description: "The Service's creation time." },
          totalBackends: { type: 'integer', minimum: 0 },
          healthyBackends: {
            type: 'integer',
            minimum: 0,
            description: 'Selected pods that are Running with every container ready.',
          },
        },
      },
      NamespaceQuota: {
        type: 'object',
        required: ['namespace', 'data'],
        properties: {
          namespace: { type: 'string' },
          data: {
            type: 'object',
            required: ['used'],
            properties: {
              hard: {
                ...quantities,
                description: 'Limits of the ResourceQuotas (the smallest per resource).',
              },
              used: {
                ...quantities,
                description:
                  'Usage from the ResourceQuotas, plus object counts (`count/pods`, `count/deployments.apps`, …) the quotas do not track.',
              },
              left: { ...quantities, description: '`hard - used`, never below zero.' },
            },
          },
        },
      },
      AbnormalWorkloads: {
        type: 'object',
        required: ['namespace', 'data'],
        properties: {
          namespace: { type: 'string' },
          data: {
            type: 'object',
            required: ['deployments', 'statefulsets', 'daemonsets', 'jobs', 'persistentvolumeclaims'],
            additionalProperties: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    paths: {
      [`${base}/components`]: {
        get: {
          operationId: 'listComponents',
          tags: ['resources'],
          summary: 'System components: Services of the system namespaces and their pods',
          security: BEARER,
          responses: {
            '200': jsonResponse('The components (empty where the system namespaces hold no Services).', {
              type: 'array',
              items: schemaRef('ComponentStatus'),
            }),
            ...common,
          },
        },
      },
      [`${base}/namespaces/{namespace}/quotas`]: {
        get: {
          operationId: 'getNamespaceQuota',
          tags: ['resources'],
          summary: "A namespace's quota limits and usage",
          security: BEARER,
          parameters: [namespace],
          responses: {
            '200': jsonResponse('Limits, usage and what is left.', schemaRef('NamespaceQuota')),
            ...common,
          },
        },
      },
      [`${base}/namespaces/{namespace}/abnormalworkloads`]: {
        get: {
          operationId: 'getAbnormalWorkloads',
          tags: ['resources'],
          summary: "How many of a namespace's workloads are not ready, per kind",
          security: BEARER,
          parameters: [namespace],
          responses: {
            '200': jsonResponse(
              'Deployments and StatefulSets with fewer ready replicas than desired, DaemonSets with fewer ready pods than scheduled, failed (or never started) Jobs, Pending or Lost PersistentVolumeClaims.',
              schemaRef('AbnormalWorkloads'),
            ),
            ...common,
          },
        },
      },
    },
  };
}
