import * as v from 'valibot'
import { STORE_KEYS } from '../storage/key-layout'
import type { ObjectStore } from '../storage/object-store'
import { SharedRecord } from '../storage/shared-record'

/** A freeze as stored in `ops/freezes.json` (the `/v1` view is the contract's `FreezeSchema`). */
export const StoredFreezeSchema = v.object({
  id: v.string(),
  prefix: v.string(),
  reason: v.string(),
  created: v.string(),
  by: v.string(),
})
export type StoredFreeze = v.InferOutput<typeof StoredFreezeSchema>

/** Every freeze in force: `ops/freezes.json`. */
export const FreezesRecordSchema = v.object({
  format: v.literal(1),
  freezes: v.array(StoredFreezeSchema),
})
export type FreezesRecord = v.InferOutput<typeof FreezesRecordSchema>

/**
 * The stored freezes, read on every check, so a freeze made on one instance stops the next
 * request on every other (see `SharedRecord`).
 *
 * @internal
 */
export class FreezeStore extends SharedRecord<FreezesRecord> {
  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    super(store, sleep, {
      key: STORE_KEYS.freezes,
      schema: FreezesRecordSchema,
      empty: { format: 1, freezes: [] },
      name: 'the freezes',
    })
  }
}
