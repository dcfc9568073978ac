import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

interface Manifest {
  name: string
  bin?: string | Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

/** Every package of the workspace (`pnpm-workspace.yaml`: packages/* and apps/*), by folder. */
function workspacePackages(): { dir: string; manifest: Manifest }[] {
  return ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(group, entry.name))
      .map((dir) => ({
        dir,
        manifest: JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest,
      })),
  )
}

/** The files a manifest's `bin` names, relative to the checkout's root. */
function binTargets(dir: string, bin: Manifest['bin']): string[] {
  if (bin === undefined) return []
  const targets = typeof bin === 'string' ? [bin] : Object.values(bin)
  return targets.map((target) => normalize(join(dir, target)))
}

/** Whether git tracks `path`: a file a fresh clone has before anything is built. */
function tracked(path: string): boolean {
  const result = spawnSync('git', ['ls-files', '--error-unmatch', '--', path], { cwd: ROOT })
  return result.status === 0
}

describe('the workspace', () => {
  it('links no command whose file a fresh clone lacks into another package', () => {
    // pnpm links a dependency's bin into the dependent's node_modules/.bin at install time, which
    // comes before the build: a bin that names a build output warns "Failed to create bin".
    const packages = workspacePackages()
    const linked = packages.filter(({ manifest }) =>
      packages.some(({ manifest: other }) =>
        [other.dependencies, other.devDependencies, other.optionalDependencies].some(
          (dependencies) => dependencies?.[manifest.name] !== undefined,
        ),
      ),
    )
    expect(linked.map(({ manifest }) => manifest.name)).toContain('@cairn/server')
    const missing = linked.flatMap(({ dir, manifest }) =>
      binTargets(dir, manifest.bin)
        .filter((target) => !tracked(target))
        .map((target) => `${manifest.name}: ${target}`),
    )
    expect(missing).toEqual([])
  })
})
