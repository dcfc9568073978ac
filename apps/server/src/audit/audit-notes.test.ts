import { AuditLog } from '@cairn/audit'
import { createMemoryStore, randomIds, systemClock } from '@cairn/core'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from '../http/app-env'
import { surfaceOf } from '../metrics/request-labels'
import { createServerMetrics } from '../metrics/server-metrics'
import { auditNoteOf } from './audit-notes'
import { auditTrail, noteAudit } from './audit-trail'

/** The note a request would start with, from its method, path and headers alone. */
async function noteOf(method: string, path: string, headers: Record<string, string> = {}) {
  const app = new Hono<AppEnv>()
  // In a header: the answer to a HEAD has no body.
  app.all('*', (c) => {
    c.header('X-Note', JSON.stringify(auditNoteOf(c, surfaceOf(c.req.path)) ?? null))
    return c.body(null, 204)
  })
  const answer = await app.request(path, { method, headers })
  return JSON.parse(answer.headers.get('X-Note') ?? '') as unknown
}

describe('which requests are audited, as what', () => {
  it.each([
    ['GET', '/v1/units/team/app/download', { action: 'state.read', unit: 'team/app' }],
    ['POST', '/v1/units/team/app/upload', { action: 'state.write', unit: 'team/app' }],
    ['POST', '/v1/units/team/app/lock', { action: 'lock', unit: 'team/app' }],
    ['DELETE', '/v1/units/team/app/unlock', { action: 'unlock', unit: 'team/app' }],
    [
      'DELETE',
      '/v1/units/team/app/unlock?force=true',
      { action: 'force_unlock', unit: 'team/app' },
    ],
    ['POST', '/v1/units/team/app/restore', { action: 'state.restore', unit: 'team/app' }],
    ['GET', '/v1/units/team/app/outputs', { action: 'outputs.read', unit: 'team/app' }],
    ['PUT', '/v1/units/team/app/dependencies', { action: 'dependencies.change', unit: 'team/app' }],
    ['DELETE', '/v1/units/team/app', { action: 'unit.delete', unit: 'team/app' }],
    ['POST', '/v1/units', { action: 'unit.create' }],
    // A search reads what many units' states hold.
    ['GET', '/v1/search?q=i-0abc', { action: 'search' }],
    ['GET', '/app/search?q=i-0abc', { action: 'search' }],
    ['POST', '/v1/auth/tokens', { action: 'token.create' }],
    ['DELETE', '/v1/auth/tokens/tok_1', { action: 'token.revoke', detail: { token_id: 'tok_1' } }],
    ['POST', '/v1/auth/exchange', { action: 'login', detail: { via: 'cli' } }],
    [
      'PUT',
      '/v1/rbac/roles/ops',
      { action: 'rbac.change', detail: { request: 'PUT /v1/rbac/roles/ops' } },
    ],
    ['POST', '/v1/freezes', { action: 'freeze.create' }],
    ['POST', '/v1/webhooks', { action: 'webhook.create' }],
    ['DELETE', '/v1/webhooks/whk-1', { action: 'webhook.delete', detail: { webhook_id: 'whk-1' } }],
    ['DELETE', '/v1/freezes/frz-1', { action: 'freeze.delete', detail: { freeze_id: 'frz-1' } }],
    ['GET', '/v1/backend/team/app', { action: 'state.read', unit: 'team/app' }],
    ['LOCK', '/v1/backend/team/app', { action: 'lock', unit: 'team/app' }],
    ['UNLOCK', '/v1/backend/team/app', { action: 'unlock', unit: 'team/app' }],
    [
      'POST',
      '/tfe/api/v2/workspaces/ws-team__app/actions/lock',
      { action: 'lock', unit: 'team/app' },
    ],
    [
      'POST',
      '/tfe/api/v2/workspaces/ws-team__app/actions/force-unlock',
      { action: 'force_unlock', unit: 'team/app' },
    ],
    ['PUT', '/s3/tfstate/team/app/terraform.tfstate', { action: 'state.write', unit: 'team/app' }],
    ['PUT', '/s3/tfstate/team/app/terraform.tfstate.tflock', { action: 'lock', unit: 'team/app' }],
    [
      'DELETE',
      '/s3/tfstate/team/app/terraform.tfstate.tflock',
      { action: 'unlock', unit: 'team/app' },
    ],
    ['GET', '/s3/tfstate/team/app/terraform.tfstate', { action: 'state.read', unit: 'team/app' }],
    [
      'POST',
      '/s3/tfstate/team/app/terraform.tfstate?uploadId=u1',
      { action: 'state.write', unit: 'team/app' },
    ],
    ['POST', '/oauth/token', { action: 'login', detail: { via: 'terraform login' } }],
    [
      'GET',
      '/oauth/callback?code=c&state=s',
      { action: 'login', detail: { via: 'dashboard' }, skip: true },
    ],
    ['POST', '/app/login', { action: 'login', detail: { via: 'dashboard token' } }],
    ['POST', '/app/unit/unlock', { action: 'force_unlock' }],
    ['POST', '/app/unit/restore', { action: 'state.restore' }],
    [
      'GET',
      '/app/unit/diff?id=team%2Fapp&from=1&to=2',
      { action: 'state.read', unit: 'team/app', detail: { view: 'diff' } },
    ],
    ['GET', '/app/unit/diff?id=..%2Fx', { action: 'state.read', detail: { view: 'diff' } }],
    [
      'GET',
      '/app/unit?id=team%2Fapp',
      { action: 'outputs.read', unit: 'team/app', detail: { view: 'unit page' } },
    ],
    ['POST', '/app/settings/tokens', { action: 'token.create' }],
    ['POST', '/app/settings/tokens/revoke', { action: 'token.revoke' }],
  ])('%s %s', async (method, path, note) => {
    expect(await noteOf(method, path)).toEqual(note)
  })

  it.each([
    ['GET', '/v1/units/team/app'],
    ['GET', '/v1/units'],
    ['GET', '/v1/units/team/app/versions'],
    ['GET', '/v1/units/team/app/status'],
    ['GET', '/v1/locks'],
    ['GET', '/v1/audit'],
    ['GET', '/v1/rbac/check'],
    ['POST', '/v1/auth/token'],
    ['GET', '/tfe/api/v2/workspaces/ws-team__app'],
    ['GET', '/s3/tfstate?list-type=2'],
    ['HEAD', '/s3/tfstate/team/app/terraform.tfstate'],
    ['GET', '/s3/tfstate/team/app/terraform.tfstate.tflock'],
    ['PUT', '/s3/tfstate/team/app/terraform.tfstate?partNumber=1&uploadId=u1'],
    ['POST', '/s3/tfstate/team/app/terraform.tfstate?uploads'],
    ['GET', '/healthz'],
    ['GET', '/app/units'],
    ['GET', '/app/settings/tokens'],
    ['GET', '/app/settings/tokens/revoke?id=tok_1'],
    ['POST', '/app/logout'],
    ['GET', '/app/login'],
    ['GET', '/v1/units/..%2Fx/download'],
  ])('leaves %s %s unrecorded', async (method, path) => {
    expect(await noteOf(method, path)).toBeNull()
  })

  it('records every ranged S3 read with its range, so no part of a state is read unrecorded', async () => {
    const path = '/s3/tfstate/team/app/terraform.tfstate'
    for (const range of ['bytes=0-5242879', 'bytes=5242880-10485759', 'bytes=-500', 'bytes=1-']) {
      expect(await noteOf('GET', path, { Range: range })).toEqual({
        action: 'state.read',
        unit: 'team/app',
        detail: { range },
      })
    }
  })

  it('records a dashboard force-unlock on the unit its handler read from the form', async () => {
    // The form is read after the audit note is made: the page's handler adds the unit to it.
    const audit = new AuditLog({ store: createMemoryStore(), clock: systemClock, ids: randomIds })
    const app = new Hono<AppEnv>()
    app.use(async (c, next) => {
      c.set('principal', { subject: 'alice', issuer: 'https://id.example', groups: [], roles: [] })
      await next()
    })
    app.use(auditTrail(audit, createServerMetrics()))
    app.post('/app/unit/unlock', async (c) => {
      const form = new URLSearchParams(await c.req.text())
      noteAudit(c, { unit: form.get('id') ?? '', detail: { reason: form.get('reason') ?? '' } })
      return c.redirect('/app/unit?id=team%2Fapp&done=unlocked', 303)
    })
    const answer = await app.request('/app/unit/unlock', {
      method: 'POST',
      body: new URLSearchParams({ id: 'team/app', reason: 'stuck CI job' }).toString(),
    })
    expect(answer.status).toBe(303)
    const { records } = await audit.query({})
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      action: 'force_unlock',
      surface: 'web',
      unit: 'team/app',
      principal: { subject: 'alice' },
      outcome: { status: 303 },
      detail: { reason: 'stuck CI job' },
    })
  })
})
