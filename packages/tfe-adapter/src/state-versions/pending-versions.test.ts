import { collectBytes, createCore, parseUnitId, type ObjectStore, allowAll } from '@cairn/core'
import { createMemoryStore, ManualClock } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { alice, LINEAGE, md5, setup, stateText, type Harness } from '../../test/harness'
import { PendingVersions } from './pending-versions'

const WS = 'ws-app-prod'
const ID = 'sv-p-0mjuohs000123456789abcdef01234567'
const KEY = `tfe/state-versions/${ID}.json`

/** A record exactly as earlier releases wrote it: their key order, two-space JSON, a newline. */
function storedBefore(id: string, declared: { serial: number; md5: string }): Uint8Array {
  return Buffer.from(`{
  "unit": "app-prod",
  "serial": ${String(declared.serial)},
  "lineage": "${LINEAGE}",
  "md5": "${declared.md5}",
  "force": false,
  "principal": {
    "subject": "alice",
    "email": "alice@example.test",
    "groups": [],
    "roles": []
  },
  "id": "${id}",
  "created": "2026-01-01T00:00:00.000Z",
  "version": null
}
`)
}

const textOf = async (store: ObjectStore, key: string): Promise<unknown> => {
  const object = await store.get(key)
  if (object === undefined) throw new Error(`no ${key}`)
  return JSON.parse(new TextDecoder().decode(await collectBytes(object.body))) as unknown
}

/** The adapter with its memory store in hand, workspace app-prod locked by alice. */
async function lockedWithStore(): Promise<{ h: Harness; store: ObjectStore }> {
  let store: ObjectStore | undefined
  const h = setup({
    store: (memory) => {
      store = memory
      return memory
    },
  })
  await h.workspace('app-prod')
  expect((await h.lock(WS)).status).toBe(200)
  if (store === undefined) throw new Error('the harness kept no store')
  return { h, store }
}

describe('pending state versions in the store', () => {
  it('reads a record stored by earlier releases, and finishes it in the same shape', async () => {
    const store = createMemoryStore()
    await store.put(KEY, storedBefore(ID, { serial: 3, md5: 'a'.repeat(32) }))
    const pending = new PendingVersions(
      createCore({ store, authorizer: allowAll, clock: new ManualClock() }),
    )
    const found = await pending.get(ID)
    expect(found?.record).toStrictEqual({
      id: ID,
      unit: 'app-prod',
      serial: 3,
      lineage: LINEAGE,
      md5: 'a'.repeat(32),
      force: false,
      created: '2026-01-01T00:00:00.000Z',
      principal: { subject: 'alice', email: 'alice@example.test', groups: [], roles: [] },
      version: null,
    })
    if (found === undefined) return
    expect(await pending.finish(found.record, found.etag, '2026-01-01T00:00:01.000Z')).toBe(true)
    expect(await textOf(store, KEY)).toStrictEqual({
      ...found.record,
      version: '2026-01-01T00:00:01.000Z',
    })
  })

  it('writes new records at the same key, with the same ID form and fields', async () => {
    const store = createMemoryStore()
    const pending = new PendingVersions(
      createCore({ store, authorizer: allowAll, clock: new ManualClock() }),
    )
    const record = await pending.create({
      unit: 'team/app',
      serial: 1,
      lineage: LINEAGE,
      md5: 'b'.repeat(32),
      force: true,
      principal: { subject: 'carol', issuer: 'https://id.example.test', groups: ['ops'] },
    })
    expect(record.id).toMatch(/^sv-p-[0-9a-z]{9}[0-9a-f]{24}$/)
    expect(await textOf(store, `tfe/state-versions/${record.id}.json`)).toStrictEqual({
      id: record.id,
      unit: 'team/app',
      serial: 1,
      lineage: LINEAGE,
      md5: 'b'.repeat(32),
      force: true,
      created: '2026-01-01T00:00:00.000Z',
      principal: {
        subject: 'carol',
        issuer: 'https://id.example.test',
        groups: ['ops'],
        roles: [],
      },
      version: null,
    })
  })

  it('forgets records a day old when the next state version is created', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const pending = new PendingVersions(createCore({ store, authorizer: allowAll, clock }))
    const fields = { unit: 'a', serial: 1, lineage: 'l', md5: 'c'.repeat(32), force: false }
    const old = await pending.create({ ...fields, principal: alice })
    clock.advance(12 * 3600 * 1000)
    const younger = await pending.create({ ...fields, principal: alice })
    clock.advance(12 * 3600 * 1000 + 1)
    await pending.create({ ...fields, principal: alice })
    expect(await pending.get(old.id)).toBeUndefined()
    expect(await pending.get(younger.id)).toBeDefined()
  })

  it('finishes the upload of a record stored by earlier releases, as the principal it names', async () => {
    const { h, store } = await lockedWithStore()
    const state = stateText(1)
    const created = await h.createStateVersion(WS, state)
    const { id, attributes } = created.one()
    await store.put(
      `tfe/state-versions/${id}.json`,
      storedBefore(id, { serial: 1, md5: md5(state) }),
    )
    const upload = await h.upload(String(attributes['hosted-state-upload-url']), state)
    expect(upload.status, upload.text).toBe(200)
    const read = await h.api('GET', `/state-versions/${id}`)
    expect(read.one().attributes).toMatchObject({ status: 'finalized', serial: 1 })
    const versions = await h.core.versions.list(alice, parseUnitId('app-prod'))
    expect(versions.items[0]).toMatchObject({ author: 'alice', md5: md5(state) })
  })
})

describe('a pending state version record of the wrong shape', () => {
  it('is storage trouble naming its key, to a read and to an upload: 503, never a 500', async () => {
    const { h, store } = await lockedWithStore()
    const state = stateText(1)
    const created = await h.createStateVersion(WS, state)
    const { id, attributes } = created.one()
    const key = `tfe/state-versions/${id}.json`
    const before = storedBefore(id, { serial: 1, md5: md5(state) })
    const damaged = JSON.parse(Buffer.from(before).toString()) as Record<string, unknown>
    await store.put(key, Buffer.from(JSON.stringify({ ...damaged, serial: '1' })))

    await expect(
      new PendingVersions(createCore({ store, authorizer: allowAll, clock: h.clock })).get(id),
    ).rejects.toMatchObject({
      code: 'storage_unavailable',
    })
    const read = await h.api('GET', `/state-versions/${id}`)
    expect(read.status).toBe(503)
    expect(read.error().detail).toContain(key)
    const upload = await h.upload(String(attributes['hosted-state-upload-url']), state)
    expect(upload.status).toBe(503)
    expect((await h.unit('app-prod')).version_count).toBe(0)
  })
})
