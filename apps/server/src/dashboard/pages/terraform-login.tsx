import {
  AuthError,
  isApiToken,
  MAX_TOKEN_CHAIN,
  TokenVerificationError,
  type Identity,
} from '@cairn/auth'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import { backToTerraform, type TerraformLoginRequest } from '../../auth/terraform-login'
import type { AppEnv } from '../../http/app-env'
import { readForm, SMALL_BODY_BYTES } from '../../http/body'
import type { DashboardDeps } from '../context'
import { CONTENT_SECURITY_POLICY } from '../content-security-policy'
import { sameText } from '../oidc-login'
import { Sessions } from '../session'
import type { Session } from '../session-record'
import { CsrfField, Notice, Page } from '../view/layout'
import { AdminTokenFile } from './login'

export const TERRAFORM_LOGIN = '/app/login/terraform'

/**
 * Local mode's `terraform login` (terraform-wire.md A4): `/oauth/authorization` checks what
 * Terraform asks for and sends the browser here with it sealed. Someone signed in to the
 * dashboard confirms; anyone else pastes an API token. The token is verified before any code is
 * made; the code then goes back to Terraform's loopback address, bound to its redirect URI and
 * PKCE challenge, and `/oauth/token` turns it into a token minted with the one proved here. The
 * page's forms follow the dashboard's rules: same-site posts only, the session's CSRF token.
 */
export function terraformLoginRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.get(TERRAFORM_LOGIN, async (c) => {
    const sealed = c.req.query('request') ?? ''
    const request = openRequest(deps, sealed)
    if (request === undefined) return expired(c)
    const session = deps.sessions.readOrStart(c)
    return answer(c, deps, { sealed, request, session })
  })

  app.post(TERRAFORM_LOGIN, async (c) => {
    const form = await readForm(c, SMALL_BODY_BYTES)
    const sealed = form.get('request') ?? ''
    const request = openRequest(deps, sealed)
    if (request === undefined) return expired(c)
    const session = deps.sessions.read(c)
    if (session === undefined || !sameText(form.get('csrf') ?? '', session.csrf)) {
      refused(c, 'the form expired')
      const fresh = deps.sessions.readOrStart(c)
      const error = 'This form has expired: give Terraform a token again.'
      return answer(c, deps, { sealed, request, session: fresh, error }, 400)
    }
    if (form.get('answer') === 'deny') {
      return toTerraform(c, request, backToTerraform(request, { error: 'access_denied' }))
    }
    const pasted = (form.get('token') ?? '').trim()
    const bearer = pasted === '' ? await bearerOf(deps, session) : pasted
    const again = (error: string) => answer(c, deps, { sealed, request, session, error }, 400)
    if (bearer === undefined) return again('Paste an API token (svc_tfe_…) to give Terraform.')
    if (!isApiToken(bearer)) {
      return again('Paste an API token (svc_tfe_…): Terraform is given one made with it.')
    }
    let identity: Identity
    try {
      identity = await deps.auth.authenticate(bearer)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('terraform login refused a token', { reason: error.reason })
      refused(c, 'token not valid')
      return again('That token was refused: it is unknown, revoked or expired.')
    }
    const origin = identity.origin
    const proved = origin?.apiToken?.id
    if (proved === undefined) return again('Paste an API token (svc_tfe_…) to give Terraform.')
    if ((origin?.tokens.length ?? 0) >= MAX_TOKEN_CHAIN) {
      return again(
        `That token was made through ${MAX_TOKEN_CHAIN - 1} others already: use one made nearer to the admin token.`,
      )
    }
    c.set('principal', identity)
    const code = await deps.terraformLogins.code(identity, request, proved)
    return toTerraform(c, request, backToTerraform(request, { code }))
  })

  return app
}

function openRequest(deps: DashboardDeps, sealed: string): TerraformLoginRequest | undefined {
  if (deps.mode !== 'local') return undefined
  try {
    return deps.terraformLogins.open(sealed)
  } catch (error) {
    if (error instanceof AuthError) return undefined
    throw error
  }
}

/** The page, for a signed-in person to confirm or anyone to paste a token. */
async function answer(
  c: Context<AppEnv>,
  deps: DashboardDeps,
  props: { sealed: string; request: TerraformLoginRequest; session: Session; error?: string },
  status: 200 | 400 = 200,
) {
  const who = await signedInAs(deps, props.session)
  allowFormsTo(c, props.request)
  return c.html(
    <TerraformLoginPage
      csrf={props.session.csrf}
      sealed={props.sealed}
      callback={new URL(props.request.redirect).origin}
      who={who === undefined ? undefined : (who.email ?? who.subject)}
      error={props.error}
      adminTokenFile={deps.adminTokenFile}
    />,
    status,
  )
}

/** Sends the browser back to Terraform's loopback address, with a code or an error. */
function toTerraform(c: Context<AppEnv>, request: TerraformLoginRequest, location: string) {
  allowFormsTo(c, request)
  return c.redirect(location, 303)
}

/**
 * The dashboard's policy, with the one loopback origin Terraform listens on added to
 * `form-action`: browsers apply it to the redirect that answers a form's post too.
 */
function allowFormsTo(c: Context<AppEnv>, request: TerraformLoginRequest): void {
  const origin = new URL(request.redirect).origin
  c.header(
    'Content-Security-Policy',
    CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self' ${origin}`),
  )
}

/** Who the session speaks for, if it is signed in and still opens; undefined otherwise. */
async function signedInAs(deps: DashboardDeps, session: Session): Promise<Identity | undefined> {
  const bearer = await bearerOf(deps, session)
  if (bearer === undefined) return undefined
  try {
    return await deps.auth.authenticate(bearer)
  } catch (error) {
    if (error instanceof TokenVerificationError) return undefined
    throw error
  }
}

async function bearerOf(deps: DashboardDeps, session: Session): Promise<string | undefined> {
  const fresh = await deps.sessions.fresh(session)
  return fresh === undefined ? undefined : Sessions.bearerOf(fresh)
}

/** A refused attempt is recorded; a code given is recorded when Terraform spends it. */
function refused(c: Context<AppEnv>, why: string): void {
  noteAudit(c, { skip: false, detail: { via: 'terraform login page', refused: why } })
}

function expired(c: Context<AppEnv>) {
  return c.html(
    <Page title="Sign-in request expired">
      <h1>This sign-in request has expired</h1>
      <p>
        It is no longer valid, or it was not made by this server. Run <code>terraform login</code>{' '}
        again and open the address it prints.
      </p>
    </Page>,
    400,
  )
}

function TerraformLoginPage(props: {
  csrf: string
  sealed: string
  callback: string
  who: string | undefined
  error: string | undefined
  adminTokenFile: { path: string; shared: boolean } | undefined
}) {
  return (
    <Page title="Give Terraform a token">
      <h1>Give Terraform a token</h1>
      <Notice text={props.error} error />
      <p>
        <code>terraform login</code> on this computer asks for a token for this server. It waits at{' '}
        <code>{props.callback}</code> and keeps the token in its credentials file. It gets a new API
        token made with the one you give, with the same limit, that expires with it or sooner.
      </p>
      <div class="grid">
        {props.who === undefined ? null : (
          <section class="panel" aria-labelledby="as-you">
            <h2 id="as-you">As {props.who}</h2>
            <form method="post" action={TERRAFORM_LOGIN}>
              <CsrfField csrf={props.csrf} />
              <input type="hidden" name="request" value={props.sealed} />
              <button type="submit" name="answer" value="allow">
                Give Terraform a token
              </button>
            </form>
          </section>
        )}
        <section class="panel" aria-labelledby="with-token">
          <h2 id="with-token">
            {props.who === undefined ? 'With an API token' : 'Or with another API token'}
          </h2>
          <p class="muted">
            {props.adminTokenFile === undefined ? null : (
              <>
                In local mode, <AdminTokenFile file={props.adminTokenFile} />{' '}
              </>
            )}
            A token made for the purpose (<code>cairn tokens create terraform</code>) is better.
          </p>
          <form method="post" action={TERRAFORM_LOGIN}>
            <CsrfField csrf={props.csrf} />
            <input type="hidden" name="request" value={props.sealed} />
            <p>
              <label>
                API token
                <input
                  name="token"
                  type="password"
                  autocomplete="off"
                  required
                  placeholder="svc_tfe_…"
                />
              </label>
            </p>
            <button type="submit" name="answer" value="allow">
              Give Terraform a token
            </button>
          </form>
        </section>
      </div>
      <form method="post" action={TERRAFORM_LOGIN}>
        <CsrfField csrf={props.csrf} />
        <input type="hidden" name="request" value={props.sealed} />
        <button class="secondary" type="submit" name="answer" value="deny">
          Cancel: give Terraform nothing
        </button>
      </form>
    </Page>
  )
}
