import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { allowAll, type Authorizer } from '../access/authorizer'
import type { Principal } from '../access/principal'
import {
  ChecksumMismatchError,
  ClientEncryptionRequiredError,
  ForbiddenError,
  InvalidRequestError,
  InvalidStateError,
  LockConflictError,
  PreconditionError,
  SerialConflictError,
  StateNotFoundError,
  StateTooLargeError,
  UnitExistsError,
  UnitNotFoundError,
  VersionNotFoundError,
} from '../errors'
import { STORE_KEYS } from '../storage/key-layout'
import { RangeNotSatisfiableError, type ObjectStore } from '../storage/object-store'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { createCore, type Core, type CoreOptions } from '../core'
import { bytesOf, terraformState, textOf } from './fixtures'
import { ManualClock } from './manual-clock'
import type { StoreFactory } from './object-store-contract'

const alice: Principal = { subject: 'alice' }
const bob: Principal = { subject: 'bob' }
const LOCK_A = '3334c99b-bd4d-f772-89eb-ddc8a168609e'
const LOCK_B = '11111111-2222-4333-8444-555555555555'

/**
 * Every rule of the unit services, as one vitest suite that runs against any object-store driver:
 * `coreContract('fs', factory)`.
 */
export function coreContract(name: string, factory: StoreFactory): void {
  describe(`core contract: ${name}`, () => {
    let store: ObjectStore
    let dispose: () => Promise<void>
    let clock: ManualClock
    let core: Core
    const id = (text: string): UnitId => parseUnitId(text)
    const make = (options: Partial<CoreOptions> = {}) =>
      createCore({ store, authorizer: allowAll, clock, sleep: () => Promise.resolve(), ...options })
    /**
     * Every key in the store but the graph's change logs (over a store others may write, each
     * instance names there the units whose graph node it changed: a creation is one).
     */
    const storedKeys = async () =>
      (await store.list({ prefix: '' })).objects
        .map((object) => object.key)
        .filter((key) => !key.startsWith(STORE_KEYS.graphChanges))
    const write = (
      unit: string,
      text: string,
      options: Parameters<Core['states']['write']>[3] = { source: 'api' },
      who = alice,
    ) => core.states.write(who, id(unit), bytesOf(text, 7), options)
    const state = (serial: number, extra: Parameters<typeof terraformState>[0] = { serial }) =>
      terraformState({ ...extra, serial })

    beforeEach(async () => {
      ;({ store, dispose } = await factory())
      clock = new ManualClock()
      core = make()
    })
    afterEach(async () => {
      await dispose()
    })

    describe('units', () => {
      it('creates a unit and shows its metadata', async () => {
        const unit = await core.units.create(alice, id('team/app/prod'), {
          tags: ['env:prod', 'env:prod', 'team'],
        })
        expect(unit).toEqual({
          id: 'team/app/prod',
          created: '2026-01-01T00:00:00.000Z',
          updated: '2026-01-01T00:00:00.000Z',
          size: 0,
          serial: null,
          lineage: null,
          sha256: null,
          locked: false,
          lock: null,
          lock_stale: false,
          tags: ['env:prod', 'team'],
          version_count: 0,
        })
        expect(await core.units.get(alice, id('team/app/prod'))).toEqual(unit)
      })

      it('refuses to create a unit that exists', async () => {
        await core.units.create(alice, id('a'))
        await expect(core.units.create(alice, id('a'))).rejects.toBeInstanceOf(UnitExistsError)
      })

      it('refuses tags that are not a list of tag strings', async () => {
        await expect(core.units.create(alice, id('a'), { tags: 'x' })).rejects.toBeInstanceOf(
          InvalidRequestError,
        )
        await expect(
          core.units.create(alice, id('a'), { tags: ['bad tag'] }),
        ).rejects.toBeInstanceOf(InvalidRequestError)
        await expect(core.units.get(alice, id('a'))).rejects.toBeInstanceOf(UnitNotFoundError)
      })

      it('answers unit_not_found for every operation on a missing unit', async () => {
        const missing = id('nope')
        await expect(core.units.get(alice, missing)).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(core.versions.download(alice, missing)).rejects.toBeInstanceOf(
          UnitNotFoundError,
        )
        await expect(write('nope', state(1))).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(core.locks.lock(alice, missing, {}, { source: 'api' })).rejects.toBeInstanceOf(
          UnitNotFoundError,
        )
        await expect(
          core.locks.unlock(alice, missing, { source: 'api', force: true }),
        ).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(core.versions.list(alice, missing)).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(core.units.delete(alice, missing)).rejects.toBeInstanceOf(UnitNotFoundError)
        await expect(
          core.states.restore(alice, missing, { timestamp: '2026-01-01T00:00:00Z' }),
        ).rejects.toBeInstanceOf(UnitNotFoundError)
      })

      it('lists units in ID order, parents beside their children, by character prefix', async () => {
        for (const unit of [
          'team/app',
          'team/app/prod',
          'team/apple',
          'team/app-x',
          'other',
          'team/App',
        ]) {
          await core.units.create(alice, id(unit))
        }
        const all = await core.units.list(alice)
        expect(all.items.map((unit) => unit.id)).toEqual([
          'other',
          'team/App',
          'team/app',
          'team/app-x',
          'team/app/prod',
          'team/apple',
        ])
        expect(all.nextCursor).toBeNull()
        const some = await core.units.list(alice, { prefix: 'team/app' })
        expect(some.items.map((unit) => unit.id)).toEqual([
          'team/app',
          'team/app-x',
          'team/app/prod',
          'team/apple',
        ])
      })

      it('pages through units with a cursor', async () => {
        const names = Array.from({ length: 7 }, (_, index) => `u${index}`)
        for (const unit of names) await core.units.create(alice, id(unit))
        const seen: string[] = []
        let cursor: string | undefined
        do {
          const page = await core.units.list(alice, {
            limit: 3,
            ...(cursor === undefined ? {} : { cursor }),
          })
          seen.push(...page.items.map((unit) => unit.id))
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        expect(seen).toEqual(names)
      })

      it('refuses a malformed prefix, limit or cursor', async () => {
        await expect(core.units.list(alice, { prefix: 'a b' })).rejects.toBeInstanceOf(
          InvalidRequestError,
        )
        await expect(core.units.list(alice, { limit: 0 })).rejects.toBeInstanceOf(
          InvalidRequestError,
        )
        await expect(core.units.list(alice, { cursor: '../x' })).rejects.toBeInstanceOf(
          InvalidRequestError,
        )
      })

      it('deletes a unit with its versions, and a new unit of that name starts empty', async () => {
        await core.units.create(alice, id('gone'))
        await write('gone', state(1))
        await write('gone', state(2))
        await core.units.delete(alice, id('gone'))
        await expect(core.units.get(alice, id('gone'))).rejects.toBeInstanceOf(UnitNotFoundError)
        await core.units.create(alice, id('gone'))
        expect((await core.versions.list(alice, id('gone'))).items).toEqual([])
        await expect(core.versions.download(alice, id('gone'))).rejects.toBeInstanceOf(
          StateNotFoundError,
        )
      })

      it('refuses to delete a locked unit unless forced', async () => {
        await core.units.create(alice, id('held'))
        await core.locks.lock(alice, id('held'), { ID: LOCK_A }, { source: 'api' })
        const refusal = await core.units.delete(alice, id('held')).catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(LockConflictError)
        expect((refusal as LockConflictError).lock?.ID).toBe(LOCK_A)
        await core.units.delete(alice, id('held'), { force: true })
        await expect(core.units.get(alice, id('held'))).rejects.toBeInstanceOf(UnitNotFoundError)
      })
    })

    describe('writes and versions', () => {
      beforeEach(async () => {
        await core.units.create(alice, id('app'))
      })

      it('stores a state and serves the same bytes', async () => {
        const text = state(1, { serial: 1, outputs: { greeting: 'hello' } })
        await write('app', text)
        const download = await core.versions.download(alice, id('app'))
        expect(await textOf(download.body)).toBe(text)
      })

      it('answers state_not_found before the first write', async () => {
        await expect(core.versions.download(alice, id('app'))).rejects.toBeInstanceOf(
          StateNotFoundError,
        )
      })

      it('records each version with its hashes, size, serial, lineage, author and source', async () => {
        const text = state(3, { serial: 3, lineage: 'line-1' })
        clock.set(Date.parse('2026-03-04T05:06:07.089Z'))
        const version = await write('app', text, { source: 'http' }, bob)
        expect(version).toEqual({
          timestamp: '2026-03-04T05:06:07.089Z',
          sha256: createHash('sha256').update(text).digest('hex'),
          md5: createHash('md5').update(text).digest('hex'),
          size: Buffer.byteLength(text),
          serial: 3,
          lineage: 'line-1',
          author: 'bob',
          source: 'http',
        })
        const unit = await core.units.get(alice, id('app'))
        expect(unit).toMatchObject({
          serial: 3,
          lineage: 'line-1',
          size: version.size,
          sha256: version.sha256,
          version_count: 1,
        })
        expect(unit.updated).toBe('2026-03-04T05:06:07.089Z')
      })

      it('refuses a body that is not JSON and stores nothing', async () => {
        await write('app', state(1))
        for (const bad of [
          '',
          'not json',
          '{"version": 4,',
          state(2).slice(0, -3),
          '{"a":1} {"b":2}',
        ]) {
          await expect(write('app', bad)).rejects.toBeInstanceOf(InvalidStateError)
        }
        const unit = await core.units.get(alice, id('app'))
        expect(unit.version_count).toBe(1)
        expect(unit.serial).toBe(1)
      })

      it('stores JSON that is not a Terraform state as it is, without serial or lineage', async () => {
        const envelope =
          '{"encrypted_data":"c2VjcmV0","encryption_version":"v0","meta":{"key_provider.pbkdf2.k":"x"}}'
        const version = await write('app', envelope)
        expect(version).toMatchObject({ serial: null, lineage: null })
        expect(await textOf((await core.versions.download(alice, id('app'))).body)).toBe(envelope)
      })

      it('keeps a state OpenTofu encrypted on the client as it is, by its plain serial and lineage', async () => {
        // OpenTofu's shape (internal/encryption): serial and lineage stay plain beside the ciphertext.
        const sealed = (serial: number, data = 'AAEC') =>
          JSON.stringify({
            serial,
            lineage: 'l-1',
            meta: { 'key_provider.pbkdf2.k': 'e30=' },
            encrypted_data: data,
            encryption_version: 'v0',
          })
        const first = await write('app', sealed(3))
        expect(first).toMatchObject({ serial: 3, lineage: 'l-1', encrypted: 'client' })
        expect(await core.units.get(alice, id('app'))).toMatchObject({
          serial: 3,
          encrypted: 'client',
        })
        expect(await textOf((await core.versions.download(alice, id('app'))).body)).toBe(sealed(3))
        // The serial rules hold as for any state.
        await expect(write('app', sealed(2))).rejects.toBeInstanceOf(SerialConflictError)
        await expect(write('app', sealed(3, 'AAED'))).rejects.toBeInstanceOf(SerialConflictError)
        // The serial a `cloud` state version declares is the plain one.
        await write('app', sealed(4), { source: 'cloud', expected: { serial: 4, lineage: 'l-1' } })
        // A restore keeps the body as it was: OpenTofu checks the plain serial against its own.
        const restored = await core.states.restore(alice, id('app'), { timestamp: first.timestamp })
        expect(restored).toMatchObject({ serial: 3, encrypted: 'client' })
        expect(await textOf((await core.versions.download(alice, id('app'))).body)).toBe(sealed(3))
        // Plaintext after it is another state again.
        expect(await write('app', state(9))).not.toHaveProperty('encrypted')
        expect(await core.units.get(alice, id('app'))).not.toHaveProperty('encrypted')
      })

      it('refuses a state not encrypted on the client where client encryption is required', async () => {
        core = make({ requireClientEncryption: ['secure/*', 'vault'] })
        const sealed = JSON.stringify({
          serial: 1,
          lineage: 'l-1',
          meta: {},
          encrypted_data: 'AAEC',
          encryption_version: 'v0',
        })
        const refusal = await write('secure/app', state(1), { source: 'http', create: true }).catch(
          (error: unknown) => error,
        )
        expect(refusal).toBeInstanceOf(ClientEncryptionRequiredError)
        expect((refusal as ClientEncryptionRequiredError).details()).toEqual({ scope: 'secure/*' })
        await expect(
          write('vault', '{"a":1}', { source: 's3', create: true }),
        ).rejects.toBeInstanceOf(ClientEncryptionRequiredError)
        // Nothing was kept of the refused bodies.
        expect((await storedKeys()).filter((key) => key.includes('secure'))).toEqual([])
        await write('secure/app', sealed, { source: 'http', create: true })
        expect((await core.units.get(alice, id('secure/app'))).encrypted).toBe('client')
        await expect(write('secure/app', state(2))).rejects.toBeInstanceOf(
          ClientEncryptionRequiredError,
        )
        // Elsewhere any state goes.
        await write('other', state(1), { source: 'api', create: true })
        expect(() => make({ requireClientEncryption: ['bad scope/'] })).toThrow(InvalidRequestError)
      })

      it('refuses a Terraform state whose serial is not a whole number', async () => {
        await expect(
          write('app', '{"version":4,"serial":1.5,"lineage":"x"}'),
        ).rejects.toBeInstanceOf(InvalidStateError)
        await expect(
          write('app', '{"version":4,"serial":"1","lineage":"x"}'),
        ).rejects.toBeInstanceOf(InvalidStateError)
      })

      it('refuses a lower serial of the same lineage unless forced', async () => {
        await write('app', state(5))
        const refusal = await write('app', state(4)).catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(SerialConflictError)
        expect((refusal as SerialConflictError).current.serial).toBe(5)
        const forced = await write('app', state(4), { source: 'api', force: true })
        expect(forced.serial).toBe(4)
      })

      it('refuses the same serial with different bytes unless forced', async () => {
        await write('app', state(5, { serial: 5, outputs: { a: '1' } }))
        await expect(
          write('app', state(5, { serial: 5, outputs: { a: '2' } })),
        ).rejects.toBeInstanceOf(SerialConflictError)
        await write('app', state(5, { serial: 5, outputs: { a: '2' } }), {
          source: 'api',
          force: true,
        })
        expect((await core.units.get(alice, id('app'))).version_count).toBe(2)
      })

      it('accepts a lower serial of another lineage', async () => {
        await write('app', state(9, { serial: 9, lineage: 'one' }))
        const version = await write('app', state(1, { serial: 1, lineage: 'two' }))
        expect(version).toMatchObject({ serial: 1, lineage: 'two' })
      })

      it('takes the same bytes again as the current version, adding none', async () => {
        const first = await write('app', state(1))
        clock.advance(1000)
        const again = await write('app', state(1))
        expect(again).toEqual(first)
        expect((await core.units.get(alice, id('app'))).version_count).toBe(1)
      })

      it('refuses a body whose MD5 is not the one declared for it, and stores nothing', async () => {
        const text = state(1)
        const md5 = createHash('md5').update(text).digest('hex')
        await expect(
          write('app', text, {
            source: 'http',
            expectedMd5: md5.replace(/^./, md5.startsWith('0') ? '1' : '0'),
          }),
        ).rejects.toBeInstanceOf(ChecksumMismatchError)
        expect((await core.units.get(alice, id('app'))).version_count).toBe(0)
        expect(await storedKeys()).toEqual(['unit-records/app!.json'])
        expect(
          (await write('app', text, { source: 'http', expectedMd5: md5.toUpperCase() })).md5,
        ).toBe(md5)
      })

      it('refuses a state over the size limit and stores nothing', async () => {
        core = make({ maxStateBytes: 1000 })
        await expect(write('app', state(1, { serial: 1, resources: 50 }))).rejects.toBeInstanceOf(
          StateTooLargeError,
        )
        expect((await core.units.get(alice, id('app'))).version_count).toBe(0)
        expect(await storedKeys()).toEqual(['unit-records/app!.json'])
      })

      it('lists every version newest first, with strictly increasing timestamps', async () => {
        for (let serial = 1; serial <= 4; serial += 1) await write('app', state(serial))
        clock.advance(-60_000)
        await write('app', state(5))
        const { items, nextCursor } = await core.versions.list(alice, id('app'))
        expect(items.map((version) => version.serial)).toEqual([5, 4, 3, 2, 1])
        expect(nextCursor).toBeNull()
        const times = items.map((version) => Date.parse(version.timestamp))
        for (let index = 1; index < times.length; index += 1) {
          expect(times[index - 1]).toBeGreaterThan(times[index] as number)
        }
      })

      it('pages through versions with a cursor', async () => {
        for (let serial = 1; serial <= 7; serial += 1) await write('app', state(serial))
        const seen: (number | null)[] = []
        let cursor: string | undefined
        do {
          const page = await core.versions.list(alice, id('app'), {
            limit: 3,
            ...(cursor === undefined ? {} : { cursor }),
          })
          seen.push(...page.items.map((version) => version.serial))
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1])
      })

      it('loses no version when many writers write at once', async () => {
        core = createCore({ store, authorizer: allowAll })
        const count = 25
        const results = await Promise.all(
          Array.from({ length: count }, (_, index) =>
            write('app', JSON.stringify({ writer: index })),
          ),
        )
        const listed = await core.versions.list(alice, id('app'), { limit: 1000 })
        expect(listed.items).toHaveLength(count)
        expect(new Set(listed.items.map((version) => version.sha256))).toEqual(
          new Set(results.map((version) => version.sha256)),
        )
        expect((await core.units.get(alice, id('app'))).version_count).toBe(count)
      })
    })

    describe('locks', () => {
      beforeEach(async () => {
        await core.units.create(alice, id('app'))
      })

      const terraformLock = {
        ID: LOCK_A,
        Operation: 'OperationTypeApply',
        Info: '',
        Who: 'root@vm',
        Version: '1.11.4',
        Created: '2026-11-22T03:51:53.193653099Z',
        Path: '',
      }

      it("keeps Terraform's LockInfo whole and shows it in the unit's metadata", async () => {
        expect(await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })).toEqual(
          terraformLock,
        )
        expect(await core.units.get(alice, id('app'))).toMatchObject({
          locked: true,
          lock: terraformLock,
        })
      })

      it('generates the ID, Who and Created a lock request leaves out', async () => {
        const lock = await core.locks.lock(alice, id('app'), {}, { source: 'api' })
        expect(lock.ID).toMatch(/^[0-9a-f-]{36}$/)
        expect(lock).toMatchObject({
          Who: 'alice',
          Created: '2026-01-01T00:00:00.000Z',
          Operation: '',
          Path: '',
        })
      })

      it('refuses a second lock, naming the lock held', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        const refusal = await core.locks
          .lock(bob, id('app'), { ID: LOCK_B }, { source: 'api' })
          .catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(LockConflictError)
        expect((refusal as LockConflictError).lock).toEqual(terraformLock)
      })

      it('accepts the held lock ID again, as a retried request', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        expect(await core.locks.lock(alice, id('app'), { ID: LOCK_A }, { source: 'http' })).toEqual(
          terraformLock,
        )
      })

      it('gives the lock to exactly one of 50 concurrent requests', async () => {
        core = createCore({ store, authorizer: allowAll })
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, () =>
            core.locks.lock(alice, id('app'), {}, { source: 'api' }),
          ),
        )
        const won = results.filter((result) => result.status === 'fulfilled')
        expect(won).toHaveLength(1)
        for (const result of results) {
          if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(LockConflictError)
        }
        const held = (await core.units.get(alice, id('app'))).lock
        expect(held?.ID).toBe((won[0] as PromiseFulfilledResult<{ ID: string }>).value.ID)
      })

      it('unlocks with the holder ID and refuses another ID, naming the lock held', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        const refusal = await core.locks
          .unlock(bob, id('app'), { lockId: LOCK_B, source: 'api' })
          .catch((error: unknown) => error)
        expect(refusal).toBeInstanceOf(LockConflictError)
        expect((refusal as LockConflictError).lock?.ID).toBe(LOCK_A)
        expect(
          await core.locks.unlock(alice, id('app'), { lockId: LOCK_A, source: 'http' }),
        ).toEqual(terraformLock)
        expect((await core.units.get(alice, id('app'))).locked).toBe(false)
      })

      it('answers an unlock of an unlocked unit with no lock and no change', async () => {
        expect(
          await core.locks.unlock(alice, id('app'), { lockId: LOCK_A, source: 'api' }),
        ).toBeNull()
      })

      it('refuses an unlock that names no lock and does not force', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        await expect(core.locks.unlock(alice, id('app'), { source: 'api' })).rejects.toBeInstanceOf(
          InvalidRequestError,
        )
      })

      it('force-unlocks any lock and records it in the history', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        expect(await core.locks.unlock(bob, id('app'), { force: true, source: 'http' })).toEqual(
          terraformLock,
        )
        expect((await core.units.get(alice, id('app'))).locked).toBe(false)
        const history = await core.versions.history(alice, id('app'))
        expect(history.items).toEqual([
          {
            timestamp: '2026-01-01T00:00:00.000Z',
            type: 'force_unlock',
            actor: 'bob',
            source: 'http',
            lock: terraformLock,
          },
        ])
      })

      it("refuses another principal's unlock even with the lock's ID, and keeps the lock", async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        // The same subject from another issuer is another principal too.
        const otherAlice = { subject: 'alice', issuer: 'https://elsewhere.example' }
        for (const who of [bob, otherAlice]) {
          for (const source of ['http', 'api'] as const) {
            const refusal = await core.locks
              .unlock(who, id('app'), { lockId: LOCK_A, source })
              .catch((error: unknown) => error)
            expect(refusal).toBeInstanceOf(LockConflictError)
            expect((refusal as LockConflictError).lock).toEqual(terraformLock)
            expect((refusal as Error).message).toContain(
              'only its holder, or someone with unit:manage using force, may unlock it',
            )
          }
        }
        expect((await core.units.get(alice, id('app'))).lock).toEqual(terraformLock)
        expect((await core.versions.history(alice, id('app'))).items).toEqual([])
      })

      it("refuses another principal's write and restore naming the held lock, changing nothing", async () => {
        const first = await write('app', state(1))
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        const attempts = [
          () => write('app', state(2), { source: 'api', lockId: LOCK_A }, bob),
          () => write('app', state(2), { source: 'http', lockId: LOCK_A }, bob),
          () => core.states.restore(bob, id('app'), { timestamp: first.timestamp, lockId: LOCK_A }),
        ]
        for (const attempt of attempts) {
          const error = await attempt().catch((caught: unknown) => caught)
          expect(error).toBeInstanceOf(LockConflictError)
          expect((error as LockConflictError).lock).toEqual(terraformLock)
          expect((error as Error).message).toContain('only its holder may write under it')
        }
        expect(await core.units.get(alice, id('app'))).toMatchObject({
          serial: 1,
          version_count: 1,
          lock: terraformLock,
        })
        // The holder still writes and restores under its lock.
        expect((await write('app', state(2), { source: 'api', lockId: LOCK_A })).serial).toBe(2)
        const restored = await core.states.restore(alice, id('app'), {
          timestamp: first.timestamp,
          lockId: LOCK_A,
        })
        expect(restored.serial).toBe(3)
      })

      it("gives no one else the lock for sending the held lock's ID", async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        await expect(
          core.locks.lock(bob, id('app'), { ID: LOCK_A }, { source: 'http' }),
        ).rejects.toBeInstanceOf(LockConflictError)
      })

      it("records another principal's forced unlock as forced, even when it names the lock", async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        const released = await core.locks.unlock(bob, id('app'), {
          lockId: LOCK_A,
          force: true,
          source: 'api',
        })
        expect(released).toEqual(terraformLock)
        expect((await core.units.get(alice, id('app'))).locked).toBe(false)
        expect((await core.versions.history(alice, id('app'))).items).toEqual([
          expect.objectContaining({ type: 'force_unlock', actor: 'bob', lock: terraformLock }),
        ])
      })

      it('forces open only the lock a forced unlock names', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        await expect(
          core.locks.unlock(bob, id('app'), { lockId: LOCK_B, force: true, source: 'api' }),
        ).rejects.toBeInstanceOf(LockConflictError)
        expect((await core.units.get(alice, id('app'))).lock).toEqual(terraformLock)
        expect((await core.versions.history(alice, id('app'))).items).toEqual([])
      })

      it('releases no lock taken after the unlock was signed, by the same principal too', async () => {
        const second = 1000
        clock.advance(10 * second + 400)
        const signed = clock.now()
        // Taken through a signed request: compared with that request's own time.
        await core.locks.lock(alice, id('app'), terraformLock, { source: 's3', signedAt: signed })
        const replay = { source: 's3' as const, asHolder: true, signedAt: signed - second }
        await expect(core.locks.unlock(alice, id('app'), replay)).rejects.toBeInstanceOf(
          PreconditionError,
        )
        await expect(
          core.locks.unlock(alice, id('app'), { ...replay, force: true }),
        ).rejects.toBeInstanceOf(PreconditionError)
        expect((await core.units.get(alice, id('app'))).lock).toEqual(terraformLock)
        expect(await core.locks.unlock(alice, id('app'), { ...replay, signedAt: signed })).toEqual(
          terraformLock,
        )

        // Taken with no signed time: compared with the server's, to the second signing keeps.
        await core.locks.lock(alice, id('app'), {}, { source: 'api' })
        const whole = Math.floor(clock.now() / second) * second
        await expect(
          core.locks.unlock(bob, id('app'), { source: 's3', force: true, signedAt: whole - 1 }),
        ).rejects.toBeInstanceOf(PreconditionError)
        expect(
          await core.locks.unlock(bob, id('app'), { source: 's3', force: true, signedAt: whole }),
        ).not.toBeNull()
      })

      it('refuses a write while locked unless it names the lock held', async () => {
        await core.locks.lock(alice, id('app'), terraformLock, { source: 'http' })
        await expect(write('app', state(1))).rejects.toBeInstanceOf(LockConflictError)
        await expect(
          write('app', state(1), { source: 'api', lockId: LOCK_B }),
        ).rejects.toBeInstanceOf(LockConflictError)
        expect((await write('app', state(1), { source: 'api', lockId: LOCK_A })).serial).toBe(1)
      })

      it('refuses a write that names a lock when the unit is not locked', async () => {
        const refusal = await write('app', state(1), { source: 'api', lockId: LOCK_A }).catch(
          (error: unknown) => error,
        )
        expect(refusal).toBeInstanceOf(LockConflictError)
        expect((refusal as LockConflictError).lock).toBeNull()
        expect((await core.units.get(alice, id('app'))).version_count).toBe(0)
      })

      it('lets the lock holder write without a lock ID only through the protocol it locked with', async () => {
        await core.locks.lock(alice, id('app'), {}, { source: 'cloud' })
        await expect(
          write('app', state(1), { source: 'cloud', asHolder: true }, bob),
        ).rejects.toBeInstanceOf(LockConflictError)
        await expect(
          write('app', state(1), { source: 's3', asHolder: true }),
        ).rejects.toBeInstanceOf(LockConflictError)
        expect((await write('app', state(1), { source: 'cloud', asHolder: true })).serial).toBe(1)
      })

      it('creates a missing unit on lock when asked', async () => {
        await core.locks.lock(alice, id('fresh'), { ID: LOCK_A }, { source: 'http', create: true })
        expect(await core.units.get(alice, id('fresh'))).toMatchObject({
          locked: true,
          version_count: 0,
        })
      })
    })

    describe('settings, single versions and outputs', () => {
      beforeEach(async () => {
        await core.units.create(alice, id('app'), { tags: ['a'] })
      })

      it('changes the tags and the workspace Terraform version, keeping the rest', async () => {
        await write('app', state(1))
        const details = await core.units.update(alice, id('app'), {
          tags: ['env:prod', 'app'],
          terraformVersion: '1.11.4',
        })
        expect(details).toMatchObject({
          tags: ['env:prod', 'app'],
          terraform_version: '1.11.4',
          serial: 1,
        })
        expect((await core.units.details(alice, id('app'))).terraform_version).toBe('1.11.4')
        await expect(
          core.units.update(alice, id('app'), { tags: ['bad tag'] }),
        ).rejects.toBeInstanceOf(InvalidRequestError)
        await expect(core.units.update(alice, id('nope'), { tags: [] })).rejects.toBeInstanceOf(
          UnitNotFoundError,
        )
      })

      it('reads and downloads one version by its timestamp', async () => {
        const first = await write('app', state(1, { serial: 1, outputs: { v: 'one' } }))
        clock.advance(1000)
        await write('app', state(2, { serial: 2, outputs: { v: 'two' } }))
        expect(await core.versions.version(alice, id('app'), first.timestamp)).toEqual(first)
        const old = await core.versions.downloadVersion(alice, id('app'), first.timestamp)
        expect(await textOf(old.body)).toBe(state(1, { serial: 1, outputs: { v: 'one' } }))
        await expect(
          core.versions.version(alice, id('app'), '2001-01-01T00:00:00Z'),
        ).rejects.toBeInstanceOf(VersionNotFoundError)
      })

      it('downloads a range of the current state and of an older version, with their sizes', async () => {
        const one = state(1, { serial: 1, outputs: { v: 'one' } })
        const two = state(2, { serial: 2, outputs: { v: 'two' } })
        const first = await write('app', one)
        clock.advance(1000)
        await write('app', two)
        const current = await core.versions.download(alice, id('app'), {
          range: { start: 10, end: 29 },
        })
        expect(current.version.size).toBe(two.length)
        expect(await textOf(current.body)).toBe(two.slice(10, 30))
        const tail = { start: one.length - 5, end: one.length - 1 }
        const old = await core.versions.downloadVersion(alice, id('app'), first.timestamp, {
          range: tail,
        })
        expect(old.version).toEqual(first)
        expect(await textOf(old.body)).toBe(one.slice(-5))
        await expect(
          core.versions.download(alice, id('app'), {
            range: { start: two.length, end: two.length + 10 },
          }),
        ).rejects.toBeInstanceOf(RangeNotSatisfiableError)
      })

      it("reads a version's outputs, sensitive ones marked", async () => {
        const text = JSON.stringify({
          version: 4,
          serial: 1,
          lineage: 'l',
          outputs: {
            name: { value: 'web', type: 'string' },
            secret: { value: 's3cr3t', type: 'string', sensitive: true },
          },
          resources: [],
        })
        const first = await write('app', text)
        expect((await core.versions.outputs(alice, id('app'))).outputs).toEqual({
          name: { value: 'web', type: 'string', sensitive: false },
          secret: { value: 's3cr3t', type: 'string', sensitive: true },
        })
        expect((await core.versions.outputs(alice, id('app'), first.timestamp)).version).toEqual(
          first,
        )
        await write('app', '{"encrypted_data":"x"}')
        expect((await core.versions.outputs(alice, id('app'))).outputs).toBeNull()
      })

      it('refuses a body whose serial or lineage is not the one declared, storing nothing', async () => {
        await expect(
          write('app', state(3), { source: 'cloud', expected: { serial: 4, lineage: 'x' } }),
        ).rejects.toBeInstanceOf(InvalidStateError)
        await expect(
          write('app', '{"a":1}', { source: 'cloud', expected: { serial: 1, lineage: 'l' } }),
        ).rejects.toBeInstanceOf(InvalidStateError)
        expect((await core.units.get(alice, id('app'))).version_count).toBe(0)
        const lineage = JSON.parse(state(3)) as { lineage: string }
        expect(
          (
            await write('app', state(3), {
              source: 'cloud',
              expected: { serial: 3, lineage: lineage.lineage },
            })
          ).serial,
        ).toBe(3)
      })

      it("takes a lower serial from the lock's holder when told to, and from no one else", async () => {
        await write('app', state(5))
        await expect(
          write('app', state(3), { source: 'cloud', holderOverridesSerial: true }),
        ).rejects.toBeInstanceOf(SerialConflictError)
        await core.locks.lock(alice, id('app'), {}, { source: 'cloud' })
        await expect(
          write('app', state(3), { source: 'cloud', asHolder: true }),
        ).rejects.toBeInstanceOf(SerialConflictError)
        await expect(
          write(
            'app',
            state(3),
            { source: 'cloud', asHolder: true, holderOverridesSerial: true },
            bob,
          ),
        ).rejects.toBeInstanceOf(LockConflictError)
        const taken = await write('app', state(3), {
          source: 'cloud',
          asHolder: true,
          holderOverridesSerial: true,
        })
        expect(taken.serial).toBe(3)
      })

      it('unlocks for the holder through the same protocol, and refuses anyone else', async () => {
        await core.locks.lock(alice, id('app'), {}, { source: 'cloud' })
        await expect(
          core.locks.unlock(bob, id('app'), { source: 'cloud', asHolder: true }),
        ).rejects.toBeInstanceOf(LockConflictError)
        await expect(
          core.locks.unlock(alice, id('app'), { source: 'api', asHolder: true }),
        ).rejects.toBeInstanceOf(LockConflictError)
        expect(
          await core.locks.unlock(alice, id('app'), { source: 'cloud', asHolder: true }),
        ).not.toBeNull()
      })
    })

    describe('restore', () => {
      beforeEach(async () => {
        await core.units.create(alice, id('app'))
      })

      it('copies an old version forward with the serial moved past the current one', async () => {
        const first = await write('app', state(1, { serial: 1, outputs: { v: 'one' } }))
        clock.advance(1000)
        await write('app', state(2, { serial: 2, outputs: { v: 'two' } }))
        clock.advance(1000)
        const restored = await core.states.restore(bob, id('app'), { timestamp: first.timestamp })
        expect(restored).toMatchObject({ serial: 3, source: 'restore', author: 'bob' })
        const body = JSON.parse(
          await textOf((await core.versions.download(alice, id('app'))).body),
        ) as Record<string, unknown>
        expect(body).toEqual(JSON.parse(state(3, { serial: 3, outputs: { v: 'one' } })))
        expect(
          (await core.versions.list(alice, id('app'))).items.map((version) => version.serial),
        ).toEqual([3, 2, 1])
        expect((await write('app', state(4, { serial: 4, outputs: { v: 'one' } }))).serial).toBe(4)
      })

      it('finds the version by any RFC 3339 spelling of its time', async () => {
        const first = await write('app', state(1))
        clock.advance(1000)
        await write('app', state(2))
        const spelled = first.timestamp.replace('Z', '+00:00')
        expect((await core.states.restore(alice, id('app'), { timestamp: spelled })).serial).toBe(3)
      })

      it('answers version_not_found for a time with no version, and refuses a malformed time', async () => {
        await write('app', state(1))
        await expect(
          core.states.restore(alice, id('app'), { timestamp: '2020-01-01T00:00:00Z' }),
        ).rejects.toBeInstanceOf(VersionNotFoundError)
        await expect(
          core.states.restore(alice, id('app'), { timestamp: 'yesterday' }),
        ).rejects.toBeInstanceOf(InvalidRequestError)
      })

      it('needs the lock ID while the unit is locked', async () => {
        const first = await write('app', state(1))
        clock.advance(1000)
        await write('app', state(2))
        await core.locks.lock(alice, id('app'), { ID: LOCK_A }, { source: 'api' })
        await expect(
          core.states.restore(alice, id('app'), { timestamp: first.timestamp }),
        ).rejects.toBeInstanceOf(LockConflictError)
        expect(
          (
            await core.states.restore(alice, id('app'), {
              timestamp: first.timestamp,
              lockId: LOCK_A,
            })
          ).serial,
        ).toBe(3)
      })
    })

    describe('authorization', () => {
      it('asks the authorizer before every operation and changes nothing when refused', async () => {
        await core.units.create(alice, id('app'))
        await write('app', state(1))
        const asked: string[] = []
        const denyAll: Authorizer = {
          can: (principal, permission, unit) => {
            asked.push(`${permission} ${unit}`)
            return false
          },
          isAdmin: () => false,
        }
        const guarded = make({ authorizer: denyAll })
        const attempts: (() => Promise<unknown>)[] = [
          () => guarded.units.create(bob, id('other')),
          () => guarded.units.get(bob, id('app')),
          () => guarded.versions.download(bob, id('app')),
          () => guarded.states.write(bob, id('app'), bytesOf(state(2)), { source: 'api' }),
          () => guarded.locks.lock(bob, id('app'), {}, { source: 'api' }),
          () => guarded.locks.unlock(bob, id('app'), { source: 'api', force: true }),
          () => guarded.versions.list(bob, id('app')),
          () => guarded.states.restore(bob, id('app'), { timestamp: '2026-01-01T00:00:00Z' }),
          () => guarded.units.delete(bob, id('app')),
        ]
        for (const attempt of attempts)
          await expect(attempt()).rejects.toBeInstanceOf(ForbiddenError)
        expect(asked).toEqual([
          'unit:write other',
          'unit:read app',
          'unit:read app',
          'unit:write app',
          'unit:lock app',
          'unit:manage app',
          'unit:read app',
          'unit:write app',
          'unit:manage app',
        ])
        expect((await guarded.units.list(bob)).items).toEqual([])
        expect(await core.units.get(alice, id('app'))).toMatchObject({
          serial: 1,
          locked: false,
          version_count: 1,
        })
      })
    })
  })
}
