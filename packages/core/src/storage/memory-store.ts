import { collectPage } from './list-page'
import {
  bodyOf,
  checkRange,
  collectBytes,
  PreconditionFailedError,
  type Body,
  type GetOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './object-store'

interface Entry {
  bytes: Uint8Array
  etag: string
}

/**
 * An object store held in this process's memory: for tests and throwaway runs. Everything is lost
 * when the process ends.
 */
export function createMemoryStore(): ObjectStore {
  const entries = new Map<string, Entry>()
  let generation = 0

  const info = (key: string, entry: Entry): ObjectInfo => ({
    key,
    etag: entry.etag,
    size: entry.bytes.byteLength,
  })

  return {
    get(key, options?: GetOptions): Promise<StoredObject | undefined> {
      // What the executor throws (a range not within the object) becomes the rejection.
      return new Promise((resolve) => {
        const entry = entries.get(key)
        if (entry === undefined) {
          resolve(undefined)
          return
        }
        let bytes = entry.bytes
        const range = options?.range
        if (range !== undefined) {
          checkRange(key, range, bytes.byteLength)
          // A view of the stored bytes, not a copy: a replace stores new bytes, never changes these.
          bytes = bytes.subarray(range.start, range.end + 1)
        }
        resolve({ ...info(key, entry), body: bodyOf(bytes) })
      })
    },

    head(key) {
      const entry = entries.get(key)
      return Promise.resolve(entry === undefined ? undefined : info(key, entry))
    },

    async put(key: string, body: Body, options?: PutOptions) {
      const bytes = body instanceof Uint8Array ? body.slice() : await collectBytes(body)
      // The condition is checked after the body is in hand, in the same tick as the write, so it
      // holds at the moment of writing.
      const current = entries.get(key)
      const condition = options?.condition
      if (condition !== undefined) {
        if (
          'ifNoneMatch' in condition ? current !== undefined : current?.etag !== condition.ifMatch
        ) {
          throw new PreconditionFailedError(key)
        }
      }
      generation += 1
      const entry = { bytes, etag: `"m${generation}"` }
      entries.set(key, entry)
      return info(key, entry)
    },

    delete(key, options) {
      const current = entries.get(key)
      if (options?.ifMatch !== undefined && current?.etag !== options.ifMatch) {
        return Promise.reject(new PreconditionFailedError(key))
      }
      entries.delete(key)
      return Promise.resolve()
    },

    list(options: ListOptions): Promise<ListPage> {
      const keys = [...entries.keys()].filter((key) => key.startsWith(options.prefix)).sort()
      return collectPage(
        keys.map((key) => info(key, entries.get(key) as Entry)),
        options,
      )
    },

    ping() {
      return Promise.resolve()
    },
  }
}
