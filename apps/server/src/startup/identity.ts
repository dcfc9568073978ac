import { systemClock, type ObjectStore } from '@cairn/core'
import { adminTokenPath, ensureLocalAdmin, reportLocalAdmin } from '../auth/local-admin'
import { loginDirectory } from '../auth/login-directory'
import { setUpIdentity, type IdentitySetup } from '../auth/identity-setup'
import type { Config } from '../config/config'
import { ConfigError } from '../config/config-error'
import type { Logger } from '../log/logger'
import type { Services } from '../services'
import { refuse } from './refuse'

/**
 * Sets up who callers are: the signing keys, the OpenID client or local mode's admin token (made
 * and printed once), and says which mode it is. Refuses in one line an identity setting that
 * cannot work.
 */
export async function startIdentity(options: {
  config: Config
  store: ObjectStore
  services: Services
  log: Logger
}): Promise<IdentitySetup> {
  const { config, store, services, log } = options
  let identity: IdentitySetup
  try {
    identity = await setUpIdentity({
      config: config.auth,
      authDisable: config.authDisable,
      dataDir: config.dataDir,
      store,
      sharedStore: config.storage === 's3',
      clock: systemClock,
      log,
      // Users seen at login, so administrators can list who may be given roles.
      recordLogin: (principal) => services.rbac.recordLogin(principal),
      // Every administrator manages every API token, RBAC on or off.
      isAdmin: (principal) => services.core.authorizer.isAdmin(principal),
      // API and refresh tokens speak with their owner's last login, and only while it is recent.
      logins: { directory: loginDirectory(services.rbac), maxAgeMs: config.tokensLoginMaxAgeMs },
    })
    if (identity.mode === 'local') {
      await ensureLocalAdmin({
        auth: identity.auth,
        store,
        dataDir: config.dataDir,
        log,
        print: (text) => process.stderr.write(text),
        shared: config.storage === 's3',
      })
      identity.adminTokenFile = {
        path: adminTokenPath(config.dataDir),
        shared: config.storage === 's3',
      }
    } else if (identity.mode === 'oidc') {
      await reportLocalAdmin({ dataDir: config.dataDir, accepted: config.auth.localAdmin, log })
    }
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message)
    throw error
  }
  log.info('identity', { mode: identity.mode, signing_kid: identity.keys.signing.kid })
  return identity
}
