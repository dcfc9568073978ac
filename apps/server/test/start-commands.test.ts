import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
/** The `node` flag every way of running the server passes (docs/deployment.md, "The built server"). */
const FLAG = '--initial-heap-size=64'
/** Where the server is started from, and how each names it. */
const PLACES = [
  'package.json',
  'Dockerfile',
  'deploy/cairn.service',
  'docs/deployment.md',
  'apps/server/README.md',
] as const

/** Each line of `text` that runs the server with `node`: its entry, or `npm start`'s script. */
function startLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /\bnode\b/.test(line))
    .filter((line) => /apps\/server\/dist\/main\.js|scripts\/start\.mjs/.test(line))
}

describe('the ways of starting the server', () => {
  it.each(PLACES)('%s starts it with a first heap of 64 MiB', (place) => {
    const lines = startLines(readFileSync(join(ROOT, place), 'utf8'))
    expect(lines.length, `no start command found in ${place}`).toBeGreaterThan(0)
    for (const line of lines) expect(line, place).toContain(FLAG)
  })

  it('benchmarks start it as these do', async () => {
    const processes = (await import(
      join(ROOT, 'bench', 'src', 'harness', 'server-process.ts')
    )) as {
      serverNodeFlags: string[]
    }
    expect(processes.serverNodeFlags).toEqual([FLAG])
  })
})
