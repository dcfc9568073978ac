// Drives an authorization-code + PKCE login the way a browser would, with fetch alone: manual
// redirects, a cookie jar, and the provider's login and consent forms (oidc-provider's
// devInteractions). It stops at the redirect back to the client and never fetches that URL.
import { createHash, randomBytes } from 'node:crypto'

import { CookieJar } from './cookie-jar'

export interface PkcePair {
  verifier: string
  challenge: string
}

/** RFC 7636: a 32-byte random base64url verifier and its S256 challenge. */
export function pkcePair(): PkcePair {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  return { verifier, challenge }
}

/** An OAuth error answer: from the token endpoint, or in the redirect back to the client. */
export class OAuthError extends Error {
  readonly error: string
  readonly errorDescription: string | undefined
  readonly status: number | undefined

  constructor(error: string, errorDescription?: string, status?: number) {
    super(errorDescription === undefined ? error : `${error}: ${errorDescription}`)
    this.name = 'OAuthError'
    this.error = error
    this.errorDescription = errorDescription
    this.status = status
  }
}

export interface ProviderMetadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
  end_session_endpoint?: string
  revocation_endpoint?: string
  [key: string]: unknown
}

/** Fetches `<issuer>/.well-known/openid-configuration`. */
export async function discover(issuer: string): Promise<ProviderMetadata> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
  const response = await fetch(url)
  if (!response.ok) {
    throw new Error(`discovery at ${url} answered ${response.status}`)
  }
  const metadata = (await response.json()) as Partial<ProviderMetadata>
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof metadata[field] !== 'string') {
      throw new Error(`discovery at ${url} has no ${field}`)
    }
  }
  return metadata as ProviderMetadata
}

export interface FollowAuthorizationOptions {
  login: string
  /** devInteractions accepts any password; default 'password'. */
  password?: string
  /** Carries the provider's session between calls (single sign-on); default: a fresh jar. */
  cookieJar?: CookieJar
  /**
   * Where to stop. Default: the authorize URL's redirect_uri parameter; the flow also stops at the
   * first redirect that leaves the provider's origin.
   */
  redirectUri?: string
}

const MAX_HOPS = 20

/**
 * Opens `authorizeUrl` like a browser, signs in with `login`, consents, and returns the URL the
 * provider finally redirects to (the client's redirect_uri with code and state, or with an error).
 * That URL is not fetched.
 */
export async function followAuthorization(
  authorizeUrl: string | URL,
  options: FollowAuthorizationOptions,
): Promise<string> {
  const start = new URL(authorizeUrl)
  const jar = options.cookieJar ?? new CookieJar()
  const stopAt = options.redirectUri ?? start.searchParams.get('redirect_uri') ?? undefined
  const isFinal = (target: URL): boolean => {
    if (target.origin !== start.origin) return true
    if (stopAt === undefined) return false
    const stop = new URL(stopAt)
    return target.origin === stop.origin && target.pathname === stop.pathname
  }

  let url = start
  let body: URLSearchParams | undefined
  const submitted: string[] = []
  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    const headers = new Headers()
    const cookie = jar.header(url)
    if (cookie !== undefined) headers.set('cookie', cookie)
    if (body !== undefined) headers.set('content-type', 'application/x-www-form-urlencoded')
    const response = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    })
    jar.store(url, response)

    const location = response.headers.get('location')
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel()
      const target = new URL(location, url)
      if (isFinal(target)) return target.href
      url = target
      body = undefined
      continue
    }

    const text = await response.text()
    const form = response.ok ? parseForm(text, url) : undefined
    if (form === undefined) {
      throw new Error(
        `authorization at ${url.href} answered ${response.status} without a form or redirect: ${summarize(text)}`,
      )
    }
    const prompt = form.fields.get('prompt') ?? '?'
    if (form.inputs.has('login')) form.fields.set('login', options.login)
    if (form.inputs.has('password')) form.fields.set('password', options.password ?? 'password')
    submitted.push(prompt)
    url = form.action
    body = new URLSearchParams([...form.fields])
  }
  throw new Error(
    `authorization did not come back to the client after ${MAX_HOPS} requests (forms: ${submitted.join(', ')})`,
  )
}

export interface LoginWithPkceOptions {
  /** Used for discovery when authorizationEndpoint is not given. */
  issuer?: string
  authorizationEndpoint?: string
  clientId: string
  redirectUri: string
  login: string
  password?: string
  /** Default: openid profile email groups. Add offline_access for a refresh token. */
  scopes?: readonly string[]
  /** Default: 'consent' when offline_access is requested (the provider needs it for that scope). */
  prompt?: string
  /** Default: random. */
  state?: string
  /** Default: random. */
  nonce?: string
  /** Default: a fresh pkcePair(). */
  pkce?: PkcePair
  cookieJar?: CookieJar
  /** More authorization request parameters (login_hint, max_age, ...). */
  extraParams?: Readonly<Record<string, string>>
}

export interface LoginResult {
  code: string
  state: string
  /** The redirect to the client, not fetched. */
  redirectUrl: string
  /** The PKCE verifier to send with the code. */
  codeVerifier: string
  nonce: string
}

export const DEFAULT_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'groups']

/** A full browser login with PKCE S256; returns the code from the redirect back to the client. */
export async function loginWithPkce(options: LoginWithPkceOptions): Promise<LoginResult> {
  const authorizationEndpoint =
    options.authorizationEndpoint ?? (await discover(requireIssuer(options))).authorization_endpoint
  const scopes = options.scopes ?? DEFAULT_SCOPES
  const state = options.state ?? randomBytes(16).toString('base64url')
  const nonce = options.nonce ?? randomBytes(16).toString('base64url')
  const pkce = options.pkce ?? pkcePair()
  const prompt = options.prompt ?? (scopes.includes('offline_access') ? 'consent' : undefined)

  const authorizeUrl = new URL(authorizationEndpoint)
  const params = authorizeUrl.searchParams
  params.set('response_type', 'code')
  params.set('client_id', options.clientId)
  params.set('redirect_uri', options.redirectUri)
  params.set('scope', scopes.join(' '))
  params.set('state', state)
  params.set('nonce', nonce)
  params.set('code_challenge', pkce.challenge)
  params.set('code_challenge_method', 'S256')
  if (prompt !== undefined) params.set('prompt', prompt)
  for (const [key, value] of Object.entries(options.extraParams ?? {})) params.set(key, value)

  const redirectUrl = await followAuthorization(authorizeUrl, {
    login: options.login,
    redirectUri: options.redirectUri,
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.cookieJar === undefined ? {} : { cookieJar: options.cookieJar }),
  })
  const back = new URL(redirectUrl)
  const error = back.searchParams.get('error')
  if (error !== null) {
    throw new OAuthError(error, back.searchParams.get('error_description') ?? undefined)
  }
  const code = back.searchParams.get('code')
  if (code === null) throw new Error(`redirect back to the client has no code: ${redirectUrl}`)
  const returnedState = back.searchParams.get('state')
  if (returnedState !== state) {
    throw new Error(`redirect back to the client has state ${String(returnedState)}, not ${state}`)
  }
  return { code, state, redirectUrl, codeVerifier: pkce.verifier, nonce }
}

export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  id_token?: string
  refresh_token?: string
  scope?: string
  [key: string]: unknown
}

interface TokenEndpointOptions {
  /** Used for discovery when tokenEndpoint is not given. */
  issuer?: string
  tokenEndpoint?: string
  clientId: string
  /** When set, the client authenticates with client_secret_basic. */
  clientSecret?: string
}

export interface ExchangeCodeOptions extends TokenEndpointOptions {
  code: string
  codeVerifier: string
  redirectUri: string
}

/** Redeems an authorization code at the token endpoint; throws OAuthError on an error answer. */
export async function exchangeCode(options: ExchangeCodeOptions): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'authorization_code',
    code: options.code,
    code_verifier: options.codeVerifier,
    redirect_uri: options.redirectUri,
  })
}

export interface RefreshOptions extends TokenEndpointOptions {
  refreshToken: string
  scope?: string
}

/** Uses a refresh token at the token endpoint; throws OAuthError on an error answer. */
export async function refreshTokens(options: RefreshOptions): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  })
}

export interface GetIdTokenOptions {
  provider: { readonly issuer: string }
  clientId: string
  clientSecret?: string
  redirectUri: string
  login: string
  password?: string
  scopes?: readonly string[]
  cookieJar?: CookieJar
}

/** loginWithPkce then exchangeCode: the token response, with its id_token. */
export async function getIdToken(
  options: GetIdTokenOptions,
): Promise<TokenResponse & { id_token: string }> {
  const metadata = await discover(options.provider.issuer)
  const login = await loginWithPkce({
    authorizationEndpoint: metadata.authorization_endpoint,
    clientId: options.clientId,
    redirectUri: options.redirectUri,
    login: options.login,
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
    ...(options.cookieJar === undefined ? {} : { cookieJar: options.cookieJar }),
  })
  const tokens = await exchangeCode({
    tokenEndpoint: metadata.token_endpoint,
    clientId: options.clientId,
    ...(options.clientSecret === undefined ? {} : { clientSecret: options.clientSecret }),
    code: login.code,
    codeVerifier: login.codeVerifier,
    redirectUri: options.redirectUri,
  })
  const idToken = tokens.id_token
  if (idToken === undefined) throw new Error('token response has no id_token')
  return { ...tokens, id_token: idToken }
}

async function tokenRequest(
  options: TokenEndpointOptions,
  grant: Record<string, string>,
): Promise<TokenResponse> {
  const tokenEndpoint =
    options.tokenEndpoint ?? (await discover(requireIssuer(options))).token_endpoint
  const body = new URLSearchParams(grant)
  const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' })
  if (options.clientSecret === undefined) {
    body.set('client_id', options.clientId)
  } else {
    // RFC 6749 2.3.1: form-encode id and secret before base64.
    const credentials = `${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`)
  }
  const response = await fetch(tokenEndpoint, { method: 'POST', headers, body })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new Error(`token endpoint answered ${response.status} with non-JSON: ${summarize(text)}`)
  }
  if (!response.ok) {
    const answer = json as { error?: unknown; error_description?: unknown }
    throw new OAuthError(
      typeof answer.error === 'string' ? answer.error : `http_${response.status}`,
      typeof answer.error_description === 'string' ? answer.error_description : undefined,
      response.status,
    )
  }
  return json as TokenResponse
}

function requireIssuer(options: { issuer?: string }): string {
  if (options.issuer === undefined) {
    throw new Error('give either the issuer (for discovery) or the endpoint itself')
  }
  return options.issuer
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}

interface ParsedForm {
  action: URL
  /** Every named input with its value (hidden inputs keep theirs, others start empty). */
  fields: Map<string, string>
  /** Names of the visible inputs. */
  inputs: Set<string>
}

/** The first POST form of a page, as a browser would submit it. */
function parseForm(html: string, base: URL): ParsedForm | undefined {
  const formMatch = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html)
  if (formMatch === null) return undefined
  const formAttributes = parseAttributes(formMatch[1] ?? '')
  if ((formAttributes.get('method') ?? 'get').toLowerCase() !== 'post') return undefined
  const action = new URL(formAttributes.get('action') ?? base.href, base)

  const fields = new Map<string, string>()
  const inputs = new Set<string>()
  for (const input of (formMatch[2] ?? '').matchAll(/<input\b([^>]*)>/gi)) {
    const attributes = parseAttributes(input[1] ?? '')
    const name = attributes.get('name')
    if (name === undefined) continue
    fields.set(name, attributes.get('value') ?? '')
    if ((attributes.get('type') ?? 'text').toLowerCase() !== 'hidden') inputs.add(name)
  }
  return { action, fields, inputs }
}

function parseAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>()
  for (const match of source.matchAll(
    /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g,
  )) {
    const name = (match[1] ?? '').toLowerCase()
    attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ''))
  }
  return attributes
}

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (entity, body: string) => {
    const lower = body.toLowerCase()
    if (lower.startsWith('#x')) return String.fromCodePoint(Number.parseInt(lower.slice(2), 16))
    if (lower.startsWith('#')) return String.fromCodePoint(Number.parseInt(lower.slice(1), 10))
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
    return named[lower] ?? entity
  })
}

function summarize(text: string): string {
  const plain = text
    .replace(/<style[\s\S]*?<\/style>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return plain.length > 300 ? `${plain.slice(0, 300)}…` : plain
}

/**
 * A user's whole browser login as Cairn's web clients run it: the provider and client discovered
 * from the server's `/v1/auth/config`, PKCE at the provider, the code redeemed there. Returns the
 * provider's ID token, for the caller to exchange at `/v1/auth/exchange`.
 */
export async function idTokenThroughServer(
  serverUrl: string,
  login: string,
  scopes: readonly string[] = DEFAULT_SCOPES,
): Promise<string> {
  const config = (await (await fetch(`${serverUrl}/v1/auth/config`)).json()) as {
    client_id: string
    authorization_endpoint: string
    token_endpoint: string
    redirect_uris: string[]
  }
  const redirectUri = config.redirect_uris[0]
  if (redirectUri === undefined) throw new Error(`${serverUrl} names no redirect URI`)
  const { code, codeVerifier } = await loginWithPkce({
    authorizationEndpoint: config.authorization_endpoint,
    clientId: config.client_id,
    redirectUri,
    login,
    scopes,
  })
  const tokens = await exchangeCode({
    tokenEndpoint: config.token_endpoint,
    clientId: config.client_id,
    code,
    codeVerifier,
    redirectUri,
  })
  if (tokens.id_token === undefined) throw new Error('the provider returned no ID token')
  return tokens.id_token
}
