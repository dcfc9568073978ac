import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_MAIN, type Run } from './support/cairn'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
/** The checkout's `cairn`, which Terraform's credential_process and scripts run. */
const WRAPPER = join(ROOT, 'cairn')

/** Runs `file args` to its end, in a HOME of its own, with stdin closed. */
function run(file: string, args: string[], home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: process.env['PATH'] ?? '', HOME: home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(deadline)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('./cairn, the CLI of a checkout', () => {
  let home: string
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'cairn-wrapper-home-'))
  })
  afterAll(() => rm(home, { recursive: true, force: true }))

  // The suites test the build the global setup made: what they run in this checkout (`npm start`,
  // `./cairn`, `npm run pack`) uses it as it is and never builds under another suite's servers.
  it('runs under the mark of the build the tier tests, which what the suites spawn inherits', () => {
    expect(process.env['CAIRN_TESTED_BUILD']).toBe(ROOT.replace(/\/$/, ''))
  })

  // vitest's global setup has just built the workspace and recorded it, as `npm run build` does.
  it.each([[['--help']], [['unit', 'ls', '--help']], [['creds', '--json', '--help']]])(
    'prints what the built CLI prints for %j and nothing of a build, when no source changed since the last one',
    async (args) => {
      const direct = await run(process.execPath, [CLI_MAIN, ...args], home)
      expect(direct.stdout).not.toBe('')
      expect(await run(WRAPPER, args, home)).toEqual(direct)
    },
  )
})
