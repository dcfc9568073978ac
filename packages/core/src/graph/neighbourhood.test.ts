import { beforeEach, describe, expect, it } from 'vitest'
import type { Principal } from '../access/principal'
import { createCore, type Core } from '../core'
import { ForbiddenError, InvalidRequestError, UnitNotFoundError } from '../errors'
import { createMemoryStore } from '../storage/memory-store'
import type { ObjectStore } from '../storage/object-store'
import { bytesOf, terraformState } from '../testing/fixtures'
import { GrantTable } from '../testing/grant-table'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from '../units/unit-id'
import { markConsumer } from './consumer-marks'

const root: Principal = { subject: 'root' }
const bob: Principal = { subject: 'bob' }
const id = parseUnitId

describe('the neighbourhood of a unit', () => {
  let store: ObjectStore
  let clock: ManualClock
  let core: Core
  let access: GrantTable
  let serial = 0

  const apply = async (unit: string, outputs: Record<string, unknown> = {}) => {
    serial += 1
    clock.advance(1000)
    await core.states.write(root, id(unit), bytesOf(terraformState({ serial, outputs })), {
      source: 'http',
      create: true,
    })
  }
  const depend = (unit: string, ...edges: { from: string; output?: string }[]) =>
    core.dependencies.set(root, id(unit), { dependencies: edges })

  beforeEach(async () => {
    store = createMemoryStore()
    clock = new ManualClock()
    access = new GrantTable(['root'])
    core = createCore({ store, clock, authorizer: access })
    serial = 0
    // team/net and team/db -> team/app -> team/web -> team/cdn
    for (const unit of ['team/net', 'team/db', 'team/app', 'team/web', 'team/cdn']) {
      await apply(unit, { vpc: 'vpc-1' })
    }
    await depend('team/app', { from: 'team/net', output: 'vpc' }, { from: 'team/db' })
    await depend('team/web', { from: 'team/app' })
    await depend('team/cdn', { from: 'team/web' })
  })

  it('holds the upstreams left, the downstreams right, with their statuses and edges', async () => {
    await apply('team/net', { vpc: 'vpc-2' })
    const around = await core.dependencies.neighbourhood(root, id('team/app'))
    expect(around.focus).toBe('team/app')
    expect(around.truncated).toBe(false)
    expect(around.nodes).toEqual([
      { key: 'team/db', id: 'team/db', status: 'green', hidden: false, level: -1 },
      { key: 'team/net', id: 'team/net', status: 'green', hidden: false, level: -1 },
      { key: 'team/app', id: 'team/app', status: 'red', hidden: false, level: 0 },
      { key: 'team/web', id: 'team/web', status: 'yellow', hidden: false, level: 1 },
      { key: 'team/cdn', id: 'team/cdn', status: 'yellow', hidden: false, level: 2 },
    ])
    expect(around.edges).toEqual(
      expect.arrayContaining([
        { from: 'team/net', to: 'team/app', state: 'pending', outputs: ['vpc'] },
        { from: 'team/db', to: 'team/app', state: 'ok', outputs: [] },
        { from: 'team/app', to: 'team/web', state: 'ok', outputs: [] },
        { from: 'team/web', to: 'team/cdn', state: 'ok', outputs: [] },
      ]),
    )
    expect(around.edges).toHaveLength(4)
  })

  it('stops at the depth asked for', async () => {
    const around = await core.dependencies.neighbourhood(root, id('team/web'), { depth: 1 })
    expect(around.nodes.map((node) => [node.id, node.level])).toEqual([
      ['team/app', -1],
      ['team/web', 0],
      ['team/cdn', 1],
    ])
  })

  it('leaves out a consumer whose mark outlived its edge', async () => {
    await apply('team/old')
    await markConsumer(store, 'team/old', ['team/app'])
    const around = await core.dependencies.neighbourhood(root, id('team/app'))
    expect(around.nodes.map((node) => node.id)).not.toContain('team/old')
  })

  it('keeps to the limit and says so', async () => {
    const around = await core.dependencies.neighbourhood(root, id('team/app'), { limit: 2 })
    expect(around.nodes).toHaveLength(2)
    expect(around.truncated).toBe(true)
  })

  it('refuses a bad depth or limit, and a unit that does not exist', async () => {
    await expect(
      core.dependencies.neighbourhood(root, id('team/app'), { depth: 0 }),
    ).rejects.toThrow(InvalidRequestError)
    await expect(
      core.dependencies.neighbourhood(root, id('team/app'), { limit: 1001 }),
    ).rejects.toThrow(InvalidRequestError)
    await expect(core.dependencies.neighbourhood(root, id('team/none'))).rejects.toThrow(
      UnitNotFoundError,
    )
  })

  describe('for a reader of some units only', () => {
    beforeEach(async () => {
      // other/net -> team/app -> other/web -> team/end, and team/app -> team/web
      await apply('other/net', { vpc: 'vpc-1' })
      await apply('other/web')
      await apply('team/end')
      await depend('team/app', { from: 'other/net', output: 'vpc' }, { from: 'team/net' })
      await depend('other/web', { from: 'team/app' })
      await depend('team/end', { from: 'other/web' })
      access.grant('bob', ['unit:read'], 'team/*')
    })

    it('shows the units it may not read as hidden nodes, without their IDs, and goes no further', async () => {
      const around = await core.dependencies.neighbourhood(bob, id('team/app'))
      expect(JSON.stringify(around)).not.toContain('other/')
      expect(around.nodes).toEqual([
        { key: 'team/net', id: 'team/net', status: 'green', hidden: false, level: -1 },
        { key: '#1', id: null, status: null, hidden: true, level: -1 },
        { key: 'team/app', id: 'team/app', status: 'green', hidden: false, level: 0 },
        { key: 'team/web', id: 'team/web', status: 'green', hidden: false, level: 1 },
        { key: '#2', id: null, status: null, hidden: true, level: 1 },
        { key: 'team/cdn', id: 'team/cdn', status: 'green', hidden: false, level: 2 },
      ])
      expect(around.edges).toEqual(
        expect.arrayContaining([
          { from: '#1', to: 'team/app', state: 'ok', outputs: ['vpc'] },
          { from: 'team/app', to: '#2', state: 'unknown', outputs: [] },
        ]),
      )
      expect(around.nodes.map((node) => node.id)).not.toContain('team/end')
    })

    it('refuses a unit it may not read', async () => {
      await expect(core.dependencies.neighbourhood(bob, id('other/web'))).rejects.toThrow(
        ForbiddenError,
      )
    })
  })
})
