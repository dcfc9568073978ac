import type { Context } from 'hono'
import type { AppEnv } from './app-env'
import { ANONYMOUS } from './principal'

/**
 * Whose share of a `SlotPool` a request counts against: its principal (issuer and subject, so
 * every token of one person counts as one). With authentication off every caller is `anonymous`,
 * so there it is the caller's address instead.
 */
export function holderOf(c: Context<AppEnv>): string {
  const principal = c.var.principal as AppEnv['Variables']['principal'] | undefined
  if (principal === undefined || principal.issuer === ANONYMOUS.issuer) {
    const address = (c.env as AppEnv['Bindings'] | undefined)?.incoming?.socket.remoteAddress
    return `address ${address ?? 'unknown'}`
  }
  return `${principal.issuer} ${principal.subject}`
}
