import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { IdentitySetup } from '../auth/identity-setup'
import type { Config } from '../config/config'
import type { Logger } from '../log/logger'

/**
 * Says at start whether RBAC is on and how many administrators were configured (not who: that is
 * in the configuration), and warns when nobody can administer the server: with an OpenID provider,
 * only the principals of `-rbac-admins` (and the admin token of `SVC_LOCAL_ADMIN`) may manage
 * webhooks, freezes, the audit trail, other users' tokens and access, whether RBAC is on or off.
 * Then names the hosts webhooks may reach although they are not public, if any.
 */
export function reportAccess(config: Config, identity: IdentitySetup, log: Logger): void {
  const { enabled, admins } = config.rbac
  log.info('access control', { rbac: enabled, admins: admins.length })
  if (enabled && identity.mode === 'disabled') {
    log.warn(
      'RBAC is on with authentication disabled: every caller is user:anonymous and has only its grants',
    )
  } else if (identity.mode === 'oidc' && admins.length === 0 && !config.auth.localAdmin) {
    log.warn(
      enabled
        ? "no administrator is configured: only holders of admin on * may manage access, webhooks, freezes, the audit trail and other users' tokens (set -rbac-admins, SVC_RBAC_ADMINS)"
        : "no administrator is configured: nobody may manage webhooks, freezes, the audit trail or other users' tokens (set -rbac-admins, SVC_RBAC_ADMINS)",
    )
  }
  if (config.webhookAllowedHosts.length > 0) {
    log.info('webhooks may reach these hosts although they are not public', {
      webhook_allowed_hosts: config.webhookAllowedHosts,
    })
  }
}

/** The `listening` line, the last of the start: the server answers from now on. */
export function reportListening(server: Server, config: Config, log: Logger): void {
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  log.info('listening', {
    url: `${config.tls === undefined ? 'http' : 'https'}://${host}:${address.port}`,
    port: address.port,
    storage: config.storage,
    ...(config.storage === 'fs' ? { data_dir: config.dataDir } : {}),
  })
}
