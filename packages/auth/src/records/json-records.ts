import { collectBytes, type ObjectStore, type PutCondition } from '@cairn/core'
import * as v from 'valibot'

/** A stored JSON record with the ETag it was read at. */
export interface Stored<T> {
  value: T
  etag: string
}

/**
 * Reads a JSON record, or undefined when absent. A record that does not match its schema is
 * treated as absent: auth records are never trusted beyond what they prove.
 */
export async function readRecord<T>(
  store: ObjectStore,
  key: string,
  schema: v.GenericSchema<unknown, T>,
): Promise<Stored<T> | undefined> {
  const object = await store.get(key)
  if (object === undefined) return undefined
  const text = new TextDecoder().decode(await collectBytes(object.body))
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const result = v.safeParse(schema, parsed)
  return result.success ? { value: result.output, etag: object.etag } : undefined
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
