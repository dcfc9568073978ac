import { describe, expect, it } from 'vitest'
import { allowAll } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createMemoryStore } from '../storage/memory-store'
import { bytesOf, terraformState } from '../testing/fixtures'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from './unit-id'
import { createCore } from '../core'

const alice: Principal = { subject: 'alice' }
const unit = parseUnitId('team/app')

describe('a version whose state file is gone from the store', () => {
  it('answers storage_unavailable alike to a download and to a restore of it', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const core = createCore({ store, authorizer: allowAll, clock })
    await core.units.create(alice, unit)
    const first = await core.states.write(
      alice,
      unit,
      bytesOf(terraformState({ serial: 1, outputs: { padding: 'x'.repeat(100) } })),
      {
        source: 'api',
      },
    )
    clock.advance(1000)
    await core.states.write(alice, unit, bytesOf(terraformState({ serial: 2 })), { source: 'api' })
    const record = await core.versions.version(alice, unit, first.timestamp)
    const objects = await store.list({ prefix: 'units/team/app!/' })
    const stateFiles = objects.objects.filter((object) => object.key.includes('/states/'))
    // The first state is the larger one: its file is the one of its size.
    const firstFile = stateFiles.find((object) => object.size === record.size)
    expect(stateFiles.filter((object) => object.size === record.size)).toHaveLength(1)
    await store.delete(firstFile?.key ?? '')

    await expect(core.versions.downloadVersion(alice, unit, first.timestamp)).rejects.toMatchObject(
      {
        code: 'storage_unavailable',
      },
    )
    await expect(
      core.states.restore(alice, unit, { timestamp: first.timestamp }),
    ).rejects.toMatchObject({
      code: 'storage_unavailable',
    })
  })
})
