import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { makeTestCa, type TestCa } from './tls'

/** A suite's test CA, read in a test or in a hook that runs after its `beforeAll`. */
export interface SuiteCa extends TestCa {
  /** The server flags that make it serve HTTPS with this CA's certificate. */
  readonly serverArgs: string[]
}

/**
 * A throwaway certificate authority for the current suite, made in `beforeAll` and removed in
 * `afterAll`. Call it before `useServer(() => ({ args: ca.serverArgs, ... }))`, so that the CA
 * exists when the server starts and outlives it.
 */
export function useTestCa(): SuiteCa {
  let dir: string | undefined
  let ca: TestCa | undefined
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-test-ca-'))
    ca = await makeTestCa(dir)
  })
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })
  const current = (): TestCa => {
    if (ca === undefined) throw new Error('useTestCa: read the CA in a test or a later hook')
    return ca
  }
  return {
    get caPath() {
      return current().caPath
    },
    get certPath() {
      return current().certPath
    },
    get keyPath() {
      return current().keyPath
    },
    get ca() {
      return current().ca
    },
    get serverArgs() {
      return ['-tls-cert', current().certPath, '-tls-key', current().keyPath]
    },
  }
}
