import { count, field, list, text, type KubeObject } from './kube-object.ts';

/**
 * The `status` classes the original computes per kind (its v1alpha3 resource getters), used by the
 * `?status=` filter and by the abnormal-workloads card.
 */

export const WORKLOAD_STATUSES = ['stopped', 'running', 'updating'] as const;
export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];

/** Deployments: from the status's replica counts. */
export function deploymentStatus(object: KubeObject): WorkloadStatus {
  const ready = count(field(object, 'status', 'readyReplicas'));
  const replicas = count(field(object, 'status', 'replicas'));
  if (ready === 0 && replicas === 0) return 'stopped';
  return ready === replicas ? 'running' : 'updating';
}

/** StatefulSets: ready replicas against the desired ones in the spec (no desired count: stopped). */
export function replicasStatus(object: KubeObject): WorkloadStatus {
  const desired = field(object, 'spec', 'replicas');
  if (typeof desired !== 'number') return 'stopped';
  const ready = count(field(object, 'status', 'readyReplicas'));
  if (ready === 0 && desired === 0) return 'stopped';
  return ready === desired ? 'running' : 'updating';
}

export const statefulSetStatus = replicasStatus;

export function daemonSetStatus(object: KubeObject): WorkloadStatus {
  const desired = count(field(object, 'status', 'desiredNumberScheduled'));
  const ready = count(field(object, 'status', 'numberReady'));
  if (desired === 0 && ready === 0) return 'stopped';
  return desired === ready ? 'running' : 'updating';
}

export const JOB_STATUSES = ['completed', 'failed', 'running'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Jobs: the first Complete or Failed condition that is True, else running. */
export function jobStatus(object: KubeObject): JobStatus {
  for (const condition of list(field(object, 'status', 'conditions'))) {
    if (field(condition, 'status') !== 'True') continue;
    const type = field(condition, 'type');
    if (type === 'Complete') return 'completed';
    if (type === 'Failed') return 'failed';
  }
  return 'running';
}

/**
 * The original's abnormal-workloads card asks its older (v1alpha2) job rule: active pods → running,
 * else failed pods → failed, else succeeded → completed, else failed (a Job nobody has run yet counts
 * as failed there too).
 */
export function legacyJobFailed(object: KubeObject): boolean {
  if (count(field(object, 'status', 'active')) > 0) return false;
  if (count(field(object, 'status', 'failed')) > 0) return true;
  return count(field(object, 'status', 'succeeded')) === 0;
}

export const POD_STATUSES = ['Waiting', 'Running', 'Error', 'Completed'] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

/** The reason `kubectl get pods` shows in its STATUS column, as the original derives it. */
export function podReason(pod: KubeObject): string {
  let reason = text(field(pod, 'status', 'reason')) || text(field(pod, 'status', 'phase')) || '';
  const initStatuses = list(field(pod, 'status', 'initContainerStatuses'));
  const initCount = list(field(pod, 'spec', 'initContainers')).length;
  let initializing = false;
  for (const [i, container] of initStatuses.entries()) {
    const terminated = field(container, 'state', 'terminated');
    const waiting = field(container, 'state', 'waiting');
    if (terminated && count(field(terminated, 'exitCode')) === 0) continue;
    if (terminated) {
      const why = text(field(terminated, 'reason'));
      const signal = count(field(terminated, 'signal'));
      reason = why
        ? `Init:${why}`
        : signal
          ? `Init:Signal:${signal}`
          : `Init:ExitCode:${count(field(terminated, 'exitCode'))}`;
    } else {
      const why = text(field(waiting, 'reason'));
      reason = why && why !== 'PodInitializing' ? `Init:${why}` : `Init:${i}/${initCount}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    const statuses = list(field(pod, 'status', 'containerStatuses'));
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i];
      const waiting = text(field(container, 'state', 'waiting', 'reason'));
      const terminated = field(container, 'state', 'terminated');
      if (waiting) reason = waiting;
      else if (terminated && text(field(terminated, 'reason'))) reason = text(field(terminated, 'reason'))!;
      else if (terminated) {
        const signal = count(field(terminated, 'signal'));
        reason = signal ? `Signal:${signal}` : `ExitCode:${count(field(terminated, 'exitCode'))}`;
      } else if (field(container, 'ready') === true && field(container, 'state', 'running'))
        hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = podReady(pod) ? 'Running' : 'NotReady';
  }
  if (field(pod, 'metadata', 'deletionTimestamp')) {
    reason = field(pod, 'status', 'reason') === 'NodeLost' ? 'Unknown' : 'Terminating';
  }
  return reason;
}

function podReady(pod: KubeObject): boolean {
  return list(field(pod, 'status', 'conditions')).some(
    (c) => field(c, 'type') === 'Ready' && field(c, 'status') === 'True',
  );
}

/** The original's pod status class: Running, Error, Completed, else Waiting. */
export function podStatus(pod: KubeObject): PodStatus {
  const reason = podReason(pod);
  switch (reason) {
    case 'Running':
      return 'Running';
    case 'Failed':
    case 'Error':
      return 'Error';
    case 'Completed':
      return 'Completed';
    case 'Succeeded': {
      const readyReasons = list(field(pod, 'status', 'conditions'))
        .filter((c) => field(c, 'type') === 'Ready')
        .map((c) => field(c, 'reason'));
      return readyReasons.every((r) => r === 'PodCompleted') ? 'Completed' : 'Waiting';
    }
    default:
      return reason.startsWith('OutOf') ? 'Error' : 'Waiting';
  }
}
