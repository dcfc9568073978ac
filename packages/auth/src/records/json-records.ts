import { collectBytes, parseStored, type ObjectStore, type PutCondition } from '@cairn/core'
import type * as v from 'valibot'

/** A stored JSON record with the ETag it was read at. */
export interface Stored<T> {
  value: T
  etag: string
}

/**
 * Reads a JSON record, or undefined when absent. A record that does not parse or match its schema
 * is a damaged store, as everywhere in core (`parseStored`): `storage_unavailable` naming the key.
 *
 * @throws StorageUnavailableError
 */
export async function readRecord<T>(
  store: ObjectStore,
  key: string,
  schema: v.GenericSchema<unknown, T>,
): Promise<Stored<T> | undefined> {
  const object = await store.get(key)
  if (object === undefined) return undefined
  return { value: parseStored(schema, await collectBytes(object.body), key), etag: object.etag }
}

/** Writes a JSON record, conditionally when asked (see ObjectStore.put). */
export async function writeRecord(
  store: ObjectStore,
  key: string,
  value: unknown,
  condition?: PutCondition,
): Promise<void> {
  const body = new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`)
  await store.put(key, body, {
    contentType: 'application/json',
    ...(condition === undefined ? {} : { condition }),
  })
}
