import { describe, expect, it } from 'vitest'
import { allowAll } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createCore } from '../core'
import { createMemoryStore } from '../storage/memory-store'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { UNIT_RECORDS_PREFIX } from './layout'
import { parseUnitId } from './unit-id'

const alice: Principal = { subject: 'alice' }

describe('UnitRecordStore retries', () => {
  it('tells onRecordRetry of each conditional write lost to another writer', async () => {
    const memory = createMemoryStore()
    let losses = 2
    // Another writer gets in first twice: the first two writes of a unit record fail.
    const store: ObjectStore = {
      ...memory,
      put: (key, body, options) => {
        if (key.startsWith(UNIT_RECORDS_PREFIX) && losses > 0) {
          losses -= 1
          return Promise.reject(new PreconditionFailedError(key))
        }
        return memory.put(key, body, options)
      },
    }
    let retries = 0
    const core = createCore({
      store,
      authorizer: allowAll,
      sleep: () => Promise.resolve(),
      onRecordRetry: () => {
        retries += 1
      },
    })
    await core.units.create(alice, parseUnitId('team/app'))
    expect(retries).toBe(2)
    expect((await core.units.get(alice, parseUnitId('team/app'))).id).toBe('team/app')
  })
})
