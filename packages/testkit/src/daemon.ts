import { spawn } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { readFile } from 'node:fs/promises'

import { isRunning } from './is-running'
import { waitFor } from './wait-for'

/** A long-running process started detached, writing to its own log file. @internal */
export interface Daemon {
  readonly name: string
  readonly pid: number
  /** Where its stdout and stderr go. */
  readonly logFile: string
  /** Whether it has exited (and been reaped). */
  exited(): boolean
  /** How it exited, for an error message. */
  exitReason(): string
}

/**
 * Starts `file` detached, stdin from /dev/null and stdout and stderr appended to `logFile`. A
 * daemon that inherits a pipe holds it open as long as it lives, and a test runner reading that pipe
 * would then wait forever: hence a file of its own. Unreferenced, so a forgotten daemon never keeps
 * the test process alive; `killDaemon` is the way to end it. @internal
 */
export function startDaemon(name: string, file: string, args: string[], logFile: string): Daemon {
  const log = openSync(logFile, 'a')
  let exit: string | undefined
  try {
    const child = spawn(file, args, { detached: true, stdio: ['ignore', log, log] })
    child.once('error', (error) => (exit ??= `failed to start: ${error.message}`))
    child.once('exit', (code, signal) => (exit = signal ?? `code ${code}`))
    child.unref()
    if (child.pid === undefined) throw new Error(`${name}: ${file} could not be started`)
    const pid = child.pid
    return {
      name,
      pid,
      logFile,
      exited: () => exit !== undefined || !isRunning(pid),
      exitReason: () => exit ?? 'gone',
    }
  } finally {
    closeSync(log)
  }
}

/** SIGKILLs a daemon by its PID and waits until it is gone. @internal */
export async function killDaemon(daemon: Daemon, timeoutMs = 10_000): Promise<void> {
  try {
    process.kill(daemon.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
  await waitFor(`${daemon.name} (PID ${daemon.pid}) to exit`, () => daemon.exited(), timeoutMs)
}

/** The last lines of a log file, for an error message; empty when it cannot be read. @internal */
export async function tailOf(file: string, lines = 40): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}
