import * as v from 'valibot'
import { StorageUnavailableError } from '../errors'
import { collectBytes, type ObjectInfo, type ObjectStore, type PutCondition } from './object-store'

/**
 * Parses a JSON record core stored, treating anything unreadable as a storage fault: what is in the
 * store was written by core, so a record that does not parse means the store is damaged.
 *
 * @param name what the record is, for the message (`unit record units/a!/unit.json`)
 * @throws StorageUnavailableError
 */
export function parseStored<T>(
  schema: v.GenericSchema<unknown, T>,
  bytes: Uint8Array,
  name = 'a stored record',
): T {
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes))
  } catch (error) {
    throw new StorageUnavailableError(`${name} is not JSON`, { cause: error })
  }
  const result = v.safeParse(schema, parsed)
  if (!result.success) {
    throw new StorageUnavailableError(`${name} is malformed: ${result.issues[0].message}`)
  }
  return result.output
}

/** A stored JSON record with the ETag it was read at. */
export interface StoredRecord<T> {
  value: T
  etag: string
}

/** The bytes of a JSON record as every record in the store is written: indented, one newline. */
export function encodeRecord(value: unknown): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`)
}

/**
 * Reads a JSON record, or undefined when absent. A record that does not parse or match its schema
 * is a damaged store: `StorageUnavailableError` naming the key.
 *
 * @throws StorageUnavailableError
 */
export async function readRecord<T>(
  store: ObjectStore,
  key: string,
  schema: v.GenericSchema<unknown, T>,
  name = key,
): Promise<StoredRecord<T> | undefined> {
  const object = await store.get(key)
  if (object === undefined) return undefined
  return { value: parseStored(schema, await collectBytes(object.body), name), etag: object.etag }
}

/**
 * Writes a JSON record, conditionally when asked (see `ObjectStore.put`).
 *
 * @throws PreconditionFailedError when the condition does not hold
 */
export async function writeRecord(
  store: ObjectStore,
  key: string,
  value: unknown,
  condition?: PutCondition,
): Promise<ObjectInfo> {
  return store.put(key, encodeRecord(value), {
    contentType: 'application/json',
    ...(condition === undefined ? {} : { condition }),
  })
}
