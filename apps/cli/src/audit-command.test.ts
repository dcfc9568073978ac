import type { AuditRecord } from '@cairn/sdk'
import { CairnApiError } from '@cairn/sdk'
import { inProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { UsageError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'
import { wireStub, type StubRequest } from './testing/wire-stub'

/**
 * `cairn audit` as an administrator runs it. Against a stub of `GET /v1/audit` that answers by the
 * wire contract (the route is built beside this command): the filters it sends, the pages it
 * follows, the table and the JSON. Then, when the server in this tree has the route, in process
 * against the real app.
 */

useCliHome('cairn-audit-command-')

const NOW = new Date('2026-11-23T12:00:00.000Z')

function record(n: number, fields: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: `${String(999_999_999_999_999 - n).padStart(15, '0')}-r${n}`,
    time: new Date(NOW.getTime() - n * 60_000).toISOString(),
    action: 'state.read',
    outcome: { status: 200 },
    principal: { subject: 'ann' },
    surface: 'api',
    unit: 'team/app',
    ...fields,
  }
}

/** A trail of `total` records served `pageSize` at most a page, as the server pages it. */
function trail(total: number, pageSize = Number.POSITIVE_INFINITY) {
  const records = Array.from({ length: total }, (_, n) => record(n))
  return wireStub(({ url }) => {
    if (url.pathname !== '/v1/audit')
      return { status: 404, body: { error: 'not_found', message: 'no' } }
    const start = Number(url.searchParams.get('cursor') ?? 0)
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 100), pageSize)
    const end = Math.min(start + limit, records.length)
    return {
      status: 200,
      body: {
        records: records.slice(start, end),
        next_cursor: end < records.length ? String(end) : null,
      },
    }
  })
}

const queries = (received: StubRequest[]) =>
  received.map((request) => Object.fromEntries(request.url.searchParams))

describe('cairn audit (against the wire contract)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('prints a table, newest first, with refusals, token names and unauthenticated callers', async () => {
    const stub = wireStub(() => ({
      status: 200,
      body: {
        records: [
          record(0, {
            action: 'lock',
            outcome: { status: 409, error: 'lock_conflict' },
            principal: { subject: 'ci-bot', token_id: 'tok_1', token_name: 'deploy' },
            surface: 'http',
          }),
          record(1, { action: 'state.write', version: '2026-11-23T11:59:00.000Z' }),
          record(2, {
            action: 'login',
            outcome: { status: 401, error: 'unauthorized' },
            principal: null,
            surface: 'oauth',
            unit: undefined,
          }),
        ].map((item) => JSON.parse(JSON.stringify(item)) as AuditRecord),
        next_cursor: null,
      },
    }))
    routeTo(stub, [])
    const lines = (await cairn('audit')).trimEnd().split('\n')
    expect(lines[0]).toMatch(/^TIME\s+ACTION\s+STATUS\s+PRINCIPAL\s+SURFACE\s+UNIT\s+VERSION$/)
    expect(lines[1]).toMatch(
      /^2026-11-23T12:00:00\.000Z\s+lock\s+409 lock_conflict\s+ci-bot \(token deploy\)\s+http\s+team\/app\s+-$/,
    )
    expect(lines[2]).toMatch(
      /^2026-11-23T11:59:00\.000Z\s+state\.write\s+200\s+ann\s+api\s+team\/app\s+2026-11-23T11:59:00\.000Z$/,
    )
    expect(lines[3]).toMatch(
      /^2026-11-23T11:58:00\.000Z\s+login\s+401 unauthorized\s+\(unauthenticated\)\s+oauth\s+-\s+-$/,
    )
    expect(lines).toHaveLength(4)
  })

  it('says so when no record matches', async () => {
    routeTo(trail(0), [])
    expect(await cairn('audit')).toBe('No audit records.\n')
  })

  it('sends each filter, and turns a relative --since and --until into RFC 3339 before now', async () => {
    const stub = trail(0)
    routeTo(stub, [])
    await cairn(
      'audit',
      '--unit',
      'team/app',
      '--prefix',
      'team/',
      '--principal',
      'ann',
      '--action',
      'force_unlock',
      '--surface',
      'web',
      '--outcome',
      'refused',
      '--since',
      '7d',
      '--until',
      '1h',
    )
    await cairn('audit', '--since', '2026-11-01T00:00:00Z', '--until', '2026-11-02T00:00:00+01:00')
    expect(queries(stub.received)).toEqual([
      {
        unit: 'team/app',
        prefix: 'team/',
        principal: 'ann',
        action: 'force_unlock',
        surface: 'web',
        outcome: 'refused',
        since: '2026-11-16T12:00:00.000Z',
        until: '2026-11-23T11:00:00.000Z',
        limit: '100',
      },
      { since: '2026-11-01T00:00:00Z', until: '2026-11-02T00:00:00+01:00', limit: '100' },
    ])
  })

  it('follows pages until --limit records, asking each page only for what is missing', async () => {
    const stub = trail(10, 3)
    routeTo(stub, [])
    const page = await json<{ records: AuditRecord[]; next_cursor: string | null }>(
      'audit',
      '--limit',
      '7',
    )
    expect(page.records.map((item) => item.id)).toEqual(
      Array.from({ length: 7 }, (_, n) => record(n).id),
    )
    expect(page.next_cursor).toBe('7')
    expect(queries(stub.received)).toEqual([
      { limit: '7' },
      { limit: '4', cursor: '3' },
      { limit: '1', cursor: '6' },
    ])
  })

  it('prints one JSON value whose next_cursor is null once the trail is read to its end', async () => {
    routeTo(trail(2), [])
    const result = await run('audit', '--json')
    const parsed = JSON.parse(result.stdout) as { records: AuditRecord[]; next_cursor: null }
    expect(parsed.records[0]?.action).toBe('state.read')
    expect(parsed.next_cursor).toBeNull()
    expect(Object.keys(parsed)).toEqual(['records', 'next_cursor'])
  })

  it('fails with the server code when refused', async () => {
    routeTo(
      wireStub(() => ({
        status: 403,
        body: { error: 'forbidden', message: 'administrators only' },
      })),
      [],
    )
    const result = await run('audit')
    expect(result.error).toBeInstanceOf(CairnApiError)
    expect(result.error).toMatchObject({ code: 'forbidden', status: 403 })
  })

  it.each([
    [
      ['--since', 'yesterday'],
      '--since must be an RFC 3339 time such as 2026-11-23T10:00:00Z, or how long ago such as 1h or 7d',
    ],
    [
      ['--until', '2026-13-45T99:00:00Z'],
      '--until must be an RFC 3339 time such as 2026-11-23T10:00:00Z, or how long ago such as 1h or 7d',
    ],
    [['--limit', '0'], '--limit must be a whole number from 1'],
    [['--action', 'state.delete'], expect.stringMatching(/^--action must be one of state\.read, /)],
    [['--surface', 'ftp'], '--surface must be one of api, http, cloud, s3, oauth, web'],
    [['--outcome', 'bad'], '--outcome must be one of ok, refused, failed'],
  ])('refuses %j as a usage error before sending anything', async (flags, message) => {
    const stub = trail(1)
    routeTo(stub, [])
    const result = await run('audit', ...flags)
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toEqual(message)
    expect(stub.received).toEqual([])
  })
})

describe('cairn audit (in process, against the server)', () => {
  it('lists what was done to a unit, newest first, as a table and as JSON', async () => {
    const server = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    try {
      routeTo(server, [])
      await cairn('unit', 'create', 'team/app')
      await cairn('unit', 'lock', 'team/app')
      await cairn('unit', 'unlock', 'team/app')
      const { records } = await json<{ records: AuditRecord[] }>('audit', '--unit', 'team/app')
      const actions = records.map((item) => item.action)
      expect(actions.filter((name) => ['unit.create', 'lock', 'unlock'].includes(name))).toEqual([
        'unlock',
        'lock',
        'unit.create',
      ])
      expect(records[actions.indexOf('unlock')]).toMatchObject({
        unit: 'team/app',
        principal: { subject: 'anonymous' },
      })
      const locks = await json<{ records: AuditRecord[] }>('audit', '--action', 'lock')
      expect(locks.records.map((item) => item.action)).toEqual(['lock'])
      const table = await cairn('audit', '--unit', 'team/app', '--since', '1h')
      expect(table).toMatch(/^\S+\s+unlock\s+200\s+anonymous\s+api\s+team\/app\s+-$/m)
    } finally {
      await server.close()
    }
  })
})
