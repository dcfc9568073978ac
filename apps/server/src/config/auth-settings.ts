import { isPrintableAscii } from '@cairn/contract'
import * as v from 'valibot'
import { ConfigError } from './config-error'
import { parseDuration } from './duration'

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

/** Each variable with its help line, for `-help`. */
export const AUTH_VARIABLES = {
  SVC_AUTH_ISSUER: 'OpenID provider issuer URL; unset: local mode with an admin API token',
  SVC_AUTH_CLIENT_ID: 'OpenID client ID (required with SVC_AUTH_ISSUER)',
  SVC_AUTH_CLIENT_SECRET: 'OpenID client secret, for confidential clients',
  SVC_AUTH_AUTH_URL: 'the provider authorization endpoint, instead of the discovered one',
  SVC_AUTH_TOKEN_URL: 'the provider token endpoint, instead of the discovered one',
  SVC_AUTH_DEV_SKIP_VERIFY: 'true: skip the ID token issuer and audience checks (development only)',
  SVC_LOCAL_ADMIN:
    'true: with SVC_AUTH_ISSUER, still accept the admin token of local mode (warns at start)',
  SVC_AUTH_REDIRECT_URIS: 'comma-separated redirect URIs clients use (default loopback /callback)',
  SVC_AUTH_SCOPES: 'scopes clients ask for (default "openid profile email offline_access")',
  SVC_TOKENS_PRIVATE_KEY_PEM_PATH: 'Ed25519 private key (PEM) signing tokens; unset: ephemeral',
  SVC_TOKENS_KID: 'key ID of the signing key (default its thumbprint); change on rotation',
  SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS:
    'comma-separated keys of earlier rotations, still accepted',
  SVC_TOKENS_PREVIOUS_KIDS: 'their key IDs, in the same order (default each file name)',
  SVC_TOKENS_ACCESS_TTL: 'access token lifetime (default 1h)',
  SVC_TOKENS_REFRESH_TTL: 'refresh token lifetime (default 720h)',
  SVC_IAC_TOKEN_TTL: 'lifetime of the token terraform login receives (default 1h)',
  SVC_OAUTH_STATE_KEY:
    'key for OAuth state, 32 or more characters; unset: derived from the signing key',
  SVC_PUBLIC_BASE_URL: "the server's public URL, for redirects and the tokens' issuer",
} as const

type Variable = keyof typeof AUTH_VARIABLES

const url = (name: Variable) =>
  v.pipe(
    v.string(),
    v.url(`${name} must be an http or https URL`),
    v.regex(/^https?:\/\//i, `${name} must be an http or https URL`),
  )

const duration = (name: Variable, fallback: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        try {
          const ms = parseDuration(dataset.value)
          if (ms > 0) return ms
          addIssue({ message: `${name} must be longer than 0` })
        } catch (error) {
          addIssue({ message: `${name}: ${(error as Error).message}` })
        }
        return NEVER
      }),
    ),
    fallback,
  )

const list = (text: string | undefined): string[] =>
  text === undefined
    ? []
    : text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')

const AuthSchema = v.object({
  SVC_AUTH_ISSUER: v.optional(url('SVC_AUTH_ISSUER')),
  SVC_AUTH_CLIENT_ID: v.optional(v.string()),
  SVC_AUTH_CLIENT_SECRET: v.optional(v.string()),
  SVC_AUTH_AUTH_URL: v.optional(url('SVC_AUTH_AUTH_URL')),
  SVC_AUTH_TOKEN_URL: v.optional(url('SVC_AUTH_TOKEN_URL')),
  SVC_AUTH_DEV_SKIP_VERIFY: v.optional(
    v.picklist(['true', 'false', '1', '0'], 'SVC_AUTH_DEV_SKIP_VERIFY must be true or false'),
    'false',
  ),
  SVC_LOCAL_ADMIN: v.optional(
    v.picklist(['true', 'false', '1', '0'], 'SVC_LOCAL_ADMIN must be true or false'),
    'false',
  ),
  SVC_AUTH_REDIRECT_URIS: v.optional(v.string()),
  SVC_AUTH_SCOPES: v.optional(v.string(), 'openid profile email offline_access'),
  SVC_TOKENS_PRIVATE_KEY_PEM_PATH: v.optional(v.string()),
  SVC_TOKENS_KID: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (kid) => kid.length >= 1 && kid.length <= 128 && isPrintableAscii(kid, { spaces: false }),
        'SVC_TOKENS_KID must be 1 to 128 printable characters',
      ),
    ),
  ),
  SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS: v.optional(v.string()),
  SVC_TOKENS_PREVIOUS_KIDS: v.optional(v.string()),
  SVC_TOKENS_ACCESS_TTL: duration('SVC_TOKENS_ACCESS_TTL', '1h'),
  SVC_TOKENS_REFRESH_TTL: duration('SVC_TOKENS_REFRESH_TTL', '720h'),
  SVC_IAC_TOKEN_TTL: duration('SVC_IAC_TOKEN_TTL', '1h'),
  SVC_OAUTH_STATE_KEY: v.optional(
    v.pipe(v.string(), v.minLength(32, 'SVC_OAUTH_STATE_KEY must be 32 or more characters')),
  ),
  SVC_PUBLIC_BASE_URL: v.optional(url('SVC_PUBLIC_BASE_URL')),
})

/**
 * Reads the identity settings. An empty variable counts as unset.
 *
 * @throws ConfigError naming the variable at fault.
 */
export function loadAuthSettings(env: NodeJS.ProcessEnv): AuthSettings {
  const raw: Record<string, string> = {}
  for (const name of Object.keys(AUTH_VARIABLES)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const result = v.safeParse(AuthSchema, raw)
  if (!result.success) throw new ConfigError(result.issues[0].message)
  const out = result.output
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
  for (const uri of redirectUris) {
    if (!v.is(url('SVC_AUTH_REDIRECT_URIS'), uri)) {
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
    devSkipVerify: out.SVC_AUTH_DEV_SKIP_VERIFY === 'true' || out.SVC_AUTH_DEV_SKIP_VERIFY === '1',
    localAdmin: out.SVC_LOCAL_ADMIN === 'true' || out.SVC_LOCAL_ADMIN === '1',
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
