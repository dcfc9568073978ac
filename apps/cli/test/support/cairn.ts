import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The built CLI, as `npm run cli` runs it. The root vitest config's global setup builds the
 * workspace before any suite runs, so this is today's code.
 */
export const CLI_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url))

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** A user of the CLI: a HOME of its own, and nothing of the machine's environment that matters. */
export class CliUser {
  readonly home: string

  private constructor(home: string) {
    this.home = home
  }

  static async create(): Promise<CliUser> {
    if (!existsSync(CLI_MAIN))
      throw new Error(
        `${CLI_MAIN} is missing: run the suites through vitest with the root config, which builds it first, or run npm run build`,
      )
    return new CliUser(await mkdtemp(join(tmpdir(), 'cairn-home-')))
  }

  /** The environment the CLI runs in. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: this.home,
      NO_COLOR: '1',
      ...extra,
    }
    return env
  }

  /** Starts `cairn <args>`; the caller reads and waits. */
  spawn(args: string[], options: { env?: Record<string, string> } = {}): ChildProcess {
    return spawn(process.execPath, [CLI_MAIN, ...args], {
      env: this.env(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
  }

  /** Runs `cairn <args>` to its end, with `input` on stdin. */
  run(
    args: string[],
    options: { input?: string | Buffer; env?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, options.env === undefined ? {} : { env: options.env })
      const stdout: Buffer[] = []
      let stderr = ''
      child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
      child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text))
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`cairn ${args.join(' ')} did not finish:\n${stderr}`))
      }, options.timeoutMs ?? 60_000)
      child.on('error', reject)
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr })
      })
      child.stdin?.end(options.input)
    })
  }

  async dispose(): Promise<void> {
    await rm(this.home, { recursive: true, force: true })
  }
}
