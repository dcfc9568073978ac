import { TokenPairSchema, type TokenPair } from '@cairn/contract'
import * as v from 'valibot'
import { CairnError, unreachable } from './errors'
import { fetchOf, type CaCertificates } from './trusting-fetch'

/** Where the client gets its bearer token, and a fresh one after a 401. */
export interface TokenProvider {
  /** The token to send, or undefined to send none. */
  token(): string | undefined | Promise<string | undefined>
  /** Called once after a 401; a new token makes the client retry, undefined makes it give up. */
  refresh?(): Promise<string | undefined>
}

/** A token that never changes: an API token, or an access token for a short script. */
export function staticToken(token: string): TokenProvider {
  return { token: () => token }
}

export interface RefreshingTokensOptions {
  baseUrl: string
  accessToken: string
  refreshToken: string
  /** Called with each new pair, to save it: the previous refresh token no longer works. */
  onRotate: (pair: TokenPair) => void | Promise<void>
  fetch?: typeof fetch
  /** Certificate authorities to trust beside Node's own (Node.js only), as `createClient` takes. */
  ca?: CaCertificates
  /** Refresh this long before the access token expires (default 30 s). */
  marginMs?: number
  now?: () => number
}

/**
 * An access token kept fresh with its refresh token: refreshed before it expires (read from the
 * JWT's `exp`, without verifying it: the server does that) and again if the server answers 401.
 * Refresh tokens are single use, so every new pair goes to `onRotate` at once.
 */
export function refreshingTokens(options: RefreshingTokensOptions): TokenProvider {
  let access = options.accessToken
  let refresh = options.refreshToken
  let pending: Promise<string | undefined> | undefined
  const margin = options.marginMs ?? 30_000
  const now = options.now ?? (() => Date.now())
  const doFetch = fetchOf(options)
  const baseUrl = options.baseUrl.replace(/\/+$/, '')

  const renew = (): Promise<string | undefined> =>
    (pending ??= (async () => {
      const response = await doFetch(`${baseUrl}/v1/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ refresh_token: refresh }),
      }).catch((error: unknown) => {
        throw unreachable(baseUrl, error)
      })
      if (response.status === 401) return undefined
      if (!response.ok)
        throw new CairnError(`refreshing the access token failed: HTTP ${response.status}`)
      const pair = v.parse(TokenPairSchema, await response.json())
      access = pair.access_token
      refresh = pair.refresh_token
      await options.onRotate(pair)
      return access
    })().finally(() => {
      pending = undefined
    }))

  return {
    token: async () => {
      const expires = expiryOf(access)
      if (expires !== undefined && expires - margin <= now()) return (await renew()) ?? access
      return access
    },
    refresh: renew,
  }
}

/** A JWT's `exp` in milliseconds, or undefined for a token that is not a JWT. */
export function expiryOf(token: string): number | undefined {
  const payload = token.split('.')[1]
  if (payload === undefined || token.split('.').length !== 3) return undefined
  try {
    const claims = JSON.parse(decodeBase64Url(payload)) as { exp?: unknown }
    return typeof claims.exp === 'number' ? claims.exp * 1000 : undefined
  } catch {
    return undefined
  }
}

function decodeBase64Url(text: string): string {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4))
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))
}
