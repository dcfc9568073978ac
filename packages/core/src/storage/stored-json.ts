import * as v from 'valibot'
import { StorageUnavailableError } from '../errors'

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
