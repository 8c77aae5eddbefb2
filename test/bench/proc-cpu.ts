import { readFileSync } from 'node:fs';

/** utime + stime of a /proc stat file (a process's or a thread's), in ms. */
export function statCpuMs(file: string): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks (USER_HZ) to ms
}

/** CPU seconds (user + system) a process has used so far; NaN once it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    return statCpuMs(`/proc/${pid}/stat`) / 1000;
  } catch {
    return NaN;
  }
}
