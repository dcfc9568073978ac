import { ROUTE_WORDS } from '@cairn/core'
import type { Context } from 'hono'
import { routePath } from 'hono/route'
import type { Surface } from './server-metrics'

/** The surface a path belongs to: which protocol a request spoke. */
export function surfaceOf(path: string): Surface {
  if (path.startsWith('/v1/backend/')) return 'http_backend'
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1'
  if (path.startsWith('/tfe/') || path.startsWith('/.well-known/')) return 'tfe'
  if (path === '/s3' || path.startsWith('/s3/')) return 's3'
  if (path.startsWith('/oauth/') || path.startsWith('/oidc/')) return 'oauth'
  if (path === '/app' || path.startsWith('/app/')) return 'web'
  if (path === '/healthz' || path === '/readyz' || path === '/metrics' || path === '/version') {
    return 'health'
  }
  return 'other'
}

/**
 * The route a request matched, as registered (`/tfe/api/v2/workspaces/:id`, `/v1/backend/*`),
 * never the path itself: unit IDs and keys would make a series per unit. Called once the
 * request is answered, when hono's route index points at the handler that answered (or the
 * middleware that refused it); `unmatched` when none did. `/v1/units/*` is one route with its
 * own dispatch: its action word is kept (`/v1/units/*\/lock`), the ID never.
 */
export function routeOf(c: Context): string {
  const route = routePath(c)
  // Only the app-wide middleware is registered at `/*`: no route took the request.
  if (route === '' || route === '*' || route === '/*') return 'unmatched'
  if (route !== '/v1/units/*') return route
  const word = c.req.path.split('/').at(-1) ?? ''
  return ROUTE_WORDS.has(word) ? `/v1/units/*/${word}` : route
}
