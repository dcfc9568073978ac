import { StorageUnavailableError } from '../errors'
import type { ObjectStore } from './object-store'

/**
 * System errors that mean the storage cannot serve now (out of file handles, of space, of memory,
 * or failing), not that the request is wrong: they answer 503 with `Retry-After`, never a 500 or,
 * when a token record cannot be read, a wrong 401.
 */
const FAULT_CODES = new Set([
  'EMFILE',
  'ENFILE',
  'ENOSPC',
  'EDQUOT',
  'ENOMEM',
  'EIO',
  'EROFS',
  'EAGAIN',
  'EBUSY',
  'EACCES',
  'EPERM',
])

/** The error as core reports it: a storage fault becomes `StorageUnavailableError`. */
export function asStorageFault(error: unknown): unknown {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined
  if (code === undefined || !FAULT_CODES.has(code)) return error
  return new StorageUnavailableError(`storage failed: ${code}`, { cause: error })
}

/**
 * Wraps a store so that its system errors come out as storage faults. Errors of a body the store
 * was given (a client that went away mid-upload) pass through as they are.
 */
export function guardStorageFaults<S extends ObjectStore>(store: S): S {
  const guarded = Object.create(null) as Record<string, unknown>
  for (const name of Object.keys(store) as (keyof S & string)[]) {
    const member = store[name]
    guarded[name] =
      typeof member === 'function'
        ? async (...args: unknown[]) => {
            try {
              return await (member as (...a: unknown[]) => Promise<unknown>).apply(store, args)
            } catch (error) {
              throw asStorageFault(error)
            }
          }
        : member
  }
  return guarded as S
}
