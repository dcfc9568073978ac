import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The built CLI, as `./cairn` runs it. The root vitest config's global setup builds the workspace
 * before any suite runs, so this is today's code.
 */
export const CLI_MAIN = fileURLToPath(new URL('../../../cli/dist/main.js', import.meta.url))

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/** One person at a terminal: the CLI with a HOME of its own, so no saved login leaks in or out. */
export class CliSession {
  readonly home: string

  private constructor(home: string) {
    this.home = home
  }

  static async create(): Promise<CliSession> {
    if (!existsSync(CLI_MAIN)) {
      throw new Error(
        `${CLI_MAIN} is missing: run the suites through vitest with the root config, which builds it first, or run npm run build`,
      )
    }
    return new CliSession(await mkdtemp(join(tmpdir(), 'cairn-cli-home-')))
  }

  /** Runs `cairn <args>` to its end with `input` on stdin; resolves whatever the exit code. */
  run(args: string[], input?: string): Promise<CliRun> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [CLI_MAIN, ...args],
        {
          env: { PATH: process.env['PATH'] ?? '', HOME: this.home, NO_COLOR: '1' },
          timeout: 60_000,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
          resolve({ code, stdout, stderr })
        },
      )
      child.stdin?.end(input)
    })
  }

  async dispose(): Promise<void> {
    await rm(this.home, { recursive: true, force: true })
  }
}
