import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { openFsStore } from '../storage/fs-store'
import { createMemoryStore } from '../storage/memory-store'
import type { ObjectStore } from '../storage/object-store'

/** A test file's stores: one of each driver, and the steps that undo each test. */
export interface StoreDrivers {
  /** For `describe.each`: the driver's name and a function that opens a fresh store of it. */
  drivers: [string, () => Promise<ObjectStore>][]
  /** Runs `cleanup` after the current test, before those registered earlier. */
  onCleanup: (cleanup: () => Promise<void> | void) => void
}

/**
 * The memory and fs stores for a test file that runs its cases on both. An fs store lives in a
 * new temporary directory named after `label`, closed and removed after its test. Call at the top
 * level of the test file: it registers the `afterEach` that cleans up.
 */
export function useStoreDrivers(label: string): StoreDrivers {
  const cleanups: (() => Promise<void> | void)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  const onCleanup = (cleanup: () => Promise<void> | void) => {
    cleanups.push(cleanup)
  }
  return {
    onCleanup,
    drivers: [
      ['memory', () => Promise.resolve(createMemoryStore())],
      [
        'fs',
        async () => {
          const root = await mkdtemp(join(tmpdir(), `cairn-${label}-`))
          const store = await openFsStore(root)
          onCleanup(async () => {
            await store.close()
            await rm(root, { recursive: true, force: true })
          })
          return store
        },
      ],
    ],
  }
}
