import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { delimiter, join } from 'node:path'
import { visibleText, type AuthConfig } from '@cairn/sdk'
import { CLIError } from '../cli-error'

export interface OidcLoginOptions {
  config: AuthConfig
  /** A loopback port to listen on, instead of one the redirect URIs name or a free one. */
  port?: number
  /** Print the URL only; never start a browser. */
  noBrowser: boolean
  timeoutMs: number
  /** Where to say what is happening (stderr). */
  say: (text: string) => void
  /** The fetch for the provider's token endpoint (one that trusts `--ca-file`, when given). */
  fetch?: typeof fetch
}

/**
 * The authorization code flow with PKCE for a native app (RFC 8252): a loopback listener takes
 * the redirect, the browser (if there is one) does the login at the provider, and the provider's
 * token endpoint gives back an ID token for Cairn to exchange.
 */
export async function loginWithProvider(options: OidcLoginOptions): Promise<string> {
  const { config } = options
  if (
    config.authorization_endpoint === undefined ||
    config.token_endpoint === undefined ||
    config.client_id === null
  ) {
    throw new CLIError(
      'the server publishes no complete OpenID configuration (authorization and token endpoints)',
    )
  }
  const redirect = loopbackRedirect(config.redirect_uris, options.port)
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const state = randomBytes(16).toString('base64url')
  const listener = await listen(redirect)
  try {
    const redirectUri = `http://${redirect.host}:${(listener.address() as AddressInfo).port}${redirect.path}`
    const authorize = new URL(config.authorization_endpoint)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: config.client_id,
      redirect_uri: redirectUri,
      scope: config.scopes.join(' '),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      // Refresh tokens need offline_access, which providers grant with an explicit consent.
      ...(config.scopes.includes('offline_access') ? { prompt: 'consent' } : {}),
    }).toString()
    const url = authorize.toString()
    const browser = options.noBrowser ? undefined : findBrowser()
    options.say(
      browser === undefined
        ? `Open this URL in a browser to log in:\n\n  ${visibleText(url)}\n`
        : `Opening a browser to log in. If it does not open, visit:\n\n  ${visibleText(url)}\n`,
    )
    if (browser !== undefined) spawn(browser, [url], { stdio: 'ignore', detached: true }).unref()
    const code = await waitForCode(listener, redirect.path, state, options.timeoutMs)
    return await exchangeCode(options.fetch ?? fetch, config.token_endpoint, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: config.client_id,
      code_verifier: verifier,
    })
  } finally {
    listener.closeAllConnections()
    listener.close()
  }
}

interface Redirect {
  host: string
  port: number
  path: string
}

/** The first loopback redirect URI the server names; a port-less one means any free port. */
function loopbackRedirect(uris: readonly string[], port: number | undefined): Redirect {
  for (const uri of uris) {
    const parsed = new URL(uri)
    const host = parsed.hostname.replace(/^\[|\]$/g, '')
    if (parsed.protocol === 'http:' && ['127.0.0.1', 'localhost', '::1'].includes(host)) {
      return {
        host: host === '::1' ? '[::1]' : host,
        port: port ?? (parsed.port === '' ? 0 : Number(parsed.port)),
        path: parsed.pathname,
      }
    }
  }
  if (uris.length > 0)
    throw new CLIError(`the server names no loopback redirect URI for the CLI: ${uris.join(', ')}`)
  return { host: '127.0.0.1', port: port ?? 0, path: '/callback' }
}

function listen(redirect: Redirect): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (error) => {
      reject(
        new CLIError(
          `cannot listen on ${redirect.host}:${redirect.port} for the login redirect: ${error.message}`,
        ),
      )
    })
    server.listen(redirect.port, redirect.host.replace(/^\[|\]$/g, ''), () => {
      resolve(server)
    })
  })
}

function waitForCode(
  server: Server,
  path: string,
  state: string,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new CLIError(
          `no login came back within ${Math.round(timeoutMs / 1000)} s; run cairn login again`,
        ),
      )
    }, timeoutMs)
    server.on('request', (request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost')
      if (url.pathname !== path) {
        response.writeHead(404).end()
        return
      }
      const page = (title: string) => {
        response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
        response.end(`<!doctype html><title>Cairn</title><p>${title}</p>`)
      }
      clearTimeout(timer)
      const error = url.searchParams.get('error')
      if (error !== null) {
        page('The login failed. You can close this window.')
        reject(
          new CLIError(
            `the provider refused the login: ${error} ${url.searchParams.get('error_description') ?? ''}`.trim(),
          ),
        )
        return
      }
      if (url.searchParams.get('state') !== state) {
        page('The login failed. You can close this window.')
        reject(
          new CLIError(
            'the login came back with another state: it was not started here; run cairn login again',
          ),
        )
        return
      }
      const code = url.searchParams.get('code')
      if (code === null) {
        page('The login failed. You can close this window.')
        reject(new CLIError('the login came back without a code'))
        return
      }
      page('Logged in to Cairn. You can close this window.')
      resolve(code)
    })
  })
}

async function exchangeCode(
  doFetch: typeof fetch,
  tokenEndpoint: string,
  form: Record<string, string>,
): Promise<string> {
  const response = await doFetch(tokenEndpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  }).catch((error: unknown) => {
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
    const why = typeof cause?.code === 'string' ? cause.code : String(cause?.message ?? error)
    throw new CLIError(`cannot reach the provider's token endpoint ${tokenEndpoint}: ${why}`)
  })
  const body = (await response.json().catch(() => ({}))) as {
    id_token?: unknown
    error?: unknown
    error_description?: unknown
  }
  if (!response.ok || typeof body.id_token !== 'string') {
    const why =
      typeof body.error === 'string'
        ? `${body.error} ${typeof body.error_description === 'string' ? body.error_description : ''}`
        : `HTTP ${response.status}`
    throw new CLIError(`the provider did not give an ID token: ${why.trim()}`)
  }
  return body.id_token
}

/** A program that opens URLs in a browser, if this machine has one. */
function findBrowser(): string | undefined {
  const candidates =
    process.platform === 'darwin'
      ? ['open']
      : process.platform === 'win32'
        ? []
        : ['xdg-open', 'x-www-browser', 'www-browser']
  for (const name of candidates) {
    for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
      try {
        accessSync(join(dir, name), constants.X_OK)
        return join(dir, name)
      } catch {
        // not here
      }
    }
  }
  return undefined
}
