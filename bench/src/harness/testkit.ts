import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BenchError } from './bench-error'
import { root } from './paths'

/**
 * A module of the test kit's build (`packages/testkit/dist/<name>.js`: `rgw`, `tls`, `free-port`), loaded at
 * run time: the test kit itself exports TypeScript sources, which the bench's bundle leaves out.
 */
export async function testkitModule<T>(name: 'rgw' | 'tls' | 'free-port'): Promise<T> {
  const path = join(root, 'packages', 'testkit', 'dist', `${name}.js`)
  if (!existsSync(path)) {
    throw new BenchError(`${relative(root, path)} is missing: build first (npm run build)`)
  }
  return (await import(pathToFileURL(path).href)) as T
}
