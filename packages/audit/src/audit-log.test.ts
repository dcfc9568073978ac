import { describe, expect, it } from 'vitest'
import {
  collectBytes,
  createMemoryStore,
  InvalidRequestError,
  listAllKeys,
  randomIds,
  type IdSource,
  type ObjectStore,
} from '@cairn/core'
import { ManualClock, useStoreDrivers } from '@cairn/core/testing'
import { AuditLog, type AuditLogOptions } from './audit-log'
import type { AuditEntry, AuditRecord } from './audit-record'

const HOUR = 3600 * 1000
const DAY = 24 * HOUR
const START = Date.parse('2026-01-01T00:00:00.000Z')

const { drivers } = useStoreDrivers('audit')

/** Every key of the audit folder, in byte order. */
async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const key of listAllKeys(store, 'audit/')) keys.push(key)
  return keys
}

/** IDs that count up, so runs repeat. */
function countingIds(): IdSource {
  let next = 0
  return { uuid: () => randomIds.uuid(), token: () => (next++).toString(16).padStart(8, '0') }
}

function entry(fields: Partial<AuditEntry> = {}): AuditEntry {
  return {
    action: 'state.write',
    outcome: { status: 200 },
    principal: { subject: 'alice', issuer: 'https://id.example.test' },
    surface: 'http',
    unit: 'team/app/prod',
    ...fields,
  }
}

describe.each(drivers)('the audit log on the %s store', (_name, open) => {
  async function setup(more: Partial<AuditLogOptions> = {}) {
    const store = await open()
    const clock = new ManualClock(START)
    const log = new AuditLog({ store, clock, ids: countingIds(), ...more })
    return { store, clock, log }
  }

  /** Every record of a query, page by page, checking each cursor along the way. */
  async function everything(log: AuditLog, query: Parameters<AuditLog['query']>[0] = {}) {
    const records: AuditRecord[] = []
    let cursor: string | undefined
    for (let pages = 0; pages < 1000; pages += 1) {
      const page = await log.query({ ...query, ...(cursor === undefined ? {} : { cursor }) })
      records.push(...page.records)
      if (page.nextCursor === null) return records
      cursor = page.nextCursor
    }
    throw new Error('the query never ended')
  }

  it('answers newest first across days, one object per record under its day', async () => {
    const { store, clock, log } = await setup()
    clock.set(START + 10 * HOUR)
    const a = await log.append(entry({ unit: 'a' }))
    clock.set(START + 12 * HOUR)
    const b = await log.append(entry({ unit: 'b' }))
    clock.set(START + DAY + HOUR)
    const c = await log.append(
      entry({ unit: 'c', outcome: { status: 409, error: 'lock_conflict' } }),
    )

    expect(a.time).toBe('2026-01-01T10:00:00.000Z')
    const page = await log.query()
    expect(page.records).toEqual([c, b, a])
    expect(page.nextCursor).toBeNull()
    const keys = await keysOf(store)
    expect(keys).toEqual([
      `audit/2026-01-01/${b.id}.json`,
      `audit/2026-01-01/${a.id}.json`,
      `audit/2026-01-02/${c.id}.json`,
    ])
  })

  it.each([
    ['unit', { unit: 'team/app' }, ['team/app']],
    [
      'prefix (by characters)',
      { prefix: 'team/app' },
      ['team/app', 'team/app/prod', 'team/apply', 'team/app/prod'],
    ],
    ['principal', { principal: 'bob' }, ['team/app/prod', 'other']],
    ['action', { action: 'lock' as const }, ['team/app']],
    ['surface', { surface: 'web' as const }, ['other']],
    ['outcome refused (4xx)', { outcome: 'refused' as const }, ['team/apply']],
    ['outcome failed (5xx)', { outcome: 'failed' as const }, ['other']],
  ])('filters by %s', async (_filter, query, units) => {
    const { clock, log } = await setup()
    const appended: [Partial<AuditEntry>][] = [
      [{ unit: 'team/app', action: 'lock' }],
      [{ unit: 'team/app/prod', principal: { subject: 'bob' } }],
      [
        {
          unit: 'other',
          principal: { subject: 'bob' },
          surface: 'web',
          outcome: { status: 503, error: 'storage_unavailable' },
        },
      ],
      [{ unit: 'team/apply', principal: null, outcome: { status: 401, error: 'unauthorized' } }],
    ]
    for (const [fields] of appended) {
      clock.advance(HOUR)
      await log.append(entry(fields))
    }
    clock.advance(HOUR)
    await log.append(entry({ action: 'login' }))
    const { records } = await log.query(query)
    expect(records.map((record) => record.unit).reverse()).toEqual(units)
  })

  it('keeps to since (inclusive) and until (exclusive)', async () => {
    const { clock, log } = await setup()
    const times: string[] = []
    for (let hour = 0; hour < 60; hour += 6) {
      clock.set(START + hour * HOUR)
      times.push((await log.append(entry())).time)
    }
    const { records } = await log.query({
      since: '2026-01-01T12:00:00.000Z',
      until: '2026-01-02T18:00:00.000Z',
    })
    expect(records.map((record) => record.time)).toEqual(
      times
        .filter((t) => t >= '2026-01-01T12:00:00.000Z' && t < '2026-01-02T18:00:00.000Z')
        .reverse(),
    )
    expect(records).toHaveLength(5)
    const offset = await log.query({
      since: '2026-01-02T01:00:00+01:00',
      until: '2026-01-02T07:00:00+01:00',
    })
    expect(offset.records.map((record) => record.time)).toEqual(['2026-01-02T00:00:00.000Z'])
    expect(
      (await log.query({ since: '2026-01-03T00:00:00Z', until: '2026-01-01T00:00:00Z' })).records,
    ).toEqual([])
  })

  it('gives every record exactly once, in order, page by page', async () => {
    const { clock, log } = await setup()
    for (let index = 0; index < 37; index += 1) {
      // Several records share each millisecond; they spread over four days.
      if (index % 3 === 0) clock.advance(7 * HOUR)
      await log.append(entry({ unit: `u${index}` }))
    }
    const all = (await log.query({ limit: 1000 })).records
    expect(all).toHaveLength(37)
    expect(all.map((record) => record.time)).toEqual(
      all
        .map((record) => record.time)
        .sort()
        .reverse(),
    )
    for (const limit of [1, 4, 10, 37]) {
      expect(await everything(log, { limit })).toEqual(all)
    }
    const window = { since: '2026-01-02T04:00:00.000Z', until: '2026-01-03T18:00:00.000Z' }
    const inWindow = all.filter(
      (record) => record.time >= window.since && record.time < window.until,
    )
    expect(inWindow.length).toBeGreaterThan(10)
    expect(await everything(log, { ...window, limit: 2 })).toEqual(inWindow)
    const last = await log.query({ limit: 37 })
    expect(last.nextCursor).toBeNull()
  })

  it('stops a rare filter after its read budget and lets the caller go on', async () => {
    const { clock, log } = await setup({ maxReadsPerQuery: 5 })
    for (let index = 0; index < 12; index += 1) {
      clock.advance(HOUR)
      await log.append(entry({ unit: index === 0 ? 'rare' : 'common' }))
    }
    const first = await log.query({ unit: 'rare' })
    expect(first.records).toEqual([])
    expect(first.nextCursor).not.toBeNull()
    const found = await everything(log, { unit: 'rare' })
    expect(found.map((record) => record.unit)).toEqual(['rare'])
  })

  it.each([
    ['not base64url', 'not a cursor!'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    [
      'the wrong shape',
      Buffer.from(JSON.stringify({ d: 'yesterday', k: 'x' })).toString('base64url'),
    ],
    [
      'extra fields',
      Buffer.from(JSON.stringify({ d: '2026-01-01', k: `${'9'.repeat(15)}-a`, x: 1 })).toString(
        'base64url',
      ),
    ],
  ])('refuses a cursor that is %s', async (_what, cursor) => {
    const { log } = await setup()
    await log.append(entry())
    await expect(log.query({ cursor })).rejects.toThrow(InvalidRequestError)
  })

  it.each([
    ['a limit of 0', { limit: 0 }],
    ['a limit over 1000', { limit: 1001 }],
    ['a since that is no timestamp', { since: 'yesterday' }],
    ['an unknown action', { action: 'state.eat' }],
    ['an unknown filter', { body: 'x' }],
  ])('refuses a query with %s', async (_what, query) => {
    const { log } = await setup()
    await expect(log.query(query as never)).rejects.toThrow(InvalidRequestError)
  })

  it('loses no record when two instances append at once', async () => {
    const store = await open()
    const clock = new ManualClock(START)
    const one = new AuditLog({ store, clock, ids: randomIds })
    const two = new AuditLog({ store, clock, ids: randomIds })
    await Promise.all(
      Array.from({ length: 50 }, (_, index) => [
        one.append(entry({ unit: `one/${index}` })),
        two.append(entry({ unit: `two/${index}` })),
      ]).flat(),
    )
    const ids = (await one.query({ limit: 1000 })).records.map((record) => record.id)
    expect(new Set(ids).size).toBe(100)
  })

  it('draws a new name when another record took the one it drew', async () => {
    const store = await open()
    const clock = new ManualClock(START)
    const same: IdSource = { uuid: () => randomIds.uuid(), token: () => 'same' }
    const one = new AuditLog({ store, clock, ids: same })
    await one.append(entry())
    let calls = 0
    const two = new AuditLog({
      store,
      clock,
      ids: { uuid: () => randomIds.uuid(), token: () => (calls++ === 0 ? 'same' : 'other') },
    })
    const record = await two.append(entry())
    expect(record.id.endsWith('-other')).toBe(true)
    expect((await one.query()).records).toHaveLength(2)
  })

  it('sweeps only the days past the retention, oldest first, a bounded number at a time', async () => {
    const { store, clock, log } = await setup({ retentionMs: 10 * DAY, sweepLimit: 3 })
    for (let day = 0; day < 4; day += 1) {
      for (let hour = 0; hour < 2; hour += 1) {
        clock.set(START + day * DAY + hour * HOUR)
        await log.append(entry({ unit: `day${day}` }))
      }
    }
    // 10 days before this is 2026-01-03T12:00: days 0 and 1 are wholly past, day 2 only in part.
    const now = START + 12 * DAY + 12 * HOUR
    clock.set(now)
    expect(await log.sweep(now)).toEqual({ deleted: 3, complete: false })
    expect(await log.sweep(now)).toEqual({ deleted: 1, complete: true })
    expect(await log.sweep(now)).toEqual({ deleted: 0, complete: true })
    const keys = await keysOf(store)
    expect(keys.map((key) => key.slice(0, 17))).toEqual([
      'audit/2026-01-03/',
      'audit/2026-01-03/',
      'audit/2026-01-04/',
      'audit/2026-01-04/',
    ])
    // What is left but past the retention is not answered: day 2 before 12:00.
    const units = (await log.query()).records.map((record) => record.unit)
    expect(units).toEqual(['day3', 'day3'])
  })

  it('sweeps from append at most once an hour, and at once again after a sweep cut short', async () => {
    const { store, clock, log } = await setup({ retentionMs: DAY, sweepLimit: 2 })
    for (let index = 0; index < 5; index += 1) await log.append(entry())
    clock.advance(3 * DAY)
    const count = async () => (await keysOf(store)).length
    await log.append(entry()) // sweeps two of five, cut short
    expect(await count()).toBe(4)
    await log.append(entry()) // sweeps two more
    await log.append(entry()) // sweeps the last: complete
    expect(await count()).toBe(3)
    clock.advance(2 * DAY)
    await log.append(entry()) // an hour has passed: sweeps again, cut short
    expect(await count()).toBe(2)
  })

  it.each([
    ['an over-long unit', { unit: 'u'.repeat(513) }],
    ['an over-long subject', { principal: { subject: 's'.repeat(513) } }],
    ['an over-long detail', { detail: { reason: 'r'.repeat(513) } }],
    [
      'too many details',
      { detail: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
    ],
    ['an error that is no code', { outcome: { status: 403, error: 'Forbidden: alice may not' } }],
    ['an unknown action', { action: 'state.eat' }],
    ['an unknown surface', { surface: 'ftp' }],
  ])('refuses a record with %s, writing nothing', async (_what, fields) => {
    const { store, log } = await setup()
    await expect(log.append(entry(fields as Partial<AuditEntry>))).rejects.toThrow(
      InvalidRequestError,
    )
    expect(await keysOf(store)).toEqual([])
  })

  it('drops every field outside the schema before anything is stored', async () => {
    const { store, log } = await setup()
    const record = await log.append({
      ...entry({ detail: { reason: 'stuck runner' } }),
      body: 'SECRET-BODY',
      principal: {
        subject: 'alice',
        token_id: 'at-1',
        token_name: 'ci',
        token: 'SECRET-TOKEN',
        groups: ['ops'],
      },
    } as AuditEntry)
    expect(record).toEqual({
      id: record.id,
      time: '2026-01-01T00:00:00.000Z',
      action: 'state.write',
      outcome: { status: 200 },
      principal: { subject: 'alice', token_id: 'at-1', token_name: 'ci' },
      surface: 'http',
      unit: 'team/app/prod',
      detail: { reason: 'stuck runner' },
    })
    const stored = await store.get(`audit/2026-01-01/${record.id}.json`)
    if (stored === undefined) throw new Error('the record was not stored')
    const text = new TextDecoder().decode(await collectBytes(stored.body))
    expect(text).not.toContain('SECRET')
    expect(JSON.parse(text)).toEqual(record)
  })

  it('strips the control characters of every text before it is stored, and of one stored before', async () => {
    const { store, log } = await setup()
    const hostile = '\u001b[2Jcleared\r\n\u001b]8;;https://evil.example\u0007link\u009b\u202e'
    const record = await log.append(
      entry({
        principal: { subject: `alice${hostile}`, token_name: `ci${hostile}` },
        detail: { reason: `stuck runner${hostile}`, forwarded_for: `203.0.113.9${hostile}` },
      }),
    )
    const shown = '[2Jcleared ]8;;https://evil.examplelink'
    expect(record.principal).toEqual({ subject: `alice${shown}`, token_name: `ci${shown}` })
    expect(record.detail).toEqual({
      reason: `stuck runner${shown}`,
      forwarded_for: `203.0.113.9${shown}`,
    })
    const key = `audit/2026-01-01/${record.id}.json`
    const stored = await store.get(key)
    if (stored === undefined) throw new Error('the record was not stored')
    const text = new TextDecoder().decode(await collectBytes(stored.body))
    expect(text).not.toMatch(/\\u00[01][0-9a-f]|\\u009b|\u009b|\u202e|\\r|\\n/)
    // A record an older server wrote with them is read back without them.
    await store.put(
      key,
      new TextEncoder().encode(JSON.stringify({ ...record, unit: `a${hostile}` })),
    )
    const [read] = (await log.query({})).records
    expect(read?.unit).toBe(`a${shown}`)
  })
})

describe('a log', () => {
  it('keeps its records in the store it was given, with the retention it was given', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock(START)
    const log = new AuditLog({ store, clock, ids: randomIds, retentionMs: DAY })
    expect(log.retentionMs).toBe(DAY)
    expect(new AuditLog({ store, clock, ids: randomIds }).retentionMs).toBe(400 * DAY)
    const record = await log.append(entry())
    expect((await new AuditLog({ store, clock, ids: randomIds }).query()).records).toEqual([record])
  })
})

describe('reading the trail', () => {
  const alice = { subject: 'alice', issuer: 'https://id.example.test' }
  const authorizer = {
    isAdmin: (principal: { subject: string }) => principal.subject === 'root',
    can: (principal: { subject: string }, permission: string, unit: string) =>
      principal.subject === 'alice' && permission === 'unit:manage' && unit === 'team/app',
  }

  it('gives an administrator the whole trail, and anyone else only a unit they manage', async () => {
    const clock = new ManualClock(START)
    const log = new AuditLog({ store: createMemoryStore(), clock, ids: countingIds(), authorizer })
    const mine = await log.append(entry({ unit: 'team/app' }))
    clock.advance(1)
    const theirs = await log.append(entry({ unit: 'team/other' }))
    expect((await log.read({ subject: 'root' })).records).toEqual([theirs, mine])
    expect((await log.read(alice, { unit: 'team/app' })).records).toEqual([mine])
    await expect(log.read(alice)).rejects.toMatchObject({ code: 'forbidden' })
    await expect(log.read(alice, { prefix: 'team/' })).rejects.toMatchObject({ code: 'forbidden' })
    await expect(log.read(alice, { unit: 'team/other' })).rejects.toMatchObject({
      code: 'forbidden',
    })
    await expect(log.read(alice, { unit: '../bad' })).rejects.toMatchObject({
      code: 'invalid_unit_id',
    })
  })
})

describe('records appended together', () => {
  it('share one durable write, and read back whole and in order, page by page', async () => {
    const memory = createMemoryStore()
    let writes = 0
    const store: ObjectStore = {
      ...memory,
      put: (key, body, options) => {
        writes += 1
        return memory.put(key, body, options)
      },
    }
    const clock = new ManualClock(START)
    const log = new AuditLog({ store, clock, ids: countingIds() })
    const appended: Promise<AuditRecord>[] = []
    for (let index = 0; index < 60; index += 1) {
      clock.set(START + index * 10)
      appended.push(log.append(entry({ unit: `u/${index}` })))
    }
    const records = await Promise.all(appended)
    expect(writes).toBeLessThan(60)
    expect(new Set(records.map((record) => record.id)).size).toBe(60)
    // Seven at a time: pages that stop inside an object go on from there.
    const seen: string[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await log.query({ limit: 7, ...(cursor === undefined ? {} : { cursor }) })
      seen.push(...page.records.map((record) => record.unit ?? ''))
      if (page.nextCursor === null) break
      cursor = page.nextCursor
    }
    expect(seen).toEqual(records.map((record) => record.unit).reverse())
  })

  it('keep to since and until when one write holds records on both sides of them', async () => {
    const clock = new ManualClock(START)
    const log = new AuditLog({ store: createMemoryStore(), clock, ids: countingIds() })
    const appended: Promise<AuditRecord>[] = []
    for (let index = 0; index < 12; index += 1) {
      clock.set(START + index * 400)
      appended.push(log.append(entry({ unit: `u/${index}` })))
    }
    await Promise.all(appended)
    const { records } = await log.query({
      since: new Date(START + 600).toISOString(),
      until: new Date(START + 3000).toISOString(),
    })
    expect(records.map((record) => record.unit)).toEqual(['u/7', 'u/6', 'u/5', 'u/4', 'u/3', 'u/2'])
  })
})
