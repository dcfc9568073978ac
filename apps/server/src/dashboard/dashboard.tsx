import { TokenVerificationError } from '@cairn/auth'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readForm, SMALL_BODY_BYTES } from '../http/body'
import { CLIENT_CLOSED, report } from '../http/errors'
import { ANONYMOUS } from '../http/principal'
import { viewerOf, type DashboardDeps } from './context'
import { loginNoticeText, type LoginNotice } from './login-notices'
import { sameText } from './oidc-login'
import { accessRoutes } from './pages/access'
import { auditRoutes } from './pages/audit'
import { freezeRoutes } from './pages/freezes'
import { LoginPage } from './pages/login'
import { webhookRoutes } from './pages/webhooks'
import { graphRoutes } from './pages/graph'
import { locksRoutes } from './pages/locks'
import { searchRoutes } from './pages/search'
import { statusRoutes } from './pages/status'
import { terraformLoginRoutes } from './pages/terraform-login'
import { tokensRoutes } from './pages/tokens'
import { trustPolicyRoutes } from './pages/trust-policies'
import { unitRoutes } from './pages/unit'
import { unitsRoutes } from './pages/units'
import { HOME, safeNext } from './safe-next'
import type { Session } from './session-record'
import { keepPostedForm } from './posted-form'
import { Sessions } from './session'
import { ASSETS } from './view/assets'
import { Page } from './view/layout'
import { CONTENT_SECURITY_POLICY } from './content-security-policy'

/**
 * The web dashboard at `/app` (and `/`, which leads there): pages rendered on the server from the
 * same services as the API, for the signed-in person, so that what they may see and do is what
 * the API would let them. Sessions are sealed cookies (`session.ts`); every form that changes
 * something carries the session's CSRF token, and a post from another site is refused.
 */
export function dashboardRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.onError((error, c) => errorPage(error, c, deps))

  app.get('/', (c) => c.redirect(HOME, 302))
  app.get('/app', (c) => c.redirect(HOME, 302))
  app.use('/app/*', securityHeaders)
  // Before anything reads the session: a post from another site is refused whatever it carries,
  // and changes nothing (not even the session it may have been sent with).
  app.use('/app/*', sameSiteOnly(deps))

  for (const asset of ASSETS) {
    app.get(asset.path, (c) => {
      c.header('Content-Type', asset.type)
      c.header('Cache-Control', 'public, max-age=31536000, immutable')
      return c.body(asset.body)
    })
  }

  app.get('/app/login', (c) => {
    if (deps.mode === 'disabled') return c.redirect(HOME, 302)
    const session = deps.sessions.readOrStart(c)
    return c.html(
      <LoginPage
        csrf={session.csrf}
        next={safeNext(c.req.query('next'))}
        oidc={deps.login !== undefined}
        adminTokenFile={deps.mode === 'local' ? deps.adminTokenFile : undefined}
        error={loginNoticeText(c.req.query('error'))}
      />,
    )
  })

  app.post('/app/login', async (c) => {
    const form = await readForm(c, SMALL_BODY_BYTES)
    const session = deps.sessions.read(c)
    if (session === undefined || !sameText(form.get('csrf') ?? '', session.csrf)) {
      noteAudit(c, { detail: { via: 'dashboard token', refused: 'the form expired' } })
      return c.redirect(loginHref(form.get('next'), 'form_expired'), 303)
    }
    const token = (form.get('token') ?? '').trim()
    const next = safeNext(form.get('next') ?? undefined)
    let principal
    try {
      principal = await deps.auth.authenticate(token)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('dashboard sign-in with a token refused', { reason: error.reason })
      // Answered with a redirect like a success: the record says it was refused.
      noteAudit(c, { detail: { via: 'dashboard token', refused: 'token not valid' } })
      return c.redirect(loginHref(next, 'token_invalid'), 303)
    }
    c.set('principal', principal)
    // The session gets a login of its own in the store, which signing out ends everywhere.
    const login = await deps.auth.startLogin(principal)
    deps.sessions.write(c, deps.sessions.forToken(token, login))
    return c.redirect(next, 303)
  })

  app.get('/app/login/oidc', async (c) => {
    if (deps.login === undefined) return c.redirect('/app/login', 302)
    return deps.login.start(c, safeNext(c.req.query('next')))
  })

  // Local mode's `terraform login`: for people signed in or not, so before `signedIn`.
  app.route('/', terraformLoginRoutes(deps))

  app.post('/app/logout', async (c) => {
    const form = await readForm(c, SMALL_BODY_BYTES)
    const session = deps.sessions.read(c)
    if (session !== undefined && sameText(form.get('csrf') ?? '', session.csrf)) {
      // Ended in the store, not only in this browser: a copy of the cookie opens nothing now.
      if (session.kind === 'oidc') await deps.auth.logout(session.refresh)
      if (session.kind === 'token') await deps.auth.endLogin(session.login)
      deps.sessions.clear(c)
    }
    return c.redirect('/app/login', 303)
  })

  // Everything below needs someone signed in.
  app.use('/app/*', signedIn(deps))
  app.use('/app/*', csrfOnPosts())

  app.route('/', unitsRoutes(deps))
  app.route('/', unitRoutes(deps))
  app.route('/', statusRoutes(deps))
  app.route('/', graphRoutes(deps))
  app.route('/', locksRoutes(deps))
  app.route('/', searchRoutes(deps))
  app.route('/', tokensRoutes(deps))
  app.route('/', trustPolicyRoutes(deps))
  app.route('/', auditRoutes(deps))
  app.route('/', freezeRoutes(deps))
  app.route('/', webhookRoutes(deps))
  app.route('/', accessRoutes(deps))
  app.all('/app/*', (c) =>
    c.html(
      <Page title="Not found" viewer={viewerOf(c, deps.mode)}>
        <h1>Not found</h1>
        <p>There is no such page.</p>
        <p>
          <a href={HOME}>Back to the units</a>
        </p>
      </Page>,
      404,
    ),
  )
  return app
}

const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next()
  // A page may widen it for itself (`terraform login`'s forms go back to Terraform's loopback).
  if (!c.res.headers.has('Content-Security-Policy')) {
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  }
  c.header('X-Content-Type-Options', 'nosniff')
  c.header('X-Frame-Options', 'DENY')
  c.header('Referrer-Policy', 'same-origin')
  c.header('Cross-Origin-Opener-Policy', 'same-origin')
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store')
}

/**
 * Sets who is calling from the session: a pasted token or Cairn's access token from an OpenID
 * login, refreshed as it ages. Without a session that still opens, a page sends the browser to
 * the sign-in page (and back afterwards); a form post is refused.
 */
function signedIn(deps: DashboardDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (deps.mode === 'disabled') {
      c.set('principal', ANONYMOUS)
      const visitor = deps.sessions.readOrStart(c)
      // Set before the session: a page that fails shows its header once the session is set.
      c.set('administrator', await deps.core.authorizer.isAdmin(ANONYMOUS))
      c.set('session', deps.sessions.settle(c, visitor, visitor))
      await next()
      return
    }
    const read = deps.sessions.read(c)
    if (read === undefined) return toLogin(c, deps)
    const session = await deps.sessions.fresh(read)
    const bearer = session === undefined ? undefined : Sessions.bearerOf(session)
    if (session === undefined || bearer === undefined) return toLogin(c, deps)
    try {
      c.set('principal', await deps.auth.authenticate(bearer))
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('dashboard session refused', { reason: error.reason })
      return toLogin(c, deps)
    }
    c.set('administrator', await deps.core.authorizer.isAdmin(c.var.principal))
    c.set('session', deps.sessions.settle(c, read, session))
    await next()
    return
  }
}

function toLogin(c: Context<AppEnv>, deps: DashboardDeps): Response {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    deps.sessions.clear(c)
    return c.redirect(loginHref(undefined, 'session_ended'), 303)
  }
  const url = new URL(c.req.url)
  return c.redirect(loginHref(`${url.pathname}${url.search}`), 302)
}

function loginHref(next: string | null | undefined, error?: LoginNotice): string {
  const query = new URLSearchParams({ next: safeNext(next ?? undefined) })
  if (error !== undefined) query.set('error', error)
  return `/app/login?${query.toString()}`
}

/** Refuses every post the browser says came from another site, before the session is read. */
function sameSiteOnly(deps: DashboardDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') refuseCrossSite(c, deps)
    await next()
  }
}

/**
 * Every post of a signed-in page must carry the session's CSRF token in its form: a form another
 * site made (which cannot know the token) changes nothing, even when the browser sends the cookie.
 */
function csrfOnPosts(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      await next()
      return
    }
    const form = await readForm(c, SMALL_BODY_BYTES)
    if (!sameText(form.get('csrf') ?? '', c.var.session.csrf)) {
      throw new CrossSiteError('the form is not this session\u2019s: reload the page and try again')
    }
    keepPostedForm(c, form)
    await next()
  }
}

class CrossSiteError extends Error {}

/** Refuses a post that the browser says came from another site, or from another origin. */
function refuseCrossSite(c: Context<AppEnv>, deps: DashboardDeps): void {
  const site = c.req.header('sec-fetch-site')
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new CrossSiteError('a form of another site cannot post here')
  }
  const origin = c.req.header('origin')
  if (origin !== undefined && origin !== new URL(deps.baseUrl(c.req.raw)).origin) {
    throw new CrossSiteError('a form of another site cannot post here')
  }
}

/** A failure as a page: the API's status and message, without the API's JSON. */
function errorPage(
  error: Error,
  c: Context<AppEnv>,
  deps: DashboardDeps,
): Response | Promise<Response> {
  if (error instanceof CrossSiteError) {
    return c.html(
      <Page title="Refused">
        <h1>Refused</h1>
        <p>{error.message}</p>
      </Page>,
      403,
    )
  }
  const answer = report(error, c)
  if (answer === undefined) return c.body(null, CLIENT_CLOSED as ContentfulStatusCode)
  // Set once the person is signed in: a failure before that has no header to show.
  const session = c.get('session') as Session | undefined
  const viewer = session === undefined ? undefined : viewerOf(c, deps.mode)
  const title =
    answer.status === 404 ? 'Not found' : answer.status === 403 ? 'Not allowed' : 'Failed'
  return c.html(
    <Page title={title} viewer={viewer}>
      <h1>{title}</h1>
      <p>{String(answer.body['message'])}</p>
      <p>
        <a href={HOME}>Back to the units</a>
      </p>
    </Page>,
    answer.status,
  )
}
