import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { BenchError } from './bench-error'

/** What Linux says of a process's memory and CPU (/proc). */

export interface Memory {
  /** VmHWM: the peak resident set since the start or the last `resetPeak`, in bytes. */
  readonly peak: number
  /** VmRSS: the resident set now, in bytes. */
  readonly rss: number
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name: string) => {
    const found = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    if (found === null) throw new BenchError(`no ${name} in /proc/${pid}/status`)
    return Number(found[1]) * 1024
  }
  return { peak: field('VmHWM'), rss: field('VmRSS') }
}

/** Resets VmHWM to the current RSS (5 into clear_refs, Linux 4.0 on). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
}

/** utime + stime of a /proc stat line, in milliseconds (clock ticks of 10 ms on Linux). */
export function cpuMsOfStat(stat: string): number {
  // The command name, in parentheses, may hold spaces: the fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The CPU time a process has used, all its threads, user and system, in milliseconds. */
export function cpuMsOf(pid: number): number {
  return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))
}

/** The CPU time of each thread of this process, in milliseconds, by thread ID. */
export function threadCpuMs(): Map<string, number> {
  const cpu = new Map<string, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    cpu.set(tid, cpuMsOfStat(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')))
  }
  return cpu
}
