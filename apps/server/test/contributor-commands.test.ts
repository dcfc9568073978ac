import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

/** The pages a newcomer reads for how to build and test: the README, CONTRIBUTING.md, docs/. */
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
]

const scripts = Object.keys(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts,
)

/** Every `npm run <name>` a page shows, with the page. */
function npmRuns(): [string, string][] {
  return PAGES.flatMap((page) =>
    [...readFileSync(join(ROOT, page), 'utf8').matchAll(/npm run ([a-z0-9:-]+)/g)].map(
      ([, name]) => [page, name ?? ''] as [string, string],
    ),
  )
}

/** Every code span of CONTRIBUTING.md that names a file or folder of the checkout. */
function contributingPaths(): string[] {
  const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8')
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map(([, span]) => span ?? '')
    .filter((span) => /^(\.?[a-z-]+\/|[\w.-]+\.(ts|cjs|mjs|md|json)$)/.test(span))
    .filter((span) => !span.includes('*') && !span.includes('<'))
}

// `npm test` itself is the whole run, so it cannot run inside it; what the pages promise about the
// loop is held here: each script they name exists, and each path CONTRIBUTING.md names is there.
describe('the commands the pages show contributors', () => {
  it('name only scripts the root package.json has', () => {
    const runs = npmRuns()
    expect(runs.map(([, name]) => name)).toContain('test:unit')
    for (const [page, name] of runs) expect(scripts, `${page}: npm run ${name}`).toContain(name)
  })

  it('name only files and folders the checkout has', () => {
    const paths = contributingPaths()
    expect(paths).toContain('apps/server/src/config/settings.ts')
    for (const path of paths) expect(existsSync(join(ROOT, path)), path).toBe(true)
  })
})
