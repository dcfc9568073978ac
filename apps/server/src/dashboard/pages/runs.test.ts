import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LOCAL_ISSUER } from '@cairn/auth'
import { packDirectory, type RunService } from '@cairn/runs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'
import { Browser } from './page-browser'

/**
 * A unit's runs on its page and each run's own page, in process, with runs on and RBAC on: the
 * runs are made and moved by hand (the service's agent side), no Terraform runs here.
 */

const AGENT = { tokenId: 't', name: 'build-1' }
const ADMIN = { subject: 'test-arranger', roles: ['admin'] }

describe('runs on the dashboard', () => {
  let fixture: InProcessApp
  let runs: RunService
  let browser: Browser
  let upload: string

  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: true }, runs: true })
    runs = fixture.runs?.service as RunService
    browser = new Browser(fixture)
    await browser.signIn(fixture.adminToken ?? '')
    const dir = await mkdtemp(join(tmpdir(), 'cairn-runs-page-'))
    await writeFile(join(dir, 'main.tf'), 'resource "terraform_data" "a" {}\n')
    upload = (await runs.uploadConfig(await packDirectory(dir))).id
    await rm(dir, { recursive: true, force: true })
  })
  afterEach(async () => {
    await fixture.close()
  })

  const submit = (unit: string, operation = 'apply') =>
    runs.submit(ADMIN, { unit, operation, source: { upload } })

  it("lists a unit's runs on its page, with why one waits", async () => {
    const first = await submit('team/app')
    const second = await submit('team/app', 'plan')
    await runs.claim(AGENT)
    const { html } = await browser.get('/app/unit?id=team%2Fapp')
    expect(html).toContain('<h2 id="runs">Runs</h2>')
    expect(html).toContain(`href="/app/run?id=${first.id}"`)
    expect(html).toContain(`waiting for run ${first.id} of the same unit to end`)
    // Newest first.
    const row = (id: string) => html.indexOf(`href="/app/run?id=${id}"`)
    expect(row(second.id)).toBeLessThan(row(first.id))
  })

  it("sends the link Terraform's cloud block prints for a run to the run's page", async () => {
    const run = await submit('team/app')
    const seen = await browser.get(`/app/acme/team__app/runs/${run.id}`)
    expect(seen.status).toBe(302)
    expect(seen.headers.get('location')).toBe(`/app/run?id=${run.id}`)
    expect((await browser.get('/app/acme/team__app/runs/not-a-run')).status).toBe(404)
  })

  it("shows a run's log, scrubbed, reloading while the run goes on and not after", async () => {
    const run = await runs.submit(ADMIN, {
      unit: 'team/app',
      operation: 'apply',
      source: { upload },
      variables: { password: { value: 'hunter2-secret', sensitive: true } },
    })
    await runs.claim(AGENT)
    await runs.appendLog(AGENT, run.id, 0, 'Plan: 1 to add <b>bold</b>, password hunter2-secret\n')
    const going = await browser.get(`/app/run?id=${run.id}`)
    expect(going.html).toContain('<meta http-equiv="refresh" content="2"/>')
    expect(going.html).toContain('Plan: 1 to add &lt;b&gt;bold&lt;/b&gt;, password ***')
    expect(going.html).not.toContain('hunter2-secret')
    await runs.finish(AGENT, run.id, { status: 'succeeded' })
    const ended = await browser.get(`/app/run?id=${run.id}`)
    expect(ended.html).not.toContain('http-equiv="refresh"')
    expect(ended.html).not.toContain('/app/run/cancel')
  })

  it('cancels a run and confirms a planned apply, each through its confirmation page', async () => {
    const planned = await submit('team/app')
    const queued = await submit('team/db')
    await runs.claim(AGENT)
    await runs.planned(AGENT, planned.id, { add: 1, change: 0, destroy: 0 }, true)
    const page = await browser.get(`/app/run?id=${planned.id}`)
    expect(page.html).toContain(`href="/app/run/confirm?id=${planned.id}"`)
    const confirmation = await browser.get(`/app/run/confirm?id=${planned.id}`)
    expect(confirmation.html).toContain('1 to add, 0 to change, 0 to destroy')
    expect((await browser.post('/app/run/confirm', { id: planned.id })).status).toBe(303)
    expect((await runs.get(ADMIN, planned.id)).phase).toBe('applying')
    // The other unit's run waits in the queue: canceling it ends it at once.
    expect((await browser.post('/app/run/cancel', { id: queued.id })).status).toBe(303)
    expect((await runs.get(ADMIN, queued.id)).status).toBe('canceled')
    // A second cancel is refused, and the page says why.
    const again = await browser.post('/app/run/cancel', { id: queued.id })
    expect(again.status).toBe(303)
    expect((await browser.get(`/app/run?id=${queued.id}`)).html).toContain('has ended (canceled)')
  })

  it('shows a reader the run but neither cancel nor confirm, and hides runs of units they may not read', async () => {
    const run = await submit('team/app')
    const hidden = await submit('ops/dns')
    await fixture.rbac.assign(ADMIN, { principal: 'user:alice', role: 'reader', scope: 'team/*' })
    const token = await fixture.auth.createApiToken(
      { subject: 'alice', issuer: LOCAL_ISSUER, groups: [], roles: [] },
      'alice',
    )
    const alice = new Browser(fixture)
    await alice.signIn(token.token)
    const page = await alice.get(`/app/run?id=${run.id}`)
    expect(page.status).toBe(200)
    expect(page.html).not.toContain('/app/run/cancel')
    expect((await alice.get(`/app/run/cancel?id=${run.id}`)).status).toBe(404)
    expect((await alice.post('/app/run/cancel', { id: run.id })).status).toBe(403)
    expect((await alice.get(`/app/run?id=${hidden.id}`)).status).toBe(404)
  })
})
