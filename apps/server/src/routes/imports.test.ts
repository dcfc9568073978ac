import { createHash } from 'node:crypto'
import type { AuditList, Version, VersionList } from '@cairn/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * `POST /v1/units/{id}/versions`: a version imported from another store, appended with its
 * provenance (DESIGN section 16), in process. The importer's suites under `packages/migrate` and
 * `apps/cli` drive it from real sources.
 */

let fixture: InProcessApp
afterEach(() => fixture.close())

const state = (serial: number, lineage = 'l-1', extra = '') =>
  JSON.stringify({ version: 4, serial, lineage, outputs: {}, resources: [], extra })

function importing(
  unit: string,
  body: string,
  query: Record<string, string>,
  token?: string,
): Response | Promise<Response> {
  const search = new URLSearchParams(query).toString()
  return fixture.request(`/v1/units/${unit}/versions?${search}`, {
    method: 'POST',
    body,
    ...(token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } }),
  })
}

async function json<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return JSON.parse(text) as T
}

describe('an imported version', () => {
  it('creates the unit, keeps its provenance, and brings a history whose serials start again', async () => {
    fixture = await inProcessApp({})
    const first = await json<Version>(
      importing('team/app', state(7), {
        imported_from: 's3://old/app/terraform.tfstate?versionId=a',
        original_created: '2024-03-01T10:00:00Z',
        original_author: 'arn:aws:iam::1:user/ci',
      }),
      201,
    )
    expect(first).toMatchObject({
      source: 'import',
      serial: 7,
      imported_from: 's3://old/app/terraform.tfstate?versionId=a',
      original_created: '2024-03-01T10:00:00.000Z',
      original_author: 'arn:aws:iam::1:user/ci',
      sha256: createHash('sha256').update(state(7)).digest('hex'),
    })
    // A new lineage whose serial starts again, then the same bytes under another source version:
    // both are history, so both are kept.
    await json(importing('team/app', state(1, 'l-2'), { imported_from: 'x#2' }), 201)
    await json(importing('team/app', state(1, 'l-2'), { imported_from: 'x#3' }), 201)
    // The same source version again is the one already stored: nothing new.
    const again = await json<Version>(
      importing('team/app', state(1, 'l-2'), { imported_from: 'x#3' }),
      201,
    )
    const listed = await json<VersionList>(fixture.request('/v1/units/team/app/versions'), 200)
    expect(listed.versions.map((version) => version.imported_from)).toEqual([
      'x#3',
      'x#2',
      's3://old/app/terraform.tfstate?versionId=a',
    ])
    expect(again.timestamp).toBe(listed.versions[0]?.timestamp)
    expect(listed.versions[1]).toMatchObject({ original_created: null, original_author: null })
  })

  it('keeps a body that is not JSON as its source kept it, with no serial', async () => {
    fixture = await inProcessApp({})
    const version = await json<Version>(
      importing('team/odd', 'not a state {', { imported_from: 'dir:/x/terraform.tfstate' }),
      201,
    )
    expect(version).toMatchObject({ serial: null, lineage: null, size: 13 })
    const body = await fixture.request('/v1/units/team/odd/download')
    expect(await body.text()).toBe('not a state {')
    // The upload of the same body through the API is still refused.
    expect(
      (await fixture.request('/v1/units/team/odd/upload', { method: 'POST', body: 'nope' })).status,
    ).toBe(400)
  })

  it('never goes behind a serial written here, and keeps nothing of a body whose MD5 is not the declared one', async () => {
    fixture = await inProcessApp({})
    await json(fixture.request('/v1/units', { method: 'POST', body: '{"id":"team/own"}' }), 201)
    await json(
      fixture.request('/v1/units/team/own/upload', { method: 'POST', body: state(5) }),
      200,
    )
    const behind = await json<{ error: string; message: string }>(
      importing('team/own', state(3, 'l-9'), { imported_from: 'a#1' }),
      409,
    )
    expect(behind.error).toBe('serial_conflict')
    expect(behind.message).toContain('an import only appends')
    await json(importing('team/own', state(6), { imported_from: 'a#2' }), 201)
    const wrong = await json<{ error: string }>(
      importing('team/own', state(7), {
        imported_from: 'a#3',
        md5: createHash('md5').update('other').digest('hex'),
      }),
      400,
    )
    expect(wrong.error).toBe('checksum_mismatch')
    const listed = await json<VersionList>(fixture.request('/v1/units/team/own/versions'), 200)
    expect(listed.versions.map((version) => version.serial)).toEqual([6, 5])
  })

  it('refuses bad provenance with 400 and writes nothing', async () => {
    fixture = await inProcessApp({})
    for (const query of [
      {},
      { imported_from: '' },
      { imported_from: 'a', original_created: 'yesterday' },
      { imported_from: 'a', md5: 'xyz' },
      { imported_from: 'a'.repeat(3000) },
    ]) {
      const refused = await json<{ error: string }>(importing('team/bad', state(1), query), 400)
      expect(refused.error).toBe('invalid_request')
    }
    expect((await fixture.request('/v1/units/team/bad')).status).toBe(404)
  })

  it('needs unit:manage on the target, and is in the audit trail', async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: true, admins: ['user:root'] } })
    const admin = fixture.adminToken ?? ''
    const identity = { subject: 'alice', issuer: 'https://id.example.test', groups: [], roles: [] }
    await fixture.rbac.recordLogin(identity)
    const writer = (await fixture.auth.createApiToken(identity, 'alice-ci')).token
    await json(
      fixture.request('/v1/rbac/assignments', {
        method: 'POST',
        headers: { Authorization: `Bearer ${admin}` },
        body: JSON.stringify({ principal: 'user:alice', role: 'writer', scope: 'team/*' }),
      }),
      201,
    )
    const refused = await importing('team/app', state(1), { imported_from: 'a#1' }, writer)
    expect(refused.status).toBe(403)
    await json(importing('team/app', state(1), { imported_from: 'a#1' }, admin), 201)
    const trail = await json<AuditList>(
      fixture.request('/v1/audit?action=state.import', {
        headers: { Authorization: `Bearer ${admin}` },
      }),
      200,
    )
    expect(trail.records.map((record) => [record.principal?.subject, record.outcome])).toEqual([
      ['local-admin', { status: 201 }],
      ['alice', { status: 403, error: 'forbidden' }],
    ])
    expect(trail.records[0]).toMatchObject({ action: 'state.import', unit: 'team/app' })
  })
})
