import { beforeEach, describe, expect, it } from 'vitest'
import { allowAll } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createMemoryStore } from '../storage/memory-store'
import type { ObjectStore } from '../storage/object-store'
import { bytesOf, terraformState } from '../testing/fixtures'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from '../units/unit-id'
import { createCore, type Core } from '../core'

const alice: Principal = { subject: 'alice' }
const id = parseUnitId

/**
 * Output names are Terraform identifiers, and `__proto__`, `constructor` or `toString` are valid
 * ones: a name must only ever find an output the state really has, never something inherited.
 */
describe('dependencies on outputs named like Object.prototype members', () => {
  let store: ObjectStore
  let clock: ManualClock
  let core: Core
  let serial = 0
  /** A service with nothing in memory, which reads the graph back from the store. */
  const fresh = () =>
    createCore({ store, authorizer: allowAll, clock, sleep: () => Promise.resolve() })
  const apply = async (unit: string, outputs: Record<string, unknown>) => {
    serial += 1
    clock.advance(1000)
    return core.states.write(alice, id(unit), bytesOf(terraformState({ serial, outputs })), {
      source: 'http',
      create: true,
    })
  }

  beforeEach(() => {
    store = createMemoryStore()
    clock = new ManualClock()
    core = fresh()
    serial = 0
  })

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype'])(
    'shows an edge on output %s of an upstream that has no such output as unknown',
    async (name) => {
      await apply('net', { vpc: 'vpc-1' })
      await apply('app', {})
      await core.dependencies.set(alice, id('app'), {
        dependencies: [{ from: 'net', output: name }],
      })
      expect((await core.dependencies.status(alice, id('app'))).edges).toEqual([
        { from: 'net', output: name, state: 'unknown' },
      ])
      // An inherited member once became the acknowledged digest, and the stored graph unreadable.
      expect((await fresh().dependencies.status(alice, id('app'))).edges).toEqual([
        { from: 'net', output: name, state: 'unknown' },
      ])
    },
  )

  it.each(['__proto__', 'constructor', 'prototype'])(
    'follows a real output named %s like any other',
    async (name) => {
      await apply('net', Object.fromEntries([[name, 'one']]))
      await apply('app', {})
      await core.dependencies.set(alice, id('app'), {
        dependencies: [{ from: 'net', output: name }],
      })
      expect((await core.dependencies.status(alice, id('app'))).edges).toEqual([
        { from: 'net', output: name, state: 'ok' },
      ])
      await apply('net', Object.fromEntries([[name, 'two']]))
      expect((await fresh().dependencies.status(alice, id('app'))).edges).toMatchObject([
        { from: 'net', output: name, state: 'pending' },
      ])
    },
  )
})

describe('units named like Object.prototype members', () => {
  it.each(['constructor', 'prototype', 'toString'])(
    'keeps unit %s in the graph when it is read back from the store',
    async (name) => {
      const store = createMemoryStore()
      const clock = new ManualClock()
      const fresh = () =>
        createCore({ store, authorizer: allowAll, clock, sleep: () => Promise.resolve() })
      const core = fresh()
      const write = async (unit: string, serial: number, outputs: Record<string, unknown>) => {
        clock.advance(1000)
        await core.states.write(alice, id(unit), bytesOf(terraformState({ serial, outputs })), {
          source: 'http',
          create: true,
        })
      }
      await write(name, 1, { vpc: 'vpc-1' })
      await write('app', 1, {})
      await core.dependencies.set(alice, id('app'), {
        dependencies: [{ from: name, output: 'vpc' }],
      })
      await write(name, 2, { vpc: 'vpc-2' })
      expect((await fresh().dependencies.status(alice, id('app'))).status).toBe('red')
    },
  )
})

describe('the statuses of a list of units, read at once', () => {
  let core: Core
  let serial = 0
  const apply = async (unit: string, outputs: Record<string, unknown>) => {
    serial += 1
    return core.states.write(alice, id(unit), bytesOf(terraformState({ serial, outputs })), {
      source: 'http',
      create: true,
    })
  }

  beforeEach(() => {
    core = createCore({
      store: createMemoryStore(),
      authorizer: allowAll,
      clock: new ManualClock(),
      sleep: () => Promise.resolve(),
    })
    serial = 0
  })

  it('agrees with each unit read alone, down a chain deeper than a walk reads', async () => {
    const chain = Array.from({ length: 12 }, (_, k) => `chain/u${String(k).padStart(2, '0')}`)
    for (const [k, unit] of chain.entries()) {
      await apply(unit, { value: `v${k}` })
      if (k > 0) {
        await core.dependencies.set(alice, id(unit), {
          dependencies: [{ from: chain[k - 1] as string, output: 'value' }],
        })
        await apply(unit, { value: `v${k}` })
      }
    }
    await apply(chain[0] as string, { value: 'changed' })
    const alone = await Promise.all(chain.map((unit) => core.dependencies.status(alice, id(unit))))
    const together = await core.dependencies.statusesOf(alice, [...chain.map(id), id('missing')])
    expect(together).toEqual(alone)
    expect(together.map((status) => status.status)).toEqual([
      'green',
      'red',
      ...Array.from({ length: 10 }, () => 'yellow'),
    ])
  })
})
