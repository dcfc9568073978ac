import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { document } from './jsonapi/document'
import { errorResponse, renderError } from './jsonapi/errors'
import { stateVersionRoutes } from './state-versions/routes'
import type { TfeDeps, TfeEnv } from './tfe-env'
import { runRoutes } from './runs/routes'
import { workspaceRoutes } from './workspaces/routes'

/** The API version Terraform requires (at least 2.5) on every response, errors included. */
export const TFP_API_VERSION = '2.5'
const API = '/tfe/api/v2'

/**
 * Terraform's `cloud` block against Cairn (DESIGN section 10; terraform-wire.md part A): service
 * discovery, and under `/tfe/api/v2` the organization, workspace, lock and state-version calls a
 * state-only TFE needs; with runs on, remote execution too (`runs/routes.ts`). With runs off, every
 * run stays local (`operations: false`, `execution-mode: local`).
 */
export function tfeRoutes(deps: TfeDeps): Hono<TfeEnv> {
  const app = new Hono<TfeEnv>()

  const discovery = (c: Context<TfeEnv>) =>
    c.json({
      'tfe.v2': `${API}/`,
      'tfe.v2.1': `${API}/`,
      'tfe.v2.2': `${API}/`,
      'state.v2': `${API}/`,
      'motd.v1': `${API}/motd`,
      ...(deps.login === undefined
        ? {}
        : {
            // terraform login (RFC 8252 loopback redirect); Terraform picks a port in [min, max).
            'login.v1': {
              client: deps.login.client,
              grant_types: ['authz_code'],
              authz: '/oauth/authorization',
              token: '/oauth/token',
              ports: [10000, 10010],
            },
          }),
    })
  app.get('/.well-known/terraform.json', discovery)
  app.get('/.well-known/iac.json', discovery)

  const api = new Hono<TfeEnv>()
  api.use(async (c, next) => {
    await next()
    // On the answer's own headers: `c.header` on an answer already made copies it, body and all.
    c.res.headers.set('TFP-API-Version', TFP_API_VERSION)
    c.res.headers.set('TFP-AppName', 'Terraform Enterprise')
  })
  api.onError(renderError)
  api.notFound((c) =>
    errorResponse(c, 404, 'not found', `no route for ${c.req.method} ${c.req.path}`),
  )

  const { api: stateVersions, uploads } = stateVersionRoutes(deps)
  const runs = deps.runs === undefined ? undefined : runRoutes(deps, deps.runs)
  // The uploads and the logs of runs carry no Authorization header that proves anything: their
  // signed URLs are the capability.
  api.route('/', uploads)
  if (runs !== undefined) api.route('/', runs.signed)
  api.use(authenticate(deps))

  api.get('/ping', (c) => c.json({}))
  api.get('/motd', (c) => c.json({ msg: '' }))

  api.get('/account/details', (c) => {
    const { subject, email } = c.var.principal
    return document(c, {
      data: {
        id: `user-${Buffer.from(subject).toString('base64url')}`,
        type: 'users',
        attributes: {
          username: subject,
          email: email ?? null,
          'is-service-account': false,
          'v2-only': true,
        },
      },
    })
  })

  // Any organization name is accepted: a unit's name is its one identity.
  api.get('/organizations/:org', (c) =>
    document(c, {
      data: {
        id: c.req.param('org'),
        type: 'organizations',
        attributes: { name: c.req.param('org') },
      },
    }),
  )

  api.get('/organizations/:org/entitlement-set', (c) =>
    document(c, {
      data: {
        id: `org-${c.req.param('org')}`,
        type: 'entitlement-sets',
        attributes: {
          // With runs off, false keeps every run local: Cairn stores state and runs nothing.
          operations: deps.runs !== undefined,
          'state-storage': true,
          teams: false,
          'vcs-integrations': false,
          sentinel: false,
          'private-module-registry': false,
          sso: false,
          agents: deps.runs !== undefined,
        },
      },
    }),
  )

  api.route('/', workspaceRoutes(deps))
  api.route('/', stateVersions)
  if (runs !== undefined) api.route('/', runs.api)
  // go-tfe does not retry a 404, and a JSON:API body makes its error message readable.
  api.all('*', (c) =>
    errorResponse(c, 404, 'not found', `no route for ${c.req.method} ${c.req.path}`),
  )

  app.route(API, api)
  return app
}

/** Bearer tokens for everything under `/tfe/api/v2` but the signed uploads. */
function authenticate(deps: TfeDeps): MiddlewareHandler<TfeEnv> {
  return async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')
    const principal = match?.[1] === undefined ? undefined : await deps.authenticate(match[1])
    if (principal === undefined) {
      return errorResponse(
        c,
        401,
        'unauthorized',
        match === null ? 'this needs a token' : 'Token verification failed',
      )
    }
    c.set('principal', principal)
    await next()
    return undefined
  }
}
