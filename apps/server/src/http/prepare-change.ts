import type { Core } from '@cairn/core'
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'

/** Where a request other than a read may lock, unlock or change a unit, on every surface. */
const CHANGES = ['/v1/units/', '/v1/backend/', '/tfe/api/v2/', '/s3/']
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Begins, as a request that may change a unit arrives, the reads of shared records its checks
 * will make (`Core.prepareChange`: the freezes, the webhook subscriptions), so that on S3 they run
 * beside the caller's authentication. Only for a request that carries credentials (or when
 * authentication is off): one from nobody costs no read of the store.
 */
export function prepareChange(core: Core, authDisabled: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { method, path } = c.req
    if (!READS.has(method) && CHANGES.some((prefix) => path.startsWith(prefix))) {
      const credentials =
        authDisabled ||
        c.req.header('authorization') !== undefined ||
        c.req.query('X-Amz-Signature') !== undefined ||
        // A signed upload URL speaks for its caller; the JSON form of a state changes nothing.
        (path.startsWith('/tfe/api/v2/state-versions/') && !path.includes('/json-upload/'))
      if (credentials) core.prepareChange()
    }
    await next()
  }
}
