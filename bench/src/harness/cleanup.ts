import { rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Something a bench started that must not outlive it: a server, a Ceph cluster. `stop()` releases
 * it and waits; `kill()` is the synchronous last resort when the process exits.
 */
export interface Resource {
  stop(): Promise<void>
  kill(): void
}

// Every child process and temporary directory is registered here and released on the way out,
// whatever the way out is: the end of the run, an error, Ctrl-C.
const resources = new Set<Resource>()
const temporaryDirs = new Set<string>()
let interrupted = false

/** Registers `resource` for the cleanup; the returned function forgets it once it is stopped. */
export function track(resource: Resource): () => void {
  resources.add(resource)
  return () => resources.delete(resource)
}

export async function makeTemporaryDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temporaryDirs.add(dir)
  return dir
}

export async function removeTemporaryDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
  temporaryDirs.delete(dir)
}

/** Stops everything still registered, then removes the temporary directories. */
export async function cleanUp(): Promise<void> {
  await Promise.allSettled([...resources].map((resource) => resource.stop()))
  await Promise.allSettled([...temporaryDirs].map(removeTemporaryDir))
}

/** Whether a signal is stopping the bench (its error is then not worth reporting). */
export function isInterrupted(): boolean {
  return interrupted
}

let installed = false

/**
 * On SIGINT or SIGTERM: stop everything and exit 130. On exit, whatever is left is killed and
 * removed synchronously.
 */
export function installCleanup(): void {
  if (installed) return
  installed = true
  process.on('exit', () => {
    for (const resource of resources) resource.kill()
    for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true })
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true
      process.stderr.write(`bench: ${signal}, stopping the servers\n`)
      void cleanUp().finally(() => process.exit(130))
    })
  }
}
