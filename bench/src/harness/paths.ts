import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The repository's root: the nearest folder up with pnpm-workspace.yaml. Found by walking up,
 * because this file runs both from its source (the tests) and bundled into bench/dist/main.js.
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'pnpm-workspace.yaml'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('bench: cannot find the repository root')
    dir = parent
  }
  return dir
}

export const root = findRoot()
export const serverMain = join(root, 'apps', 'server', 'dist', 'main.js')
/** The built `cairn` CLI. */
export const cliMain = join(root, 'apps', 'cli', 'dist', 'main.js')
export const baselineMain = join(root, 'bench', 'dist', 'baseline-server.js')
/** Generated states and CPU profiles, kept between runs (gitignored). */
export const cacheDir = join(root, '.bench')
export const resultsDir = join(root, 'bench', 'results')
