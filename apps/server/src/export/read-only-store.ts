import type { ObjectStore } from '@cairn/core'

/** A write that a reader of the store tried: a fault of the reader, never done. */
export class ReadOnlyStoreError extends Error {
  constructor(what: string, key: string) {
    super(`the offline export reads the store only, and was asked to ${what} ${key}`)
    this.name = 'ReadOnlyStoreError'
  }
}

/**
 * `store` for a reader that must change nothing in it (an offline export of a data directory or
 * a bucket that may be a backup): reads pass through, and a write or a delete fails without
 * reaching the store.
 */
export function readOnly(store: ObjectStore): ObjectStore {
  return {
    ...(store.exclusive === undefined ? {} : { exclusive: store.exclusive }),
    get: (key, options) => store.get(key, options),
    head: (key) => store.head(key),
    list: (options) => store.list(options),
    ping: () => store.ping(),
    put: (key) => Promise.reject(new ReadOnlyStoreError('write', key)),
    delete: (key) => Promise.reject(new ReadOnlyStoreError('delete', key)),
  }
}
