import { generateKeyPairSync } from 'node:crypto'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { basename, extname, join } from 'node:path'
import {
  AuthService,
  KeyError,
  loadKeySet,
  OidcClient,
  type KeySet,
  type LoginDirectory,
} from '@cairn/auth'
import type { Clock, ObjectStore, Principal } from '@cairn/core'
import type { AuthSettings } from '../config/auth-settings'
import { ConfigError } from '../config/config-error'
import type { Logger } from '../log/logger'

/** How callers prove who they are: an OpenID provider, local mode's admin token, or not at all. */
export type AuthMode = 'oidc' | 'local' | 'disabled'

/** The issuer of Cairn's tokens when no public URL is configured (DESIGN section 8). */
export const DEFAULT_TOKEN_ISSUER = 'urn:cairn'

/** Local mode's signing key, in the data directory. */
const LOCAL_KEY_FILE = 'signing.pem'

/** The spec's message for a signing key that is missing or unreadable. */
const SIGNER_NOT_AVAILABLE = 'JWT signer not available'

/** Why a server on a shared store refuses to start without a configured signing key. */
export const SHARED_KEY_NEEDED =
  '-storage s3 is shared by every instance, so all must sign with one key: set SVC_TOKENS_PRIVATE_KEY_PEM_PATH to the same Ed25519 key (PEM) on each (openssl genpkey -algorithm ed25519 -out signing.pem)'

export interface IdentitySetup {
  mode: AuthMode
  auth: AuthService
  keys: KeySet
  /**
   * Local mode: where the administrator's token is kept, as the sign-in page tells it; `shared`
   * when instances share the store (then it is in the data directory of the first to start).
   */
  adminTokenFile?: { path: string; shared: boolean }
}

/**
 * Builds the identity side of the server from its settings: reads the key files, and prepares
 * (without contacting it) the OpenID provider. A provider that is down does not stop the start.
 *
 * @throws ConfigError naming the variable and file at fault
 */
export async function setUpIdentity(options: {
  config: AuthSettings
  authDisable: boolean
  /** Where local mode keeps its signing key, beside the admin token. */
  dataDir: string
  store: ObjectStore
  /**
   * The store is shared by several instances (`-storage s3`): then every instance must sign with
   * the one configured key, since what one signs (tokens, upload URLs, OAuth state) another
   * verifies.
   */
  sharedStore?: boolean
  clock: Clock
  log: Logger
  /**
   * Notes a user seen at a login (not at a refresh), for `GET /v1/rbac/users`. A failure is
   * logged at warn and never fails the login.
   */
  recordLogin?: (principal: Principal) => Promise<void>
  /**
   * Whether a principal administers the server (core's authorizer), for listing and revoking
   * other users' API tokens.
   */
  isAdmin?: (principal: Principal) => boolean | Promise<boolean>
  /**
   * Users' last logins and how old one may be (`SVC_TOKENS_LOGIN_MAX_AGE`): API and refresh
   * tokens speak with their owner's last login, and are refused once it is too old.
   */
  logins?: { directory: LoginDirectory; maxAgeMs: number }
}): Promise<IdentitySetup> {
  const { config, log } = options
  if (options.sharedStore === true && !options.authDisable && config.privateKeyPath === undefined) {
    throw new ConfigError(SHARED_KEY_NEEDED)
  }
  const local = config.issuer === undefined && !options.authDisable
  const keys = await loadKeys(
    config,
    log,
    local && config.privateKeyPath === undefined ? options.dataDir : undefined,
  )
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
    ...(options.recordLogin === undefined ? {} : { onLogin: options.recordLogin }),
    ...(options.isAdmin === undefined ? {} : { isAdmin: options.isAdmin }),
    ...(options.logins === undefined ? {} : { logins: options.logins }),
    warn: (message, fields) => {
      log.warn(message, fields)
    },
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

async function loadKeys(
  config: AuthSettings,
  log: Logger,
  localDataDir: string | undefined,
): Promise<KeySet> {
  const path = config.privateKeyPath
  const privateKeyPem =
    path !== undefined
      ? await readKey(path, 'SVC_TOKENS_PRIVATE_KEY_PEM_PATH', log)
      : localDataDir === undefined
        ? undefined
        : await localSigningKey(localDataDir, log)
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

/**
 * Local mode's signing key: made on the first start and kept in `<data-dir>/signing.pem` (mode
 * 0600), like the admin token, so that what it signed (upload URLs, OAuth state) outlives a
 * restart. One process serves a data directory, so no other instance needs it.
 */
async function localSigningKey(dataDir: string, log: Logger): Promise<string> {
  const path = join(dataDir, LOCAL_KEY_FILE)
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ConfigError(
        `${SIGNER_NOT_AVAILABLE}: cannot read ${path}: ${(error as Error).message}`,
      )
    }
  }
  const pem = generateKeyPairSync('ed25519')
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  try {
    await writeFile(path, pem, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // Another start made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFile(path, 'utf8')
    throw error
  }
  log.info('local mode: created the signing key', { path })
  return pem
}
