import type { AuditLog } from '@cairn/audit'
import type { TrustPolicyStore } from '@cairn/ci-identity'
import type { WebhookService } from '@cairn/webhooks'
import type { RbacService } from '@cairn/rbac'
import type { RunService } from '@cairn/runs'
import type { AuthService } from '@cairn/auth'
import type { Clock, Core, Permission, UnitId } from '@cairn/core'
import type { ResourceService } from '@cairn/state-index'
import type { Context, MiddlewareHandler } from 'hono'
import type { AuthMode } from '../auth/identity-setup'
import type { TerraformLogins } from '../auth/terraform-login'
import type { AppEnv } from '../http/app-env'
import type { DashboardLogin } from './oidc-login'
import type { Sessions } from './session'
import type { Viewer } from './view/layout'

/** What every page of the dashboard is built from. */
export interface DashboardDeps {
  core: Core
  /** Diffs and search (the state index). */
  resources: ResourceService
  auth: AuthService
  mode: AuthMode
  clock: Clock
  sessions: Sessions
  /** The OpenID login, when a provider is configured. */
  login: DashboardLogin | undefined
  /** The codes of `terraform login`, and the requests local mode's page answers. */
  terraformLogins: TerraformLogins
  /** The server's public base URL for a request. */
  baseUrl: (request: Request) => string
  /** Runs a heavy read (a diff, a search) in a slot of the server's pool, as the API does. */
  heavyRead: MiddlewareHandler<AppEnv>
  /** Remote runs, when the server has them on. */
  runs: RunService | undefined
  /** Trust policies for CI jobs (administrators' page). */
  trustPolicies: TrustPolicyStore
  /** Roles, assignments and the users seen at login (the access page, the trust policies' form). */
  rbac: RbacService
  /** The audit trail. */
  audit: AuditLog
  /** Webhook subscriptions and their deliveries. */
  webhooks: WebhookService
  /** Local mode: where the administrator's token is kept, for the sign-in page. */
  adminTokenFile: { path: string; shared: boolean } | undefined
}

/** The signed-in person as the page header shows them. */
export function viewerOf(c: Context<AppEnv>, mode: AuthMode): Viewer {
  const principal = c.var.principal
  return {
    name: principal.email ?? principal.subject,
    csrf: c.var.session.csrf,
    canSignOut: mode !== 'disabled',
    administrator: c.var.administrator,
  }
}

/** Whether the signed-in person holds `permission` on `unit`: buttons are shown only then. */
export async function may(
  c: Context<AppEnv>,
  core: Core,
  permission: Permission,
  unit: string,
): Promise<boolean> {
  return core.authorizer.can(c.var.principal, permission, unit as UnitId)
}

/**
 * What the post before this page did, carried by the sealed session and shown once: the props of
 * a `Notice`. A page never shows a notice from its URL, where anyone could write one into a link.
 */
export function flashed(c: Context<AppEnv>): { text: string | undefined; error: boolean } {
  const notice = c.var.session.notice
  return { text: notice?.text, error: notice?.error ?? false }
}

/** A query parameter, undefined when absent or empty. */
export function queryOf(c: Context<AppEnv>, name: string): string | undefined {
  const value = c.req.query(name)
  return value === undefined || value === '' ? undefined : value
}
