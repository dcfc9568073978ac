import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  deliverToTerraform,
  followAuthorization,
  freePort,
  httpsRequest,
  launchBrowser,
  makeTestCa,
  startOidcProvider,
  TerraformWorkspace,
  type RunningProvider,
  type TestCa,
  useServer,
  useTestCa,
  waitFor,
  type Browser,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'

const CLIENT = 'cairn'

/**
 * The authorization URL `terraform login` printed on stdout, once its line has ended. Terraform
 * writes the URL and its line's end apart, and its last parameter is `state`: a URL taken before
 * the line ends is cut, and one read from stdout and stderr run together can run on into what
 * stderr said (a `'` once). Either way the state Terraform gets back is not its own, and its
 * callback answers 400.
 */
function printedAuthorizationUrl(output: string): string | undefined {
  return /(https:\/\/\S+\/oauth\/authorization\?\S+)\s/.exec(output)?.[1]
}

describe('terraform login through a real OpenID provider, over TLS', () => {
  let dir: string
  let tls: TestCa
  let idp: RunningProvider
  let port: number
  let base: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-login-'))
    tls = await makeTestCa(dir)
    port = await freePort()
    base = `https://localhost:${port}`
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [`${base}/oauth/callback`] }],
      accounts: { alice: { email: 'alice@example.test', groups: ['platform'] } },
    })
  })
  afterAll(async () => {
    await idp.close()
    await rm(dir, { recursive: true, force: true })
  })
  const server = useServer(() => ({
    auth: true,
    args: ['-port', String(port), '-tls-cert', tls.certPath, '-tls-key', tls.keyPath],
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_PUBLIC_BASE_URL: base,
      SVC_AUTH_SCOPES: 'openid profile email groups',
      // The audit trail is for administrators, RBAC on or off.
      SVC_RBAC_ADMINS: 'user:alice',
    },
  }))

  /** Plays the browser: Cairn's authorization page, the provider's login, back to Cairn, back to the client. */
  async function browse(authorizeUrl: string): Promise<string> {
    const toProvider = await httpsRequest(authorizeUrl, tls.ca)
    expect(toProvider.status, toProvider.body).toBe(302)
    const toCairn = await followAuthorization(String(toProvider.headers['location']), {
      login: 'alice',
    })
    expect(toCairn.startsWith(`${base}/oauth/callback?`)).toBe(true)
    const toClient = await httpsRequest(toCairn, tls.ca)
    expect(toClient.status, toClient.body).toBe(302)
    return String(toClient.headers['location'])
  }

  it('advertises login.v1 in its discovery document', async () => {
    const discovery = JSON.parse(
      (await httpsRequest(`${base}/.well-known/terraform.json`, tls.ca)).body,
    ) as Record<string, unknown>
    expect(discovery['login.v1']).toEqual({
      client: 'terraform-cli',
      grant_types: ['authz_code'],
      authz: '/oauth/authorization',
      token: '/oauth/token',
      ports: [10000, 10010],
    })
  })

  it('sends the tokens page terraform login names to the sign-in page, with the provider offered', async () => {
    const page = await httpsRequest(`${base}/app/settings/tokens?source=terraform-login`, tls.ca)
    expect(page.status).toBe(302)
    const login = String(page.headers['location'])
    expect(new URL(login, base).searchParams.get('next')).toBe(
      '/app/settings/tokens?source=terraform-login',
    )
    const signIn = await httpsRequest(`${base}${login}`, tls.ca)
    expect(signIn.status).toBe(200)
    expect(signIn.body).toContain('Sign in with your identity provider')
  })

  it('signs in to the dashboard through the provider, records the login, and makes a token there', async () => {
    const cookieOf = (answer: { headers: Record<string, string | string[] | undefined> }) => {
      const set = answer.headers['set-cookie']
      return (Array.isArray(set) ? set : [set ?? ''])
        .map((cookie) => cookie.split(';')[0] ?? '')
        .find((cookie) => /^cairn_\w+=./.test(cookie))
    }
    const start = await httpsRequest(
      `${base}/app/login/oidc?next=${encodeURIComponent('/app/settings/tokens')}`,
      tls.ca,
    )
    expect(start.status, start.body).toBe(302)
    const nonce = cookieOf(start) ?? ''
    const toCairn = await followAuthorization(String(start.headers['location']), {
      login: 'alice',
    })
    expect(toCairn.startsWith(`${base}/oauth/callback?`)).toBe(true)
    const back = await httpsRequest(toCairn, tls.ca, { headers: { Cookie: nonce } })
    expect(back.status, back.body).toBe(302)
    expect(back.headers['location']).toBe('/app/settings/tokens')
    const session = cookieOf(back) ?? ''
    expect(session).toMatch(/^cairn_session=/)

    const page = await httpsRequest(`${base}/app/settings/tokens`, tls.ca, {
      headers: { Cookie: session },
    })
    expect(page.status, page.body).toBe(200)
    expect(page.body).toContain('alice@example.test')
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
    const created = await httpsRequest(`${base}/app/settings/tokens`, tls.ca, {
      method: 'POST',
      headers: {
        Cookie: session,
        Origin: base,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf, name: 'ci', days: '7' }).toString(),
    })
    expect(created.status, created.body).toBe(200)
    const secret = /<p id="new-token" class="secret">([^<]+)<\/p>/.exec(created.body)?.[1] ?? ''
    const me = await httpsRequest(`${base}/v1/auth/me`, tls.ca, {
      headers: { Authorization: `Bearer ${secret}` },
    })
    expect(JSON.parse(me.body)).toMatchObject({ subject: 'alice' })

    const audit = await httpsRequest(`${base}/v1/audit?action=login&limit=10`, tls.ca, {
      headers: { Authorization: `Bearer ${secret}` },
    })
    expect(audit.status, audit.body).toBe(200)
    const { records } = JSON.parse(audit.body) as { records: Record<string, unknown>[] }
    expect(records).toContainEqual(
      // The provider sends the browser back to /oauth/callback: the login is recorded there.
      expect.objectContaining({
        surface: 'oauth',
        principal: expect.objectContaining({ subject: 'alice' }) as unknown,
        outcome: { status: 302 },
        detail: { via: 'dashboard' },
      }),
    )
  })

  it('logs Terraform in, and Terraform then applies with the token it stored', async () => {
    const tf = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath })
    const hostname = `localhost:${server.port}`
    const login = tf.start(['login', hostname], { input: 'yes\n' })
    // Also when the test times out, which never reaches its `finally`: a login left waiting
    // outlives the run and holds one of the callback ports 10000-10010.
    onTestFinished(() => {
      login.kill()
    })
    try {
      const url = await waitFor(
        'terraform login to print the authorization URL',
        () => printedAuthorizationUrl(login.stdout()),
        20_000,
      )
      const back = await browse(url)
      expect(back).toMatch(/^http:\/\/localhost:100\d\d\/login\?/)
      // Terraform may close its callback server before its page is written: see the helper.
      expect([200, 'closed'], `${back}, for ${url}`).toContain(await deliverToTerraform(back))
      const result = await login.done
      expect(result.code, result.stdout + result.stderr).toBe(0)
      expect(result.stdout).toContain('Success!')

      const saved = JSON.parse(
        await readFile(join(tf.home, '.terraform.d', 'credentials.tfrc.json'), 'utf8'),
      ) as {
        credentials: Record<string, { token: string }>
      }
      const token = saved.credentials[hostname]?.token ?? ''
      expect(token).toMatch(/^eyJ/)
      const me = JSON.parse(
        (
          await httpsRequest(`${base}/v1/auth/me`, tls.ca, {
            headers: { Authorization: `Bearer ${token}` },
          })
        ).body,
      ) as {
        subject: string
      }
      expect(me.subject).toBe('alice')

      await tf.write(
        'main.tf',
        `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "logged-in"
    }
  }
}
resource "terraform_data" "x" {
  input = "after login"
}
`,
      )
      // An empty TF_CLI_CONFIG_FILE makes Terraform read the credentials file login wrote.
      const env = { TF_CLI_CONFIG_FILE: '' }
      expect((await tf.run(['init', '-input=false'], { env })).code).toBe(0)
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'], { env })
      expect(apply.code, apply.stderr).toBe(0)
      const versions = JSON.parse(
        (
          await httpsRequest(`${base}/v1/units/logged-in/versions`, tls.ca, {
            headers: { Authorization: `Bearer ${token}` },
          })
        ).body,
      ) as { versions: { author: string; source: string }[] }
      expect(versions.versions[0]).toMatchObject({ author: 'alice', source: 'cloud' })
    } finally {
      // Still waiting for a code when the test failed before giving one.
      login.kill()
      await tf.dispose()
    }
  })

  describe('as an OAuth server for any client', () => {
    const redirect = 'http://127.0.0.1:10005/login'
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const authorize = (params: Record<string, string>) =>
      `${base}/oauth/authorization?${new URLSearchParams({
        client_id: 'any-client',
        redirect_uri: redirect,
        response_type: 'code',
        state: 'the-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...params,
      }).toString()}`
    const token = (form: Record<string, string>) =>
      httpsRequest(`${base}/oauth/token`, tls.ca, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: 'any-client',
          redirect_uri: redirect,
          code_verifier: verifier,
          ...form,
        }).toString(),
      })

    it('returns both token kinds once for a code, and refuses the code a second time', async () => {
      const back = new URL(await browse(authorize({})))
      expect(back.searchParams.get('state')).toBe('the-state')
      const code = back.searchParams.get('code') ?? ''
      const first = await token({ code })
      expect(first.status, first.body).toBe(200)
      const body = JSON.parse(first.body) as Record<string, unknown>
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'api s3' })
      expect(body['access_token']).toMatch(/^eyJ/)
      expect(body['token']).toMatch(/^svc_tfe_/)
      const apiToken = String(body['token'])
      const me = await httpsRequest(`${base}/v1/auth/me`, tls.ca, {
        headers: { Authorization: `Bearer ${apiToken}` },
      })
      expect(JSON.parse(me.body)).toMatchObject({ subject: 'alice' })
      // The opaque token lives SVC_IAC_TOKEN_TTL too: a login leaves no token that never expires.
      const listed = await httpsRequest(`${base}/v1/auth/tokens`, tls.ca, {
        headers: { Authorization: `Bearer ${apiToken}` },
      })
      const { tokens } = JSON.parse(listed.body) as {
        tokens: { name: string; created: string; expires: string | null }[]
      }
      const stored = tokens.find((listedToken) => listedToken.name.startsWith('terraform login'))
      expect(stored?.expires).not.toBeNull()
      expect(Date.parse(stored?.expires ?? '') - Date.parse(stored?.created ?? '')).toBe(3_600_000)

      const again = await token({ code })
      expect(again.status).toBe(400)
      expect(JSON.parse(again.body)).toEqual({
        error: 'invalid_grant',
        error_description: 'Invalid or expired authorization code',
      })
    })

    it('refuses a code with the wrong PKCE verifier or redirect', async () => {
      const code = new URL(await browse(authorize({}))).searchParams.get('code') ?? ''
      const wrongVerifier = await token({
        code,
        code_verifier: randomBytes(32).toString('base64url'),
      })
      expect(JSON.parse(wrongVerifier.body)).toMatchObject({ error: 'invalid_grant' })
      const wrongRedirect = await token({ code, redirect_uri: 'http://127.0.0.1:10006/login' })
      expect(JSON.parse(wrongRedirect.body)).toMatchObject({ error: 'invalid_grant' })
    })

    it.each([
      [{ redirect_uri: 'http://127.0.0.1:9999/login' }, 'Invalid redirect_uri'],
      [{ redirect_uri: 'https://evil.example/login' }, 'Invalid redirect_uri'],
      [{ redirect_uri: 'http://10.0.0.1:10000/login' }, 'Invalid redirect_uri'],
      [{ client_id: '' }, 'Invalid client_id'],
      [{ code_challenge_method: 'plain' }, 'PKCE is required'],
    ])('refuses an authorization request with %j', async (params, message) => {
      const answer = await httpsRequest(authorize(params), tls.ca)
      expect(answer.status).toBe(400)
      expect(
        (JSON.parse(answer.body) as { error_description: string }).error_description,
      ).toContain(message)
    })

    it('refuses a forged code and tampered state with the spec messages', async () => {
      const forged = await token({ code: 'eyJhbGciOiJub25lIn0.e30.' })
      expect(JSON.parse(forged.body)).toEqual({
        error: 'invalid_grant',
        error_description: 'Invalid or expired authorization code',
      })
      const state = await httpsRequest(
        `${base}/oauth/callback?code=x&state=${'A'.repeat(60)}`,
        tls.ca,
      )
      expect(state.status).toBe(400)
      expect(JSON.parse(state.body)).toMatchObject({
        error_description: 'Invalid or expired state',
      })
    })
  })
})

describe('terraform login in local mode, over TLS', () => {
  const tls = useTestCa()
  let port: number
  beforeAll(async () => {
    port = await freePort()
  })
  const server = useServer(() => ({ auth: true, args: ['-port', String(port), ...tls.serverArgs] }))

  /** The session cookie a page set, for the next request of the same browser. */
  const sessionOf = (answer: { headers: Record<string, string | string[] | undefined> }) => {
    const set = answer.headers['set-cookie']
    return (Array.isArray(set) ? set : [set ?? ''])
      .map((cookie) => cookie.split(';')[0] ?? '')
      .find((cookie) => cookie.startsWith('cairn_session='))
  }

  /**
   * Plays the browser: Cairn's authorization endpoint, the page that asks for a token, the token
   * pasted there; returns where the page sends the browser back to Terraform.
   */
  async function pasteToken(authorizeUrl: string, token: string): Promise<string> {
    const toPage = await httpsRequest(authorizeUrl, tls.ca)
    expect(toPage.status, toPage.body).toBe(302)
    const pageUrl = new URL(String(toPage.headers['location']), authorizeUrl)
    expect(pageUrl.pathname).toBe('/app/login/terraform')
    const page = await httpsRequest(pageUrl.href, tls.ca)
    expect(page.status, page.body).toBe(200)
    const cookie = sessionOf(page) ?? ''
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
    const posted = await httpsRequest(`${pageUrl.origin}/app/login/terraform`, tls.ca, {
      method: 'POST',
      headers: {
        Cookie: cookie,
        Origin: pageUrl.origin,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        csrf,
        request: pageUrl.searchParams.get('request') ?? '',
        token,
        answer: 'allow',
      }).toString(),
    })
    expect(posted.status, posted.body).toBe(303)
    return String(posted.headers['location'])
  }

  it('prints a login address with the port, takes a pasted token, and Terraform applies with what it saved', async () => {
    const tf = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath })
    const hostname = `localhost:${server.port}`
    const login = tf.start(['login', hostname], { input: 'yes\n' })
    // Also when the test times out, which never reaches its `finally`: a login left waiting
    // outlives the run and holds one of the callback ports 10000-10010.
    onTestFinished(() => {
      login.kill()
    })
    try {
      const url = await waitFor(
        'terraform login to print the authorization URL',
        () => printedAuthorizationUrl(login.stdout()),
        20_000,
      )
      // The address Terraform prints names this server with its port: no tokens page of a host
      // without one.
      expect(url.startsWith(`https://${hostname}/oauth/authorization?`)).toBe(true)
      expect(login.output()).not.toContain('/app/settings/tokens')

      const back = await pasteToken(url, server.token)
      expect(back).toMatch(/^http:\/\/localhost:100\d\d\/login\?code=/)
      expect([200, 'closed'], `${back}, for ${url}`).toContain(await deliverToTerraform(back))
      const result = await login.done
      expect(result.code, result.stdout + result.stderr).toBe(0)
      expect(result.stdout).toContain('Success!')

      const saved = JSON.parse(
        await readFile(join(tf.home, '.terraform.d', 'credentials.tfrc.json'), 'utf8'),
      ) as { credentials: Record<string, { token: string }> }
      const token = saved.credentials[hostname]?.token ?? ''
      expect(token).toMatch(/^svc_tfe_/)
      expect(token).not.toBe(server.token)
      const me = JSON.parse(
        (
          await httpsRequest(`https://${hostname}/v1/auth/me`, tls.ca, {
            headers: { Authorization: `Bearer ${token}` },
          })
        ).body,
      ) as { subject: string; token: { kind: string; name: string } }
      expect(me).toMatchObject({ subject: 'local-admin', token: { kind: 'api_token' } })
      expect(me.token.name).toMatch(/^terraform login /)

      await tf.write(
        'main.tf',
        `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "local-login"
    }
  }
}
resource "terraform_data" "x" {
  input = "after a local login"
}
`,
      )
      // An empty TF_CLI_CONFIG_FILE makes Terraform read the credentials file login wrote.
      const env = { TF_CLI_CONFIG_FILE: '' }
      expect((await tf.run(['init', '-input=false'], { env })).code).toBe(0)
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'], { env })
      expect(apply.code, apply.stderr).toBe(0)
    } finally {
      // Still waiting for a code when the test failed before giving one.
      login.kill()
      await tf.dispose()
    }
  })

  describe('in Chromium', () => {
    let browser: Browser | undefined
    // A cold start of Chromium on a busy machine takes a while: not on the test's clock.
    beforeAll(async () => {
      browser = await launchBrowser()
    }, 120_000)
    afterAll(async () => {
      await browser?.close()
    })

    it(
      'completes: the page takes the token and the browser lands on Terraform',
      { timeout: 30_000 },
      async ({ onTestFailed }) => {
        if (browser === undefined) throw new Error('Chromium did not start')
        const tf = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath })
        const hostname = `localhost:${server.port}`
        const login = tf.start(['login', hostname], { input: 'yes\n' })
        // Also when the test times out, which never reaches its `finally`: a login left waiting
        // outlives the run and holds one of the callback ports 10000-10010.
        onTestFinished(() => {
          login.kill()
        })
        // It passes in seconds, and once in a few whole runs it waits until its deadline: say where.
        let step = 'waiting for the authorization URL'
        let pageRef: Awaited<ReturnType<Browser['newPage']>> | undefined
        onTestFailed(() => {
          const at = pageRef?.url() ?? 'no page yet'
          console.error(
            `failed while ${step}, the page at ${at}; terraform said:\n${login.output()}`,
          )
        })
        try {
          const url = await waitFor(
            'terraform login to print the authorization URL',
            () => printedAuthorizationUrl(login.stdout()),
            20_000,
          )
          // The test CA is trusted by Terraform through SSL_CERT_FILE; Chromium is told to accept it.
          const context = await browser.newContext({ ignoreHTTPSErrors: true })
          const page = await context.newPage()
          pageRef = page
          step = 'opening the authorization URL'
          await page.goto(url)
          step = 'giving the token'
          expect(page.url()).toContain('/app/login/terraform?')
          await page.getByLabel('API token', { exact: true }).fill(server.token)
          // The form's answer redirects to Terraform's loopback address, which the page's Content
          // Security Policy (form-action) must let through, or Chromium never asks for it; Terraform
          // may close its callback server before its page is written, so the navigation may fail.
          await Promise.all([
            page.waitForRequest(
              (request) => /^http:\/\/localhost:100\d\d\/login\?code=/.test(request.url()),
              { timeout: 15_000 },
            ),
            page
              .getByRole('button', { name: 'Give Terraform a token' })
              .click()
              .catch(() => undefined),
          ])
          step = 'waiting for terraform login to end'
          const result = await login.done
          expect(result.code, result.stdout + result.stderr).toBe(0)
          expect(result.stdout).toContain('Success!')
          await context.close()
        } finally {
          // Still waiting for a code when the test failed before giving one.
          login.kill()
          await tf.dispose()
        }
      },
    )
  })
})
