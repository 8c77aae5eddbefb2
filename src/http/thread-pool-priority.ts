import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority (raises the nice value) of libuv's thread-pool threads, which run the
 * expensive work off the event loop: bcrypt comparisons, gzip of large bodies, file reads. Off the event
 * loop is not enough when the cores are few: with one bcrypt per core running, the event loop competes
 * for a core with them, and every other request waits its turn — a login storm doubles /healthz latency
 * on two cores. Niced, the pool still uses every idle cycle (logins go as fast as the cores allow) but
 * yields to the event loop when it has work. Linux only (threads are found in /proc/self/task by the
 * name libuv gives them); elsewhere, or without /proc, nothing happens.
 *
 * libuv starts all its pool threads on first use: call this after the pool has run something (the
 * password verifier's start-up hash does). Returns how many threads were changed.
 */
export function lowerThreadPoolPriority(nice: number, tasks = '/proc/self/task'): number {
  if (nice <= 0) return 0;
  // Relative to the process (the event loop's thread), and idempotent.
  const target = Math.min(19, os.getPriority() + nice);
  let changed = 0;
  for (const id of threadPoolThreadIds(tasks)) {
    try {
      // setpriority(2) with a thread id changes that thread only (Linux).
      os.setPriority(id, target);
      changed++;
    } catch {
      /* the thread went away, or the change is not permitted: leave it */
    }
  }
  return changed;
}

/**
 * The thread ids of libuv's pool in a process's task directory (`/proc/<pid>/task`), found by the name
 * libuv gives its threads; none without /proc.
 */
export function threadPoolThreadIds(tasks = '/proc/self/task'): number[] {
  let ids: string[];
  try {
    ids = readdirSync(tasks);
  } catch {
    return [];
  }
  return ids
    .filter((id) => {
      try {
        return readFileSync(`${tasks}/${id}/comm`, 'utf8').trim() === 'libuv-worker';
      } catch {
        return false; // the thread went away
      }
    })
    .map(Number);
}

/** lowerThreadPoolPriority, saying in the log what it changed. */
export function niceThreadPool(nice: number, logger: { info(message: string, fields: object): void }): void {
  const threads = lowerThreadPoolPriority(nice);
  if (threads > 0) logger.info('thread pool niced', { threads, nice });
}
