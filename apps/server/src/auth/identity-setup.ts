import { readFile, stat } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { AuthService, KeyError, loadKeySet, OidcClient, type KeySet } from '@cairn/auth'
import type { Clock, ObjectStore } from '@cairn/core'
import type { AuthConfig } from '../config/auth-config'
import { ConfigError } from '../config/config-error'
import type { Logger } from '../log/logger'

/** How callers prove who they are: an OpenID provider, local mode's admin token, or not at all. */
export type AuthMode = 'oidc' | 'local' | 'disabled'

/** The issuer of Cairn's tokens when no public URL is configured (DESIGN section 8). */
export const DEFAULT_TOKEN_ISSUER = 'urn:cairn'

/** The spec's message for a signing key that is missing or unreadable. */
const SIGNER_NOT_AVAILABLE = 'JWT signer not available'

export interface IdentitySetup {
  mode: AuthMode
  auth: AuthService
  keys: KeySet
}

/**
 * Builds the identity side of the server from its settings: reads the key files, and prepares
 * (without contacting it) the OpenID provider. A provider that is down does not stop the start.
 *
 * @throws ConfigError naming the variable and file at fault
 */
export async function setUpIdentity(options: {
  config: AuthConfig
  authDisable: boolean
  store: ObjectStore
  clock: Clock
  log: Logger
}): Promise<IdentitySetup> {
  const { config, log } = options
  const keys = await loadKeys(config, log)
  if (keys.ephemeral && !options.authDisable) {
    log.warn(
      'SVC_TOKENS_PRIVATE_KEY_PEM_PATH is not set: tokens are signed with a key made at start, so they stop working when the server restarts and other instances refuse them',
    )
  }
  const oidc =
    config.issuer === undefined || config.clientId === undefined
      ? undefined
      : new OidcClient({
          issuer: config.issuer,
          clientId: config.clientId,
          ...(config.clientSecret === undefined ? {} : { clientSecret: config.clientSecret }),
          ...(config.authUrl === undefined ? {} : { authorizationEndpoint: config.authUrl }),
          ...(config.tokenUrl === undefined ? {} : { tokenEndpoint: config.tokenUrl }),
          skipVerify: config.devSkipVerify,
          clock: options.clock,
          warn: (message, fields) => {
            log.warn(message, fields)
          },
        })
  if (config.devSkipVerify) {
    log.warn(
      'SVC_AUTH_DEV_SKIP_VERIFY is on: ID tokens are accepted from any issuer and audience (development only)',
    )
  }
  const auth = new AuthService({
    store: options.store,
    keys,
    issuer: config.publicBaseUrl ?? DEFAULT_TOKEN_ISSUER,
    clock: options.clock,
    accessTtlMs: config.accessTtlMs,
    refreshTtlMs: config.refreshTtlMs,
    ...(oidc === undefined ? {} : { oidc }),
    // Local mode's tokens are the only way in without a provider; beside one, only on request.
    acceptLocal: oidc === undefined || config.localAdmin,
  })
  if (oidc !== undefined) {
    // Discover now so the first login is quick; a failure only logs, and is retried on use.
    oidc.metadata().then(
      () => {
        log.info('OpenID provider discovered', { issuer: oidc.issuer })
      },
      (error: unknown) => {
        log.warn('the OpenID provider cannot be reached yet; logins fail until it can', {
          issuer: oidc.issuer,
          error: (error as Error).message,
        })
      },
    )
  }
  const mode: AuthMode = options.authDisable ? 'disabled' : oidc === undefined ? 'local' : 'oidc'
  return { mode, auth, keys }
}

async function loadKeys(config: AuthConfig, log: Logger): Promise<KeySet> {
  const path = config.privateKeyPath
  const privateKeyPem =
    path === undefined ? undefined : await readKey(path, 'SVC_TOKENS_PRIVATE_KEY_PEM_PATH', log)
  const previous = await Promise.all(
    config.previousKeyPaths.map(async (file, index) => ({
      pem: await readKey(file, 'SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS', log),
      kid: config.previousKids[index] ?? basename(file, extname(file)),
    })),
  )
  try {
    return await loadKeySet({
      ...(privateKeyPem === undefined ? {} : { privateKeyPem }),
      ...(config.kid === undefined ? {} : { kid: config.kid }),
      previous,
    })
  } catch (error) {
    if (error instanceof KeyError)
      throw new ConfigError(`${SIGNER_NOT_AVAILABLE}: ${error.message}`)
    throw error
  }
}

async function readKey(path: string, variable: string, log: Logger): Promise<string> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new ConfigError(
      `${SIGNER_NOT_AVAILABLE}: cannot read ${variable} ${path}: ${(error as Error).message}`,
    )
  }
  const { mode } = await stat(path)
  if ((mode & 0o077) !== 0 && variable === 'SVC_TOKENS_PRIVATE_KEY_PEM_PATH') {
    log.warn('the signing key file can be read by other users; mode 0400 is recommended', { path })
  }
  return text
}
