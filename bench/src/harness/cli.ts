import { spawn } from 'node:child_process'
import { BenchError } from './bench-error'
import { cliMain } from './paths'

/** A run of the built CLI: its time, its peak resident set and what it printed. */
export interface CliRun {
  readonly ms: number
  /** The process's peak resident set, bytes (GNU time's maximum resident set size). */
  readonly peak: number
  readonly stdout: string
}

/**
 * Runs the built CLI to its end under GNU time, `env` added to the bench's own environment.
 *
 * @throws BenchError naming the command and the end of what it said on failure
 */
export async function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const started = performance.now()
  const child = spawn('/usr/bin/time', ['-f', 'peak-kib=%M', process.execPath, cliMain, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const ms = performance.now() - started
  if (code !== 0) {
    throw new BenchError(
      `cairn ${args.join(' ')} failed (${code ?? 'signal'}): ${stderr.slice(-600)}`,
    )
  }
  const peak = /peak-kib=(\d+)/.exec(stderr)
  return { ms, peak: Number(peak?.[1] ?? Number.NaN) * 1024, stdout }
}
