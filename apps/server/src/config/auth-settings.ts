import { isPrintableAscii } from '@cairn/contract'
import * as v from 'valibot'
import { ConfigError } from './config-error'
import { readVariables } from './read-settings'
import { boolean, httpUrl, positiveDuration, text } from './setting-schemas'
import type { Variable } from './settings'

/** Identity settings, from the environment only (service spec, Configuration). */
export interface AuthSettings {
  /** The OpenID provider; absent means local mode (an admin API token) unless auth is disabled. */
  readonly issuer: string | undefined
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
  readonly authUrl: string | undefined
  readonly tokenUrl: string | undefined
  readonly devSkipVerify: boolean
  /** With a provider configured, whether local mode's admin token still works (it warns). */
  readonly localAdmin: boolean
  /** Redirect URIs a CLI may use with the provider, shown by `GET /v1/auth/config`. */
  readonly redirectUris: readonly string[]
  readonly scopes: string
  readonly privateKeyPath: string | undefined
  readonly kid: string | undefined
  readonly previousKeyPaths: readonly string[]
  readonly previousKids: readonly string[]
  readonly accessTtlMs: number
  readonly refreshTtlMs: number
  readonly iacTokenTtlMs: number
  readonly oauthStateKey: string | undefined
  readonly publicBaseUrl: string | undefined
}

/** Each identity variable, in the order `-help` lists them and the first bad one is reported. */
export const AUTH_VARIABLES = {
  SVC_AUTH_ISSUER: {
    schema: httpUrl,
    help: 'OpenID provider issuer URL; unset: local mode with an admin API token',
  },
  SVC_AUTH_CLIENT_ID: { schema: text, help: 'OpenID client ID (required with SVC_AUTH_ISSUER)' },
  SVC_AUTH_CLIENT_SECRET: { schema: text, help: 'OpenID client secret, for confidential clients' },
  SVC_AUTH_AUTH_URL: {
    schema: httpUrl,
    help: 'the provider authorization endpoint, instead of the discovered one',
  },
  SVC_AUTH_TOKEN_URL: {
    schema: httpUrl,
    help: 'the provider token endpoint, instead of the discovered one',
  },
  SVC_AUTH_DEV_SKIP_VERIFY: {
    default: 'false',
    schema: boolean,
    help: 'true: skip the ID token issuer and audience checks (development only)',
  },
  SVC_LOCAL_ADMIN: {
    default: 'false',
    schema: boolean,
    help: 'true: with SVC_AUTH_ISSUER, still accept the admin token of local mode (warns at start)',
  },
  SVC_AUTH_REDIRECT_URIS: {
    schema: text,
    help: 'comma-separated redirect URIs clients use (default loopback /callback)',
  },
  SVC_AUTH_SCOPES: {
    default: 'openid profile email offline_access',
    schema: text,
    help: 'scopes clients ask for',
  },
  SVC_TOKENS_PRIVATE_KEY_PEM_PATH: {
    schema: text,
    help: 'Ed25519 private key (PEM) signing tokens; unset: ephemeral',
  },
  SVC_TOKENS_KID: {
    schema: ({ label }) =>
      v.pipe(
        v.string(),
        v.check(
          (kid) => kid.length >= 1 && kid.length <= 128 && isPrintableAscii(kid, { spaces: false }),
          `${label} must be 1 to 128 printable characters`,
        ),
      ),
    help: 'key ID of the signing key (default its thumbprint); change on rotation',
  },
  SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS: {
    schema: text,
    help: 'comma-separated keys of earlier rotations, still accepted',
  },
  SVC_TOKENS_PREVIOUS_KIDS: {
    schema: text,
    help: 'their key IDs, in the same order (default each file name)',
  },
  SVC_TOKENS_ACCESS_TTL: { default: '1h', schema: positiveDuration, help: 'access token lifetime' },
  SVC_TOKENS_REFRESH_TTL: {
    default: '720h',
    schema: positiveDuration,
    help: 'refresh token lifetime',
  },
  SVC_IAC_TOKEN_TTL: {
    default: '1h',
    schema: positiveDuration,
    help: 'lifetime of the token terraform login receives',
  },
  SVC_OAUTH_STATE_KEY: {
    schema: ({ label }) =>
      v.pipe(v.string(), v.minLength(32, `${label} must be 32 or more characters`)),
    help: 'key for OAuth state, 32 or more characters; unset: derived from the signing key',
  },
  SVC_PUBLIC_BASE_URL: {
    schema: httpUrl,
    help: "the server's public URL, for redirects and the tokens' issuer",
  },
} as const satisfies Record<string, Variable>

const list = (given: string | undefined): string[] =>
  given === undefined
    ? []
    : given
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')

/**
 * Reads the identity settings. An empty variable counts as unset.
 *
 * @throws ConfigError naming the variable at fault.
 */
export function loadAuthSettings(env: NodeJS.ProcessEnv): AuthSettings {
  const out = readVariables(AUTH_VARIABLES, env)
  if (out.SVC_AUTH_ISSUER !== undefined && out.SVC_AUTH_CLIENT_ID === undefined) {
    throw new ConfigError('SVC_AUTH_CLIENT_ID is required with SVC_AUTH_ISSUER')
  }
  const previousKeyPaths = list(out.SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS)
  const previousKids = list(out.SVC_TOKENS_PREVIOUS_KIDS)
  if (previousKids.length > 0 && previousKids.length !== previousKeyPaths.length) {
    throw new ConfigError(
      'SVC_TOKENS_PREVIOUS_KIDS must name one key ID for each path in SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS',
    )
  }
  const redirectUris = list(out.SVC_AUTH_REDIRECT_URIS)
  const redirectUri = httpUrl({ flag: 'SVC_AUTH_REDIRECT_URIS', label: 'SVC_AUTH_REDIRECT_URIS' })
  for (const uri of redirectUris) {
    if (!v.is(redirectUri, uri)) {
      throw new ConfigError(
        `SVC_AUTH_REDIRECT_URIS: ${JSON.stringify(uri)} is not an http or https URL`,
      )
    }
  }
  return Object.freeze({
    issuer: out.SVC_AUTH_ISSUER,
    clientId: out.SVC_AUTH_CLIENT_ID,
    clientSecret: out.SVC_AUTH_CLIENT_SECRET,
    authUrl: out.SVC_AUTH_AUTH_URL,
    tokenUrl: out.SVC_AUTH_TOKEN_URL,
    devSkipVerify: out.SVC_AUTH_DEV_SKIP_VERIFY,
    localAdmin: out.SVC_LOCAL_ADMIN,
    redirectUris:
      redirectUris.length > 0
        ? redirectUris
        : ['http://127.0.0.1/callback', 'http://localhost/callback'],
    scopes: out.SVC_AUTH_SCOPES,
    privateKeyPath: out.SVC_TOKENS_PRIVATE_KEY_PEM_PATH,
    kid: out.SVC_TOKENS_KID,
    previousKeyPaths,
    previousKids,
    accessTtlMs: out.SVC_TOKENS_ACCESS_TTL,
    refreshTtlMs: out.SVC_TOKENS_REFRESH_TTL,
    iacTokenTtlMs: out.SVC_IAC_TOKEN_TTL,
    oauthStateKey: out.SVC_OAUTH_STATE_KEY,
    publicBaseUrl: out.SVC_PUBLIC_BASE_URL?.replace(/\/+$/, ''),
  })
}
