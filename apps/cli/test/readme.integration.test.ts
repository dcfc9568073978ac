import { spawn } from 'node:child_process'
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fetchAs, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_MAIN, CliUser } from './support/cairn'

/**
 * This package's README, run as a reader would: every fenced block after a
 * `<!-- readme-test: run cli -->` marker, in order, in one bash, with `cairn` on PATH (the built
 * program), a HOME of its own, and `data/` the server's data directory, as in a checkout after
 * `npm start`. The one change made to the text: the server listens on a free port, not 8080.
 */
function blocksOf(text: string, port: number): string[] {
  const marker = /<!-- readme-test: run ([^>]+?) -->\s*\n\s*```[a-z]*\n([\s\S]*?)```/g
  return [...text.matchAll(marker)]
    .filter(([, scenarios]) => (scenarios ?? '').split(/\s+/).includes('cli'))
    .map(([, , body]) => (body ?? '').replaceAll('localhost:8080', `127.0.0.1:${String(port)}`))
}

describe("the CLI README's own commands", () => {
  const server = useServer({ auth: true })
  let user: CliUser

  beforeAll(async () => {
    user = await CliUser.create()
  })
  afterAll(async () => {
    await user.dispose()
  })

  it('runs: login, auth status and switch, --version, cairn audit, cairn api', async () => {
    const blocks = blocksOf(
      await readFile(new URL('../README.md', import.meta.url), 'utf8'),
      server.port,
    )
    expect(blocks.length).toBeGreaterThan(1)
    const bin = join(user.home, 'bin')
    await mkdir(bin)
    await writeFile(
      join(bin, 'cairn'),
      `#!/bin/sh\nexec '${process.execPath}' '${CLI_MAIN}' "$@"\n`,
    )
    await chmod(join(bin, 'cairn'), 0o755)
    const dir = join(user.home, 'checkout')
    await mkdir(dir)
    await symlink(server.dataDir, join(dir, 'data'))
    const script = ['set -euo pipefail', ...blocks].join('\n')
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn('bash', ['-c', script], {
        cwd: dir,
        env: user.env({ PATH: `${bin}:${process.env['PATH'] ?? ''}` }),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
      child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
      child.on('error', reject)
      child.on('close', (code) => {
        resolve({ code, output })
      })
    })
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain(`${server.url} (default)\n  logged in as local-admin`)
    expect(run.output).toContain(`Commands now use ${server.url} when none is named.`)
    expect(run.output).toMatch(/^cairn \d+\.\d+\.\d+/m)
    // Into a pipe, answers are printed as they came, without a newline of their own.
    expect(run.output).toContain('HTTP/1.1 200 OK\ncache-control: no-store\n')
    expect(run.output).toContain('team/api-demo\n{"error":"unit_not_found"')
    expect(run.output).toContain('exit code 1')
    expect((await fetchAs(server, '/v1/units/team/api-demo', server.token)).status).toBe(404)
  })
})
