import { createServer, type Server } from 'node:http'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  freePort,
  httpBackendConfig,
  idTokenThroughServer,
  launchBrowser,
  startOidcProvider,
  TerraformWorkspace,
  useServer,
  watchPage,
  type Browser,
  type BrowserContext,
  type Page,
  type PageWatch,
  type RunningProvider,
} from '@cairn/testkit'
import { packDirectory } from '@cairn/runs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core, against the built
 * server, with units written by real Terraform and a real OpenID provider. Screenshots of the
 * main pages are taken on the way; with `CAIRN_SCREENSHOTS_DIR` set they are kept there (the
 * docs' come from `CAIRN_SCREENSHOTS_DIR=docs/screenshots`).
 */

const NETWORK = 'team/network'
const APP = 'team/app'
/** Relative to the repository, as docs/dashboard.md's command gives it, whatever the test's directory. */
const SCREENSHOTS = ((dir) =>
  dir === undefined || dir === ''
    ? undefined
    : resolve(fileURLToPath(new URL('../../..', import.meta.url)), dir))(
  process.env['CAIRN_SCREENSHOTS_DIR'],
)

/** A configuration on the http backend: one resource and the output the app consumes. */
function networkConfig(url: string, cidr: string): string {
  return `${httpBackendConfig(`${url}/v1/backend/${NETWORK}`, 'network', 'marker')}
resource "terraform_data" "vpc" {
  input = "${cidr}"
}

resource "terraform_data" "subnet" {
  count = 2
  input = "\${terraform_data.vpc.output}-\${count.index}"
}

output "cidr" {
  value = terraform_data.vpc.output
}
`
}

function appConfig(url: string): string {
  return httpBackendConfig(`${url}/v1/backend/${APP}`, 'web', 'service')
}

async function shoot(page: Page, name: string): Promise<void> {
  const dir = SCREENSHOTS ?? (await mkdtemp(join(tmpdir(), 'cairn-screens-')))
  await mkdir(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false })
  if (SCREENSHOTS === undefined) await rm(dir, { recursive: true, force: true })
}

describe('the dashboard in Chromium, in local mode with real Terraform', () => {
  // Runs on, with an agent inside the server: the run pages are tested here too.
  // Webhooks may send to the test's receiver on this machine's loopback address.
  const server = useServer({
    auth: true,
    args: ['-runs', '-runs-local-agent'],
    env: { SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
  })
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let watch: PageWatch
  let network: TerraformWorkspace
  let app: TerraformWorkspace

  const api = (path: string, init: { method?: string; body?: string } = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}` },
    })
  const unit = async (id: string) =>
    (await (await api(`/v1/units/${id}`)).json()) as { locked: boolean; version_count: number }

  beforeAll(async () => {
    browser = await launchBrowser()
    network = await TerraformWorkspace.create({ TF_HTTP_PASSWORD: server.token })
    app = await TerraformWorkspace.create({ TF_HTTP_PASSWORD: server.token })
    await network.write('main.tf', networkConfig(server.url, '10.0.0.0/16'))
    await app.write('main.tf', appConfig(server.url))
    for (const workspace of [network, app]) {
      const init = await workspace.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
    }
    const first = await network.run(['apply', '-auto-approve', '-input=false'])
    expect(first.code, first.stderr).toBe(0)
    await network.write('main.tf', networkConfig(server.url, '10.1.0.0/16'))
    const second = await network.run(['apply', '-auto-approve', '-input=false'])
    expect(second.code, second.stderr).toBe(0)
    // The app consumes the network's output, then applies: green, for now.
    const created = await api('/v1/units', { method: 'POST', body: JSON.stringify({ id: APP }) })
    expect(created.status).toBe(201)
    const declared = await api(`/v1/units/${APP}/dependencies`, {
      method: 'PUT',
      body: JSON.stringify({ dependencies: [{ from: NETWORK, output: 'cidr' }] }),
    })
    expect(declared.status).toBe(200)
    const applied = await app.run(['apply', '-auto-approve', '-input=false'])
    expect(applied.code, applied.stderr).toBe(0)

    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    page = await context.newPage()
    watch = await watchPage(page)
  }, 600_000)

  afterAll(async () => {
    // Whatever the start reached, even when it failed half-way.
    const started = [context, browser, network, app] as (
      { close?: () => Promise<void>; dispose?: () => Promise<void> } | undefined
    )[]
    for (const part of started) await (part?.close?.() ?? part?.dispose?.())
  })

  it('sends a visitor to the sign-in page, and signs in with a pasted token', async () => {
    const answer = await page.goto(`${server.url}/app/units`)
    expect(page.url()).toContain('/app/login?next=%2Fapp%2Funits')
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'")
    await page.getByLabel('API token', { exact: true }).fill('svc_tfe_not-a-real-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.textContent('[role="alert"]')).toContain('not valid')

    await page.getByLabel('API token', { exact: true }).fill(server.token)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${server.url}/app/units`)
    const cookies = await context.cookies()
    const session = cookies.find((cookie) => cookie.name === 'cairn_session')
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/app' })
    expect(session?.value).not.toContain(server.token)
  })

  it('lists the units Terraform wrote, with status, lock and size', async () => {
    await page.goto(`${server.url}/app/units`)
    const rows = page.locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(2)
    const networkRow = rows.filter({ hasText: NETWORK })
    expect(await networkRow.textContent()).toContain('green')
    expect(await networkRow.textContent()).toContain('unlocked')
    await shoot(page, 'units')
    await page.getByLabel('ID prefix').fill('team/net')
    await page.getByRole('button', { name: 'Filter' }).click()
    await expect.poll(() => rows.count()).toBe(1)
  })

  it("shows a unit's versions and the diff between two of them", async () => {
    await page.goto(`${server.url}/app/units`)
    await page.getByRole('link', { name: NETWORK, exact: true }).click()
    await page.waitForURL(/\/app\/unit\?id=team%2Fnetwork$/)
    expect(await page.textContent('main')).toContain('10.1.0.0/16')
    await shoot(page, 'unit')
    await page.goto(`${server.url}/app/unit/diff?id=${encodeURIComponent(NETWORK)}&detail=1`)
    const text = (await page.textContent('main')) ?? ''
    expect(text).toContain('terraform_data.vpc')
    expect(text).toContain('10.0.0.0/16')
    await shoot(page, 'diff')
  })

  it("force-unlocks a lock taken through /v1, and Terraform's next apply succeeds", async () => {
    const locked = await api(`/v1/units/${NETWORK}/lock`, {
      method: 'POST',
      body: JSON.stringify({ Who: 'ci-runner-17', Operation: 'OperationTypeApply' }),
    })
    expect(locked.status).toBe(200)
    const blocked = await network.run([
      'apply',
      '-auto-approve',
      '-input=false',
      '-lock-timeout=0s',
    ])
    expect(blocked.code).not.toBe(0)

    await page.goto(`${server.url}/app/unit?id=${encodeURIComponent(NETWORK)}`)
    expect(await page.textContent('main')).toContain('ci-runner-17')
    await page.getByRole('link', { name: 'Force unlock' }).click()
    await page.waitForURL(/\/app\/unit\/unlock\?/)
    await page.getByRole('button', { name: 'Force unlock' }).click()
    await page.waitForURL(/\/app\/unit\?id=team%2Fnetwork/)
    expect(await page.textContent('[role="status"]')).toContain('nlocked')
    expect((await unit(NETWORK)).locked).toBe(false)

    const apply = await network.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
  })

  it('restores an old version: the version list grows and the consumer turns red', async () => {
    const before = (await unit(NETWORK)).version_count
    await page.goto(`${server.url}/app/unit?id=${encodeURIComponent(NETWORK)}`)
    // The oldest version on the page has the first cidr.
    await page.getByRole('link', { name: 'Restore' }).last().click()
    await page.waitForURL(/\/app\/unit\/restore\?/)
    await page.getByRole('button', { name: /Restore/ }).click()
    await page.waitForURL(/\/app\/unit\?id=team%2Fnetwork/)
    expect(await page.textContent('[role="status"]')).toContain('estored')
    expect((await unit(NETWORK)).version_count).toBe(before + 1)
    expect(await page.textContent('main')).toContain('restore')

    await page.goto(`${server.url}/app/units`)
    const appRow = page.locator('tbody tr').filter({ hasText: APP })
    await expect.poll(async () => appRow.textContent()).toContain('red')
    await page.goto(`${server.url}/app/status?prefix=team/`)
    expect(await page.textContent('main')).toContain(APP)
    await shoot(page, 'status')
    await page.goto(`${server.url}/app/unit/graph?id=${encodeURIComponent(APP)}`)
    expect(await page.locator('svg.graph').count()).toBe(1)
    expect(await page.textContent('svg.graph')).toContain(NETWORK)
    await shoot(page, 'graph')
  })

  it('follows a run on its page, and confirms its plan there: Terraform applies on the agent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-dashboard-run-'))
    await writeFile(join(dir, 'main.tf'), 'resource "terraform_data" "site" {\n  input = "v1"\n}\n')
    const upload = await fetch(`${server.url}/v1/runs/uploads`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/gzip' },
      body: await packDirectory(dir),
    })
    await rm(dir, { recursive: true, force: true })
    const { id: config } = (await upload.json()) as { id: string }
    const created = await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({ unit: 'team/site', operation: 'apply', source: { upload: config } }),
    })
    const { id } = (await created.json()) as { id: string }
    const phase = async () =>
      ((await (await api(`/v1/runs/${id}`)).json()) as { phase: string }).phase
    await expect.poll(phase, { timeout: 60_000, interval: 250 }).toBe('planned')

    await page.goto(`${server.url}/app/unit?id=${encodeURIComponent('team/site')}`)
    await page.getByRole('link', { name: id }).click()
    await page.waitForURL(/\/app\/run\?id=/)
    expect(await page.textContent('main')).toContain('Plan: 1 to add, 0 to change, 0 to destroy.')
    await shoot(page, 'run')
    await page.getByRole('link', { name: 'Confirm and apply' }).click()
    await page.waitForURL(/\/app\/run\/confirm\?/)
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/\/app\/run\?id=/)
    // The page reloads itself while the run goes on, until the apply's end is in the log.
    await expect
      .poll(async () => page.textContent('main'), { timeout: 60_000, interval: 500 })
      .toContain('Apply complete! Resources: 1 added')
    expect(await phase()).toBe('finished')
  })

  it('creates a token whose secret is shown once and works with the API', async () => {
    await page.goto(`${server.url}/app/settings/tokens`)
    await page.getByLabel('Name').fill('ci-deploy')
    await page.getByRole('button', { name: /Create/ }).click()
    const secret = ((await page.textContent('.secret')) ?? '').trim()
    expect(secret).toMatch(/^svc_tfe_/)
    expect(page.url()).not.toContain(secret)
    const me = await fetch(`${server.url}/v1/auth/me`, {
      headers: { Authorization: `Bearer ${secret}` },
    })
    expect(me.status).toBe(200)
    await page.goto(`${server.url}/app/settings/tokens`)
    const listed = (await page.textContent('main')) ?? ''
    expect(listed).toContain('ci-deploy')
    expect(listed).not.toContain(secret)
    await shoot(page, 'tokens')
  })

  it('refuses a form that another site posts to it, and changes nothing', async () => {
    const locked = await api(`/v1/units/${NETWORK}/lock`, {
      method: 'POST',
      body: JSON.stringify({ Who: 'keep-me', Operation: 'OperationTypeApply' }),
    })
    expect(locked.status).toBe(200)
    const port = await freePort()
    const evil: Server = createServer((_request, response) => {
      response.setHeader('Content-Type', 'text/html')
      response.end(`<!doctype html><form id="f" method="post" action="${server.url}/app/unit/unlock">
<input name="id" value="${NETWORK}"><input name="reason" value="csrf"></form>
<script>document.getElementById('f').submit()</script>`)
    })
    await new Promise<void>((resolve) => evil.listen(port, 'localhost', resolve))
    try {
      const attacker = await context.newPage()
      const answered = attacker.waitForResponse((response) =>
        response.url().startsWith(`${server.url}/app/unit/unlock`),
      )
      await attacker.goto(`http://localhost:${port}/`)
      expect((await answered).status()).toBe(403)
      await attacker.close()
    } finally {
      await new Promise((resolve) => evil.close(resolve))
    }
    expect((await unit(NETWORK)).locked).toBe(true)
    // Still signed in: the refused post ended nothing.
    const still = await page.goto(`${server.url}/app/units`)
    expect(still?.url()).toBe(`${server.url}/app/units`)
    await api(`/v1/units/${NETWORK}/unlock?force=true`, { method: 'DELETE', body: '{}' })
  })

  it('administers from its pages: a freeze stops Terraform, a webhook delivers, the trail shows both', async () => {
    // A real receiver of webhooks on this machine.
    const received: string[] = []
    const port = await freePort()
    const receiver: Server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        received.push(body)
        response.end('ok')
      })
    })
    await new Promise<void>((done) => receiver.listen(port, '127.0.0.1', done))
    try {
      await page.goto(`${server.url}/app/admin/webhooks`)
      await page.locator('input[name="url"]').fill(`http://127.0.0.1:${port}/hook`)
      await page.locator('input[name="prefix"]').fill('team/*')
      await page.getByLabel('unit.locked').check()
      await page.getByRole('button', { name: 'Create webhook' }).click()
      const secret = ((await page.textContent('.secret')) ?? '').trim()
      expect(secret).toMatch(/^whsec_/)

      // Freeze the prefix from the form, through the page that asks.
      await page.goto(`${server.url}/app/admin/freezes`)
      await page.locator('input[name="prefix"]').fill('team/*')
      await page.locator('input[name="reason"]').fill('release 2026.12 in progress')
      await page.getByRole('button', { name: 'Freeze…' }).click()
      expect(await page.textContent('h1')).toBe('Freeze team/*?')
      await page.getByRole('button', { name: 'Freeze team/*' }).click()
      expect(await page.textContent('main')).toContain('release 2026.12 in progress')
      await shoot(page, 'freezes')
      const frozen = await network.run(['apply', '-auto-approve', '-input=false'])
      expect(frozen.code).not.toBe(0)
      expect(frozen.stderr).toContain('release 2026.12 in progress')

      await page.getByRole('link', { name: 'Lift team/*' }).click()
      await page.getByRole('button', { name: 'Lift the freeze of team/*' }).click()
      expect(await page.textContent('main')).toContain('Nothing is frozen.')
      const lifted = await network.run(['apply', '-auto-approve', '-input=false'])
      expect(lifted.code, lifted.stderr).toBe(0)

      // The apply locked the unit: the receiver got it, and the webhook's page says so.
      await expect.poll(() => received.some((body) => body.includes('"unit.locked"'))).toBe(true)
      await page.goto(`${server.url}/app/admin/webhooks`)
      await page.getByRole('link', { name: `http://127.0.0.1:${port}/hook` }).click()
      await expect
        .poll(
          async () => {
            await page.reload()
            return page.textContent('main')
          },
          { timeout: 30_000, interval: 500 },
        )
        .toMatch(/delivered/)
      expect(await page.textContent('main')).toContain('HTTP 200')
      expect(await page.textContent('main')).not.toContain(secret)
      await shoot(page, 'webhook')
    } finally {
      await new Promise((done) => receiver.close(done))
    }

    // The trail: the freeze and its refusal, filtered from the form.
    await page.goto(`${server.url}/app/audit`)
    await page.locator('select[name="outcome"]').selectOption('refused')
    await page.locator('select[name="surface"]').selectOption('http')
    await page.getByRole('button', { name: 'Filter' }).click()
    const refusals = (await page.textContent('tbody')) ?? ''
    expect(refusals).toContain('unit_frozen')
    await page.goto(`${server.url}/app/audit?prefix=team/`)
    await shoot(page, 'audit')
    await page.goto(`${server.url}/app/audit?action=freeze.create`)
    expect(await page.locator('tbody tr').count()).toBe(1)
    await page.getByText(/^Record /).click()
    expect(await page.textContent('tbody')).toContain('release 2026.12 in progress')
  })

  it('fits a phone screen, in the dark too, with no page wider than the screen', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      colorScheme: 'dark',
      storageState: await context.storageState(),
    })
    const small = await phone.newPage()
    const phoneWatch = await watchPage(small)
    for (const path of [
      '/app/units',
      `/app/unit?id=${encodeURIComponent(NETWORK)}`,
      '/app/status?prefix=team/',
      '/app/settings/tokens',
      '/app/settings/trust-policies',
      '/app/audit',
      '/app/admin/freezes',
      '/app/admin/webhooks',
      '/app/admin/access',
    ]) {
      await small.goto(`${server.url}${path}`)
      const overflow = await small.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      )
      expect(overflow, path).toBeLessThanOrEqual(0)
      if (path === '/app/units') await shoot(small, 'units-phone')
    }
    await phoneWatch.settle()
    expect(phoneWatch.errors()).toEqual([])
    await phone.close()
  })

  it('loaded every page above without a CSP violation or a console error', async () => {
    await watch.settle()
    expect(watch.violations()).toEqual([])
    expect(watch.errors()).toEqual([])
  })
})

describe('the dashboard in Chromium, signing in through the OpenID provider, with RBAC', () => {
  const CLIENT = 'cairn-dashboard'
  let idp: RunningProvider
  let port: number
  let base: string
  let browser: Browser

  beforeAll(async () => {
    port = await freePort()
    base = `http://127.0.0.1:${port}`
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [`${base}/oauth/callback`] }],
      accounts: {
        alice: { email: 'alice@example.test', groups: ['platform'] },
        bob: { email: 'bob@example.test', groups: [] },
      },
    })
    browser = await launchBrowser()
  }, 600_000)
  afterAll(async () => {
    const started = [browser, idp] as ({ close: () => Promise<void> } | undefined)[]
    for (const part of started) await part?.close()
  })
  const server = useServer(() => ({
    auth: true,
    args: ['-port', String(port), '-rbac'],
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: `${base}/oauth/callback`,
      SVC_AUTH_SCOPES: 'openid profile email groups',
      SVC_RBAC_ADMINS: 'user:alice',
    },
  }))

  /** Signs `who` in through the provider's own login and consent pages, in a fresh context. */
  async function signIn(who: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/app/units`)
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click()
    await page.waitForURL((url) => url.toString().startsWith(idp.issuer))
    await page.fill('input[name="login"]', who)
    await page.fill('input[name="password"]', 'any password')
    await page.click('button[type="submit"]')
    // The provider asks for consent once per client.
    if (page.url().startsWith(idp.issuer)) await page.click('button[type="submit"]')
    await page.waitForURL(`${server.url}/app/units`)
    return { context, page }
  }

  it('signs in with PKCE through the provider and shows what the person may read', async () => {
    const idToken = await idTokenThroughServer(server.url, 'alice', ['openid', 'email'])
    const exchanged = await fetch(`${server.url}/v1/auth/exchange`, {
      method: 'POST',
      body: JSON.stringify({ id_token: idToken }),
    })
    const { access_token: alice } = (await exchanged.json()) as { access_token: string }
    for (const id of ['platform/dns', 'platform/edge']) {
      const created = await fetch(`${server.url}/v1/units`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${alice}` },
        body: JSON.stringify({ id }),
      })
      expect(created.status).toBe(201)
    }
    const locked = await fetch(`${server.url}/v1/units/platform/dns/lock`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}` },
      body: JSON.stringify({ Who: 'alice' }),
    })
    expect(locked.status).toBe(200)

    const { context, page } = await signIn('alice')
    const watch = await watchPage(page)
    await page.reload()
    expect(await page.locator('tbody tr').count()).toBe(2)
    expect(await page.textContent('header')).toContain('alice@example.test')
    await page.goto(`${server.url}/app/unit?id=platform%2Fdns`)
    expect(await page.getByRole('link', { name: 'Force unlock' }).count()).toBe(1)
    await watch.settle()
    expect(watch.errors()).toEqual([])

    // Signing out ends the login: the session cookie no longer opens a page.
    const cookie = (await context.cookies()).find((c) => c.name === 'cairn_session')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/app\/login/)
    const replayed = await fetch(`${server.url}/app/units`, {
      headers: { Cookie: `cairn_session=${cookie?.value ?? ''}` },
      redirect: 'manual',
    })
    expect(replayed.status).toBe(302)
    await context.close()
  })

  it('shows a person without rights no unit and no button', async () => {
    const { context, page } = await signIn('bob')
    expect(await page.locator('tbody tr').count()).toBe(0)
    expect(await page.textContent('main')).toContain('No unit here that you may read')
    const answer = await page.goto(`${server.url}/app/unit?id=platform%2Fdns`)
    expect(answer?.status()).toBe(403)
    expect(await page.locator('form[method="post"]').count()).toBeLessThanOrEqual(1)
    expect(await page.getByRole('link', { name: 'Force unlock' }).count()).toBe(0)
    await page.goto(`${server.url}/app/locks`)
    expect(await page.textContent('main')).not.toContain('platform/dns')
    await context.close()
  })
  it("an administrator gives a reader a scope on the access page: the reader sees it and no administrators' page", async () => {
    // Both have signed in once (the tests above): the access page lists them.
    const { context, page } = await signIn('alice')
    const watch = await watchPage(page)
    await page.goto(`${server.url}/app/admin/access`)
    expect(await page.textContent('main')).toContain('bob@example.test')
    await page.locator('input[name="principal"]').fill('user:bob')
    await page.locator('select[name="role"]').selectOption('reader')
    await page.locator('input[name="scope"]').fill('platform/dns')
    await page.getByRole('button', { name: 'Give role' }).click()
    expect(await page.textContent('main')).toContain('Gave user:bob reader on platform/dns.')
    await shoot(page, 'access')
    await watch.settle()
    expect(watch.violations()).toEqual([])
    expect(watch.errors()).toEqual([])

    const asBob = await signIn('bob')
    const bobWatch = await watchPage(asBob.page)
    await asBob.page.reload()
    expect(await asBob.page.locator('tbody tr').count()).toBe(1)
    expect(await asBob.page.textContent('tbody')).toContain('platform/dns')
    expect(await asBob.page.locator('nav[aria-label="Administration"]').count()).toBe(0)
    for (const path of [
      '/app/audit',
      '/app/admin/freezes',
      '/app/admin/webhooks',
      '/app/admin/access',
      '/app/settings/trust-policies',
    ]) {
      const answer = await asBob.page.goto(`${server.url}${path}`)
      expect(answer?.status(), path).toBe(403)
      expect(await asBob.page.textContent('h1'), path).toBe('Not allowed')
    }
    await bobWatch.settle()
    expect(bobWatch.violations()).toEqual([])
    // The only errors are the refusals' status, as Chromium reports a 403 page.
    expect(bobWatch.errors().filter((error) => !error.includes('status of 403'))).toEqual([])

    // Taken back through the page that asks: bob reads nothing again.
    await page.goto(`${server.url}/app/admin/access`)
    await page
      .getByRole('row', { name: /user:bob/ })
      .getByRole('link', { name: 'Remove' })
      .click()
    await page.getByRole('button', { name: 'Remove the assignment' }).click()
    await asBob.page.goto(`${server.url}/app/units`)
    expect(await asBob.page.locator('tbody tr').count()).toBe(0)
    await asBob.context.close()
    await context.close()
  })
})
