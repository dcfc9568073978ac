import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { allowAll, type Authorizer } from '../access/authorizer'
import type { Principal } from '../access/principal'
import {
  DependencyCycleError,
  ForbiddenError,
  InvalidRequestError,
  InvalidUnitIdError,
  PreconditionError,
  UnitNotFoundError,
} from '../errors'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { createCore, type Core, type CoreOptions } from '../core'
import type { UnitStatus } from '@cairn/contract'
import { bytesOf, terraformState } from './fixtures'
import { ManualClock } from './manual-clock'
import type { StoreFactory } from './object-store-contract'

const alice: Principal = { subject: 'alice' }

/**
 * The rules of dependencies and status (DESIGN section 7), one behaviour per test, as a vitest
 * suite that runs against any object-store driver: `dependencyContract('fs', factory)`.
 */
export function dependencyContract(name: string, factory: StoreFactory): void {
  describe(`dependency contract: ${name}`, () => {
    let store: ObjectStore
    let dispose: () => Promise<void>
    let clock: ManualClock
    let core: Core
    const serials = new Map<string, number>()
    const id = (text: string): UnitId => parseUnitId(text)
    const make = (options: Partial<CoreOptions> = {}) =>
      createCore({ store, authorizer: allowAll, clock, sleep: () => Promise.resolve(), ...options })
    /**
     * Makes `core` and the server it returns two instances over the store as over a bucket they
     * share: neither may take the store for its own (the fs store says it is, to one process).
     */
    const twoServers = (): Core => {
      const shared: ObjectStore = { ...store, exclusive: false }
      core = make({ store: shared })
      return make({ store: shared })
    }

    /** Writes a Terraform state with these outputs as the unit's next serial, as `apply` would. */
    const apply = async (unit: string, outputs: Record<string, unknown>, service = core) => {
      const serial = (serials.get(unit) ?? 0) + 1
      serials.set(unit, serial)
      clock.advance(1000)
      return service.states.write(alice, id(unit), bytesOf(terraformState({ serial, outputs })), {
        source: 'http',
        create: true,
      })
    }
    /** Declares `unit`'s dependencies: `from` or `from:output` each. */
    const depend = (unit: string, ...edges: string[]) =>
      core.dependencies.set(alice, id(unit), {
        dependencies: edges.map((edge) => {
          const [from, output] = edge.split(':')
          return output === undefined ? { from } : { from, output }
        }),
      })
    /** The store of this test, with its writes going through `put` instead. */
    const withPut = (put: ObjectStore['put']): ObjectStore => ({
      get: (key) => store.get(key),
      head: (key) => store.head(key),
      list: (options) => store.list(options),
      delete: (key, options) => store.delete(key, options),
      ping: () => store.ping(),
      put,
    })
    const status = (unit: string) => core.dependencies.status(alice, id(unit))
    const colour = async (unit: string) => (await status(unit)).status
    const colours = async (...unitIds: string[]) =>
      Object.fromEntries(
        await Promise.all(unitIds.map(async (unit) => [unit, await colour(unit)] as const)),
      )

    beforeEach(async () => {
      ;({ store, dispose } = await factory())
      clock = new ManualClock()
      core = make()
      serials.clear()
    })
    afterEach(async () => {
      await dispose()
    })

    describe('the rules', () => {
      it('a changed consumed output makes the consumer red and its consumers yellow', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', { url: 'a.example' })
        await apply('dns', {})
        await depend('app', 'net:vpc')
        await depend('dns', 'app:url')
        expect(await colours('net', 'app', 'dns')).toEqual({
          net: 'green',
          app: 'green',
          dns: 'green',
        })

        const changed = await apply('net', { vpc: 'vpc-2' })
        expect(await colours('net', 'app', 'dns')).toEqual({
          net: 'green',
          app: 'red',
          dns: 'yellow',
        })
        expect(await status('app')).toEqual({
          id: 'app',
          status: 'red',
          edges: [
            {
              from: 'net',
              output: 'vpc',
              state: 'pending',
              since: { timestamp: changed.timestamp, serial: 2 },
            },
          ],
          red_upstream: [],
        })
        expect(await status('dns')).toEqual({
          id: 'dns',
          status: 'yellow',
          edges: [{ from: 'app', output: 'url', state: 'ok' }],
          red_upstream: ['app'],
        })
      })

      it('re-applying the consumer turns it green, and its consumers follow its outputs', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', { url: 'a.example' })
        await apply('dns', {})
        await depend('app', 'net:vpc')
        await depend('dns', 'app:url')
        await apply('net', { vpc: 'vpc-2' })

        // The consumer re-applies without its own output changing: everything is green again.
        await apply('app', { url: 'a.example' })
        expect(await colours('net', 'app', 'dns')).toEqual({
          net: 'green',
          app: 'green',
          dns: 'green',
        })

        // Now the change reaches the consumer's output, so the next unit down turns red.
        await apply('net', { vpc: 'vpc-3' })
        await apply('app', { url: 'b.example' })
        expect(await colours('app', 'dns')).toEqual({ app: 'green', dns: 'red' })
        await apply('dns', {})
        expect(await colour('dns')).toBe('green')
      })

      it('a changed output that nothing consumes changes nothing', async () => {
        await apply('net', { vpc: 'vpc-1', note: 'a' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await apply('net', { vpc: 'vpc-1', note: 'b' })
        expect(await status('app')).toEqual({
          id: 'app',
          status: 'green',
          edges: [{ from: 'net', output: 'vpc', state: 'ok' }],
          red_upstream: [],
        })
      })

      it('a whole-state edge turns pending on any new version of the upstream', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net')
        expect(await colour('app')).toBe('green')
        await apply('net', { vpc: 'vpc-1' })
        expect(await status('app')).toMatchObject({
          status: 'red',
          edges: [{ from: 'net', state: 'pending' }],
        })
        await apply('app', {})
        expect(await colour('app')).toBe('green')
      })

      it('the same bytes written again are no new version and change nothing', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net')
        const text = terraformState({ serial: 1, outputs: { vpc: 'vpc-1' } })
        await core.states.write(alice, id('net'), bytesOf(text), { source: 's3' })
        expect(await colour('app')).toBe('green')
      })

      it('a new edge counts as acknowledged when it is set', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc', 'net')
        expect(await colour('app')).toBe('green')
        await apply('net', { vpc: 'vpc-2' })
        expect(await colour('app')).toBe('red')
      })

      it('keeps what an edge acknowledged when the set is replaced with it still in', async () => {
        await apply('net', { vpc: 'vpc-1', subnet: 's-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await apply('net', { vpc: 'vpc-2', subnet: 's-1' })
        await depend('app', 'net:vpc', 'net:subnet')
        expect((await status('app')).edges).toEqual([
          { from: 'net', output: 'subnet', state: 'ok' },
          expect.objectContaining({ from: 'net', output: 'vpc', state: 'pending' }),
        ])
      })

      it('an edge set before its upstream has state turns pending when the upstream first applies', async () => {
        await apply('app', {})
        await depend('app', 'net:vpc')
        expect((await status('app')).edges).toEqual([
          { from: 'net', output: 'vpc', state: 'unknown' },
        ])
        const first = await apply('net', { vpc: 'vpc-1' })
        expect(await status('app')).toMatchObject({
          status: 'red',
          edges: [{ state: 'pending', since: { timestamp: first.timestamp, serial: 1 } }],
        })
      })

      it('names the first upstream version that differed, and clears when the value comes back', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        const second = await apply('net', { vpc: 'vpc-2' })
        await apply('net', { vpc: 'vpc-3' })
        expect((await status('app')).edges[0]?.since).toEqual({
          timestamp: second.timestamp,
          serial: 2,
        })
        await apply('net', { vpc: 'vpc-1' })
        expect(await status('app')).toMatchObject({
          status: 'green',
          edges: [{ state: 'ok' }],
        })
      })

      it('compares values, not the way the JSON is laid out', async () => {
        const write = (serial: number, outputs: string) => {
          clock.advance(1000)
          const text = `{"version":4,"terraform_version":"1.11.4","serial":${String(serial)},"lineage":"l","outputs":${outputs},"resources":[]}`
          return core.states.write(alice, id('net'), bytesOf(text), { source: 'api', create: true })
        }
        await write(1, '{"map":{"value":{"b":1,"a":[1.50,2e3]},"type":["map","number"]}}')
        await apply('app', {})
        await depend('app', 'net:map')
        await write(
          2,
          '{ "map": { "type": ["map","number"], "value": { "a": [1.50, 2e3], "b": 1 } } }',
        )
        expect(await colour('app')).toBe('green')
        await write(3, '{"map":{"value":{"a":[1.5,2e3],"b":1},"type":["map","number"]}}')
        expect(await colour('app')).toBe('red')
      })

      it('does not let two large numbers that one float would blur look the same', async () => {
        const write = (serial: number, big: string) => {
          clock.advance(1000)
          const text = `{"version":4,"serial":${String(serial)},"lineage":"l","outputs":{"n":{"value":${big},"type":"number"}}}`
          return core.states.write(alice, id('net'), bytesOf(text), { source: 'api', create: true })
        }
        await write(1, '12345678901234567890')
        await apply('app', {})
        await depend('app', 'net:n')
        await write(2, '12345678901234567891')
        expect(await colour('app')).toBe('red')
      })
    })

    describe('unknown edges', () => {
      it('reports an upstream that does not exist, or has no state, as unknown and stays green', async () => {
        await apply('app', {})
        await core.units.create(alice, id('empty'))
        await depend('app', 'ghost', 'ghost:x', 'empty')
        expect(await status('app')).toEqual({
          id: 'app',
          status: 'green',
          edges: [
            { from: 'empty', state: 'unknown' },
            { from: 'ghost', state: 'unknown' },
            { from: 'ghost', output: 'x', state: 'unknown' },
          ],
          red_upstream: [],
        })
      })

      it('reports an output the upstream does not have as unknown', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:subnet')
        expect((await status('app')).edges).toEqual([
          { from: 'net', output: 'subnet', state: 'unknown' },
        ])
        await apply('net', { vpc: 'vpc-1', subnet: 's-1' })
        expect((await status('app')).edges[0]?.state).toBe('pending')
        await apply('net', { vpc: 'vpc-1' })
        expect((await status('app')).edges[0]?.state).toBe('unknown')
      })

      it('gives unknown edges, never an error, for a state that is not Terraform or is encrypted', async () => {
        await apply('app', {})
        const sealed = (serial: number) =>
          JSON.stringify({
            serial,
            lineage: 'l',
            meta: { 'key_provider.pbkdf2.key': 'eyJzYWx0Ijoi' },
            encrypted_data: 'bm90IHJlYWxseSBlbmNyeXB0ZWQ=',
            encryption_version: 'v0',
          })
        await core.states.write(alice, id('sealed'), bytesOf(sealed(1)), {
          source: 'api',
          create: true,
        })
        await core.states.write(alice, id('plain'), bytesOf('{"hello":"world"}'), {
          source: 's3',
          create: true,
        })
        await depend('app', 'sealed', 'sealed:vpc', 'plain', 'plain:vpc')
        const report = await status('app')
        expect(report.status).toBe('green')
        // A state encrypted on the client changes as a whole, by its plain serial; its outputs
        // cannot be read, and the edge says why.
        expect(report.edges).toEqual([
          { from: 'plain', state: 'unknown' },
          { from: 'plain', output: 'vpc', state: 'unknown' },
          { from: 'sealed', state: 'ok' },
          { from: 'sealed', output: 'vpc', state: 'unknown', reason: 'client_encrypted' },
        ])
        await core.states.write(alice, id('sealed'), bytesOf(sealed(2)), { source: 'api' })
        expect(await status('app')).toMatchObject({
          status: 'red',
          edges: [{}, {}, { from: 'sealed', state: 'pending' }, { state: 'unknown' }],
        })
      })

      it('turns the edges to a deleted unit unknown, and back when it returns', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await apply('net', { vpc: 'vpc-2' })
        expect(await colour('app')).toBe('red')
        await core.units.delete(alice, id('net'))
        expect(await status('app')).toMatchObject({
          status: 'green',
          edges: [{ from: 'net', output: 'vpc', state: 'unknown' }],
        })
        expect((await core.dependencies.get(alice, id('app'))).dependencies).toEqual([
          { from: 'net', output: 'vpc' },
        ])
        serials.delete('net')
        await apply('net', { vpc: 'vpc-1' })
        expect((await status('app')).edges[0]?.state).toBe('ok')
        await apply('net', { vpc: 'vpc-9' })
        expect((await status('app')).edges[0]?.state).toBe('pending')
      })

      it('drops the dependencies of a deleted unit with it', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await core.units.delete(alice, id('app'))
        await expect(core.dependencies.get(alice, id('app'))).rejects.toBeInstanceOf(
          UnitNotFoundError,
        )
        await apply('app', {})
        expect((await core.dependencies.get(alice, id('app'))).dependencies).toEqual([])
        await apply('net', { vpc: 'vpc-2' })
        expect(await colour('app')).toBe('green')
      })
    })

    describe('restores', () => {
      it('counts a restore of an upstream as a change, and a restore of a consumer as no acknowledgement', async () => {
        const first = await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await apply('net', { vpc: 'vpc-2' })
        const appFirst = await apply('app', {})
        expect(await colour('app')).toBe('green')

        await core.states.restore(alice, id('net'), { timestamp: first.timestamp })
        expect(await colour('app')).toBe('red')
        clock.advance(1000)
        await core.states.restore(alice, id('app'), { timestamp: appFirst.timestamp })
        expect(await colour('app')).toBe('red')
      })
    })

    describe('declaring dependencies', () => {
      it('refuses a cycle, naming it, and changes nothing', async () => {
        for (const unit of ['a', 'b', 'c']) await core.units.create(alice, id(unit))
        await depend('a', 'b:x')
        await depend('b', 'c')
        const refused = await depend('c', 'a:y').catch((error: unknown) => error)
        expect(refused).toBeInstanceOf(DependencyCycleError)
        expect((refused as DependencyCycleError).cycle).toEqual(['c', 'b', 'a', 'c'])
        expect((refused as DependencyCycleError).message).toContain('c → b → a → c')
        expect((await core.dependencies.get(alice, id('c'))).dependencies).toEqual([])

        const self = await depend('a', 'b:x', 'a:z').catch((error: unknown) => error)
        expect((self as DependencyCycleError).cycle).toEqual(['a', 'a'])
        expect((await core.dependencies.get(alice, id('a'))).dependencies).toEqual([
          { from: 'b', output: 'x' },
        ])
      })

      it('refuses a cycle around a chain longer than a walk goes, naming every link', async () => {
        const name = (index: number) => `ring/u${String(index).padStart(2, '0')}`
        for (let index = 0; index < 12; index += 1) await core.units.create(alice, id(name(index)))
        for (let index = 1; index < 12; index += 1) await depend(name(index), name(index - 1))
        const refused = await depend(name(0), name(11)).catch((error: unknown) => error)
        expect((refused as DependencyCycleError).cycle).toEqual([
          ...Array.from({ length: 12 }, (_, index) => name(index)),
          name(0),
        ])
        expect((await core.dependencies.get(alice, id(name(0)))).dependencies).toEqual([])
      })

      it('sees no cycle in an edge that was dropped, and drops its consumer mark', async () => {
        for (const unit of ['a', 'b']) await core.units.create(alice, id(unit))
        await depend('a', 'b')
        expect((await store.list({ prefix: 'consumers/b!/' })).objects).toHaveLength(1)
        await depend('a')
        expect((await store.list({ prefix: 'consumers/b!/' })).objects).toHaveLength(0)
        // A mark left by a declaration cut short stands for no edge.
        await store.put('consumers/b!/a!', new Uint8Array(0))
        await depend('b', 'a')
        expect((await core.dependencies.get(alice, id('b'))).dependencies).toEqual([{ from: 'a' }])
      })

      it('allows a diamond, which is no cycle', async () => {
        for (const unit of ['top', 'left', 'right', 'bottom']) await apply(unit, { out: 1 })
        await depend('left', 'top:out')
        await depend('right', 'top:out')
        await depend('bottom', 'left:out', 'right:out')
        await apply('top', { out: 2 })
        expect(await status('bottom')).toMatchObject({
          status: 'yellow',
          red_upstream: ['left', 'right'],
        })
      })

      it('stores a set: sorted, each edge once', async () => {
        await core.units.create(alice, id('app'))
        const set = await depend('app', 'z', 'net:vpc', 'net', 'net:vpc', 'a/b:c')
        expect(set.dependencies).toEqual([
          { from: 'a/b', output: 'c' },
          { from: 'net' },
          { from: 'net', output: 'vpc' },
          { from: 'z' },
        ])
        expect(await core.dependencies.get(alice, id('app'))).toEqual(set)
      })

      it('refuses bad sets with a clear error and changes nothing', async () => {
        await core.units.create(alice, id('app'))
        await depend('app', 'net')
        const bad: [unknown, new (...args: never[]) => Error][] = [
          [{}, InvalidRequestError],
          [{ dependencies: 'net' }, InvalidRequestError],
          [{ dependencies: [{ from: 'net', extra: 1 }] }, InvalidRequestError],
          [{ dependencies: [{ from: 'net', output: '1bad' }] }, InvalidRequestError],
          [{ dependencies: [{ from: 'net', output: '' }] }, InvalidRequestError],
          [{ dependencies: [{ output: 'x' }] }, InvalidRequestError],
          [{ dependencies: [{ from: '/net' }] }, InvalidUnitIdError],
          [{ dependencies: [{ from: 'a__b' }] }, InvalidUnitIdError],
          [
            {
              dependencies: Array.from({ length: 1001 }, (_, index) => ({
                from: `u${String(index)}`,
              })),
            },
            InvalidRequestError,
          ],
        ]
        for (const [body, kind] of bad) {
          await expect(core.dependencies.set(alice, id('app'), body)).rejects.toBeInstanceOf(kind)
        }
        expect((await core.dependencies.get(alice, id('app'))).dependencies).toEqual([
          { from: 'net' },
        ])
        await expect(depend('missing', 'net')).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(status('missing')).rejects.toBeInstanceOf(UnitNotFoundError)
      })

      it('replaces the set only when If-Match accepts the current one', async () => {
        await core.units.create(alice, id('app'))
        const first = await depend('app', 'net')
        await depend('app', 'net', 'dns')
        await expect(
          core.dependencies.set(
            alice,
            id('app'),
            { dependencies: [] },
            { ifMatch: (etag) => etag === first.etag },
          ),
        ).rejects.toBeInstanceOf(PreconditionError)
        const now = await core.dependencies.get(alice, id('app'))
        expect(now.dependencies).toHaveLength(2)
        const emptied = await core.dependencies.set(
          alice,
          id('app'),
          { dependencies: [] },
          { ifMatch: (etag) => etag === now.etag },
        )
        expect(emptied.dependencies).toEqual([])
        expect(emptied.etag).not.toBe(now.etag)
      })

      it('needs write on the unit and read on each upstream', async () => {
        const bob: Principal = { subject: 'bob' }
        const authorizer: Authorizer = {
          can: (who, permission, unit) =>
            who.subject === 'alice' ||
            (unit === 'app' && permission !== 'unit:manage') ||
            (unit === 'net' && permission === 'unit:read'),
          isAdmin: () => false,
        }
        core = make({ authorizer })
        await core.units.create(alice, id('app'))
        await expect(
          core.dependencies.set(bob, id('app'), { dependencies: [{ from: 'net' }] }),
        ).resolves.toMatchObject({ dependencies: [{ from: 'net' }] })
        await expect(
          core.dependencies.set(bob, id('app'), { dependencies: [{ from: 'secret' }] }),
        ).rejects.toBeInstanceOf(ForbiddenError)
        await expect(
          core.dependencies.set(bob, id('net'), { dependencies: [] }),
        ).rejects.toBeInstanceOf(ForbiddenError)
        await expect(core.dependencies.status(bob, id('secret'))).rejects.toBeInstanceOf(
          ForbiddenError,
        )
      })

      it('names no upstream unit the caller may not read, and shows none of its versions', async () => {
        // base -> net -> app; bob reads only app and the units under team/.
        const bob: Principal = { subject: 'bob' }
        const authorizer: Authorizer = {
          can: (who, permission, unit) =>
            who.subject === 'alice' ||
            (permission === 'unit:read' && (unit === 'app' || unit.startsWith('team/'))),
          isAdmin: () => false,
        }
        core = make({ authorizer })
        await apply('base', { x: 1 })
        await apply('net', { y: 1 })
        await apply('app', {})
        await apply('team/web', {})
        await depend('net', 'base:x')
        await depend('app', 'net:y')
        await depend('team/web', 'app')
        await apply('net', { y: 2 })
        await apply('base', { x: 2 })
        // app waits on net (red itself, since base changed): alice sees it all.
        const seen = await core.dependencies.status(alice, id('app'))
        expect(seen.red_upstream).toEqual(['net'])
        expect(seen.edges[0]?.since).toBeDefined()
        // bob sees that app waits, on an edge its own record names, but not net's versions, and
        // net only as a count among the red units upstream.
        const hidden = await core.dependencies.status(bob, id('app'))
        expect(hidden).toEqual({
          id: 'app',
          status: 'red',
          edges: [{ from: 'net', output: 'y', state: 'pending' }],
          red_upstream: [],
          red_upstream_hidden: 1,
        })
        // app is red and readable: team/web names it.
        expect((await core.dependencies.status(bob, id('team/web'))).red_upstream).toEqual(['app'])
        const [listed] = await core.dependencies.statusesOf(bob, [id('app'), id('net')])
        expect(listed).toEqual(hidden)
        const page = await core.dependencies.statuses(bob, { prefix: '' })
        expect(page.items.map((item) => item.id)).toEqual(['app', 'team/web'])
        expect(page.items.flatMap((item) => item.red_upstream)).toEqual(['app'])
        expect(JSON.stringify(page.items)).not.toContain('base')
      })

      it('handles unit IDs that are also the names of object members', async () => {
        await apply('constructor', { x: 1 })
        await apply('toString', {})
        await apply('hasOwnProperty', {})
        expect(await colour('toString')).toBe('green')
        await depend('toString', 'constructor:x')
        await depend('hasOwnProperty', 'toString')
        await apply('constructor', { x: 2 })
        expect(await colours('constructor', 'toString', 'hasOwnProperty')).toEqual({
          constructor: 'green',
          toString: 'red',
          hasOwnProperty: 'yellow',
        })
      })
    })

    describe('shapes of graphs', () => {
      it('follows a deep chain: one red link, everything below it yellow', async () => {
        const length = 40
        const name = (index: number) => `chain/u${String(index).padStart(3, '0')}`
        const links = Array.from({ length }, (_, index) => index)
        // Each unit is its own record: writing them side by side keeps the fs store's fsyncs from
        // adding up to seconds on a loaded disk.
        await Promise.all(links.map((index) => apply(name(index), { out: 0 })))
        await Promise.all(
          links.slice(1).map((index) => depend(name(index), `${name(index - 1)}:out`)),
        )
        await apply(name(0), { out: 1 })
        const page = await core.dependencies.statuses(alice, { prefix: 'chain/', limit: 1000 })
        expect(page.items.map((item) => item.status)).toEqual([
          'green',
          'red',
          ...Array<string>(length - 2).fill('yellow'),
        ])
        expect(page.items.at(-1)?.red_upstream).toEqual([name(1)])

        await apply(name(1), { out: 1 })
        const after = await core.dependencies.statuses(alice, { prefix: 'chain/', limit: 1000 })
        expect(after.items.map((item) => item.status).slice(0, 4)).toEqual([
          'green',
          'green',
          'red',
          'yellow',
        ])
        expect(after.items.at(-1)?.red_upstream).toEqual([name(2)])
      })

      it('fans out to many consumers and in from many upstreams', async () => {
        const width = 30
        await apply('hub', { out: 0 })
        const leaves = Array.from({ length: width }, (_, index) => `leaf${String(index)}`)
        await Promise.all(
          leaves.map(async (leaf) => {
            await apply(leaf, { out: 0 })
            await depend(leaf, 'hub:out')
          }),
        )
        await apply('sink', {})
        await depend('sink', ...leaves.map((leaf) => `${leaf}:out`))
        await apply('hub', { out: 1 })
        const fanned = await Promise.all(leaves.map((leaf) => colour(leaf)))
        expect(new Set(fanned)).toEqual(new Set(['red']))
        expect((await status('sink')).red_upstream).toHaveLength(width)

        await Promise.all(leaves.map((leaf, index) => apply(leaf, { out: index < 3 ? 1 : 0 })))
        const sink = await status('sink')
        expect(sink.status).toBe('red')
        expect(
          sink.edges.filter((edge) => edge.state === 'pending').map((edge) => edge.from),
        ).toEqual(['leaf0', 'leaf1', 'leaf2'])
      })
    })

    describe('many units in one call', () => {
      it('answers by prefix, a page at a time, only for units the caller may read', async () => {
        for (const unit of ['team/a', 'team/b', 'team/c', 'team/d', 'other']) {
          await apply(unit, { out: 0 })
        }
        await depend('team/b', 'team/a:out')
        await apply('team/a', { out: 1 })
        const bob: Principal = { subject: 'bob' }
        core = make({
          authorizer: {
            can: (who, _, unit) => who !== bob || unit !== 'team/c',
            isAdmin: () => false,
          },
        })
        const seen: UnitStatus[] = []
        let cursor: string | undefined
        do {
          const page = await core.dependencies.statuses(bob, {
            prefix: 'team/',
            limit: 2,
            ...(cursor === undefined ? {} : { cursor }),
          })
          seen.push(...page.items)
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        expect(seen.map((item) => [item.id, item.status])).toEqual([
          ['team/a', 'green'],
          ['team/b', 'red'],
          ['team/d', 'green'],
        ])
        await expect(
          core.dependencies.statuses(bob, { prefix: 'bad prefix' }),
        ).rejects.toBeInstanceOf(InvalidRequestError)
      })
    })

    describe('failures and races', () => {
      it('acknowledges only in the commit: a consumer write that fails leaves its edges as they were', async () => {
        await apply('net', { vpc: 'vpc-1' })
        await apply('app', {})
        await depend('app', 'net:vpc')
        await apply('net', { vpc: 'vpc-2' })
        const flaky = withPut((key, body, options) => {
          if (key === 'unit-records/app!.json') return Promise.reject(new Error('storage hiccup'))
          return store.put(key, body, options)
        })
        await expect(apply('app', {}, make({ store: flaky }))).rejects.toThrow('storage hiccup')
        expect(await status('app')).toMatchObject({ status: 'red', edges: [{ state: 'pending' }] })
        await apply('app', {})
        expect(await colour('app')).toBe('green')
      })

      it('writes only the unit it changes: no shared object, whatever the graph holds', async () => {
        // Two servers: `core`, and `watched`, which records what it writes.
        core = make({ store: { ...store, exclusive: false } })
        await apply('hub', { out: 0 })
        for (const leaf of ['a', 'b', 'c']) {
          await apply(leaf, { out: 0 })
          await depend(leaf, 'hub:out')
        }
        const written: string[] = []
        const watched = make({
          store: withPut((key, body, options) => {
            written.push(key)
            return store.put(key, body, options)
          }),
        })
        await apply('a', { out: 1 }, watched)
        await watched.dependencies.set(alice, id('b'), {
          dependencies: [{ from: 'hub', output: 'out' }, { from: 'a' }],
        })
        await apply('hub', { out: 1 }, watched)
        // Whose key each is: a record, a unit's folder, or a consumer mark of the declaring unit.
        // Search's change notes are each a new object, named by time and a random token: shared
        // by no two writes either.
        // Nor is the graph's change log: each instance's own, written by it alone.
        const owners = written
          .filter((key) => !key.startsWith('search/changes/') && !key.startsWith('graph-changes/'))
          .map((key) => {
            if (key.startsWith('unit-records/')) return key.slice('unit-records/'.length, -6)
            if (key.startsWith('consumers/')) return key.split('!/')[1]?.slice(0, -1)
            return key.split('!')[0]?.slice('units/'.length)
          })
        expect(new Set(owners)).toEqual(new Set(['a', 'b', 'hub']))
        expect(await colours('a', 'b', 'c')).toEqual({ a: 'red', b: 'red', c: 'red' })
      })

      it('loses no graph step when two servers write units of one graph at once', async () => {
        const other = twoServers()
        const width = 12
        await apply('hub', { out: 0 })
        const leaves = Array.from({ length: width }, (_, index) => `leaf${String(index)}`)
        await Promise.all(
          leaves.map(async (leaf) => {
            await apply(leaf, { out: 0 })
            await depend(leaf, 'hub:out')
          }),
        )
        await apply('hub', { out: 1 })
        // Every consumer re-applies at once, half through each server.
        await Promise.all(
          leaves.map((leaf, index) => apply(leaf, { out: 0 }, index % 2 === 0 ? core : other)),
        )
        expect(new Set(await Promise.all(leaves.map((leaf) => colour(leaf))))).toEqual(
          new Set(['green']),
        )
        // The upstream changes while both servers declare dependencies of other units.
        const extras = Array.from({ length: width }, (_, index) => `extra${String(index)}`)
        for (const extra of extras) await core.units.create(alice, id(extra))
        await Promise.all([
          apply('hub', { out: 2 }, other),
          ...extras.map((extra, index) =>
            (index % 2 === 0 ? other : core).dependencies.set(alice, id(extra), {
              dependencies: [{ from: 'hub', output: 'out' }, { from: leaves[index] ?? 'hub' }],
            }),
          ),
        ])
        expect(new Set(await Promise.all(leaves.map((leaf) => colour(leaf))))).toEqual(
          new Set(['red']),
        )
        for (const extra of extras) {
          expect((await core.dependencies.get(alice, id(extra))).dependencies).toHaveLength(2)
        }
      })

      it('retries a declaration that lost its conditional write to another writer', async () => {
        let lose = 3
        const contended = withPut((key, body, options) => {
          if (key === 'unit-records/app!.json' && options?.condition !== undefined && lose > 0) {
            lose -= 1
            return Promise.reject(new PreconditionFailedError(key))
          }
          return store.put(key, body, options)
        })
        await apply('app', {})
        core = make({ store: contended })
        await depend('app', 'net')
        expect(lose).toBe(0)
        expect((await core.dependencies.get(alice, id('app'))).dependencies).toEqual([
          { from: 'net' },
        ])
      })

      it('never keeps a cycle that two servers close at once, one half each', async () => {
        const other = twoServers()
        for (let round = 0; round < 10; round += 1) {
          const [x, y] = [`x${String(round)}`, `y${String(round)}`]
          await core.units.create(alice, id(x))
          await core.units.create(alice, id(y))
          const outcomes = await Promise.allSettled([
            core.dependencies.set(alice, id(x), { dependencies: [{ from: y }] }),
            other.dependencies.set(alice, id(y), { dependencies: [{ from: x }] }),
          ])
          for (const outcome of outcomes) {
            if (outcome.status === 'rejected') {
              expect(outcome.reason).toBeInstanceOf(DependencyCycleError)
            }
          }
          const kept =
            (await core.dependencies.get(alice, id(x))).dependencies.length +
            (await core.dependencies.get(alice, id(y))).dependencies.length
          expect(kept).toBeLessThanOrEqual(1)
          const fulfilled = outcomes.filter((outcome) => outcome.status === 'fulfilled').length
          expect(kept).toBe(fulfilled)
        }
      })
    })
  })
}
