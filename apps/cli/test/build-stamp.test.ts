import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

interface Begun {
  startedAt: number
  files: string[]
}

/** The checkout's freshness check (`scripts/build-stamp.mjs`), which `./cairn` asks first. */
const { beginBuild, buildIsCurrent, recordBuild } = (await import(
  join(ROOT, 'scripts', 'build-stamp.mjs')
)) as {
  beginBuild: (root: string) => Begun
  buildIsCurrent: (root: string, outputs: string[]) => boolean
  recordBuild: (root: string, begun: Begun) => void
}

const OUTPUT = 'apps/cli/dist/main.js'
/** A moment well before the test: every file here was last saved then. */
const EARLIER = Date.now() - 3_600_000

/** A workspace's files. */
const FILES = [
  'package.json',
  'pnpm-lock.yaml',
  'tsconfig.base.json',
  'packages/core/package.json',
  'packages/core/src/units/unit.ts',
  'apps/cli/package.json',
  'apps/cli/src/main.ts',
  'bench/src/main.ts',
  OUTPUT,
]

describe('the record of the last whole build', () => {
  let root: string

  /** Writes a file last saved at `at`. */
  const write = (path: string, at = EARLIER) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), path)
    utimesSync(join(root, path), at / 1000, at / 1000)
  }
  /** A build that succeeded, begun now. */
  const build = () => {
    recordBuild(root, beginBuild(root))
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-build-stamp-'))
    for (const path of FILES) write(path)
    writeFileSync(join(root, 'turbo.json'), '{"globalDependencies": ["tsconfig.base.json"]}')
    writeFileSync(
      join(root, 'pnpm-workspace.yaml'),
      'packages:\n  - packages/*\n  - "apps/*"\n  - bench\n',
    )
    for (const path of ['turbo.json', 'pnpm-workspace.yaml'])
      utimesSync(join(root, path), EARLIER / 1000, EARLIER / 1000)
    mkdirSync(join(root, 'node_modules'))
  })
  afterEach(() => {
    rmSync(root, { recursive: true, force: true })
  })

  it('is current once a build begun after the last change has succeeded', () => {
    expect(buildIsCurrent(root, [OUTPUT])).toBe(false)
    const begun = beginBuild(root)
    // Not before it has succeeded.
    expect(buildIsCurrent(root, [OUTPUT])).toBe(false)
    recordBuild(root, begun)
    expect(buildIsCurrent(root, [OUTPUT])).toBe(true)
  })

  it.each([
    'packages/core/src/units/unit.ts',
    'apps/cli/src/main.ts',
    'bench/src/main.ts',
    'apps/cli/package.json',
    'pnpm-lock.yaml',
    'tsconfig.base.json',
  ])('is stale once %s is saved after the build began', (path) => {
    const begun = beginBuild(root)
    write(path, begun.startedAt + 1)
    recordBuild(root, begun)
    expect(buildIsCurrent(root, [OUTPUT])).toBe(false)
  })

  it('is stale once a source is removed, added or renamed, whatever its time', () => {
    build()
    rmSync(join(root, 'packages/core/src/units/unit.ts'))
    expect(buildIsCurrent(root, [OUTPUT])).toBe(false)
    build()
    write('apps/cli/src/new-command.ts')
    expect(buildIsCurrent(root, [OUTPUT])).toBe(false)
  })

  it('is stale when an output it needs is missing', () => {
    build()
    expect(buildIsCurrent(root, [OUTPUT, 'apps/server/dist/main.js'])).toBe(false)
  })

  it("takes no package's output, dependencies or turbo's logs for a source", () => {
    build()
    const later = Date.now() + 60_000
    write('apps/cli/dist/main.js', later)
    write('apps/cli/dist/main.js.map', later)
    write('apps/cli/node_modules/.bin/x', later)
    write('packages/core/.turbo/turbo-build.log', later)
    expect(buildIsCurrent(root, [OUTPUT])).toBe(true)
  })
})
