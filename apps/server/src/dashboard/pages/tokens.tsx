import { AuthError } from '@cairn/auth'
import { InvalidRequestError, validate } from '@cairn/core'
import type { ApiToken, CreatedApiToken } from '@cairn/contract'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import { CreateApiTokenRequestSchema, type CreateApiTokenRequest } from '../../auth/token-request'
import type { AppEnv } from '../../http/app-env'
import { postedForm } from '../posted-form'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, CsrfField, DataTable, Notice, Page, ShownOnce } from '../view/layout'

const TOKENS = '/app/settings/tokens'
const DAY_S = 24 * 60 * 60

/**
 * The signed-in person's API tokens: the list, a form to make one (its secret shown once, in the
 * answer to the post), and revocation after a confirmation. It is also the page `terraform login`
 * names for a token made by hand (`/app/settings/tokens?source=terraform-login`, as HCP
 * Terraform's), so it says how to use a token with Terraform in every mode.
 */
export function tokensRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.get(TOKENS, async (c) => {
    if (deps.mode === 'disabled') return c.html(<NotNeeded c={c} deps={deps} />)
    return c.html(
      <TokensPage
        c={c}
        deps={deps}
        tokens={await listOf(c, deps)}
        administers={await deps.auth.isAdministrator(c.var.principal)}
      />,
    )
  })

  app.post(TOKENS, async (c) => {
    if (deps.mode === 'disabled') return c.redirect(TOKENS, 303)
    const form = postedForm(c)
    const name = form.get('name') ?? ''
    const days = (form.get('days') ?? '').trim()
    let body: CreateApiTokenRequest
    try {
      body = validate(CreateApiTokenRequestSchema, { name, ...lifetimeOf(days) })
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      const tokens = await listOf(c, deps)
      const page = (
        <TokensPage
          c={c}
          deps={deps}
          tokens={tokens}
          administers={await deps.auth.isAdministrator(c.var.principal)}
          error={error.message}
          name={name}
          days={days}
        />
      )
      return c.html(page, 400)
    }
    const created = await deps.auth.createApiToken(
      c.var.principal,
      body.name,
      body.expires_in === undefined ? {} : { expiresInSeconds: body.expires_in },
    )
    // The same record as the API's `POST /v1/auth/tokens`.
    noteAudit(c, {
      detail: {
        token_id: created.id,
        token_name: created.name,
        ...(created.limit === null ? {} : { scope: created.limit.scope, role: created.limit.role }),
      },
    })
    c.var.log.info('API token created', { token_id: created.id, subject: created.subject })
    // The secret is in this answer alone: never in a URL, a redirect or a cache.
    c.header('Cache-Control', 'no-store')
    return c.html(<CreatedPage c={c} deps={deps} created={created} />)
  })

  app.get(`${TOKENS}/revoke`, async (c) => {
    if (deps.mode === 'disabled') return c.redirect(TOKENS, 302)
    const id = queryOf(c, 'id') ?? ''
    const token = (await listOf(c, deps)).find((item) => item.id === id)
    if (token === undefined) throw new AuthError('token_not_found', `no API token ${id}`)
    const current = c.var.principal.origin?.apiToken?.id === id
    return c.html(
      <Page title="Revoke a token" section="tokens" viewer={viewerOf(c, deps.mode)}>
        <h1>Revoke token {token.name}?</h1>
        <dl class="facts">
          <dt>Name</dt>
          <dd>{token.name}</dd>
          <dt>ID</dt>
          <dd class="mono">{token.id}</dd>
          <dt>Owner</dt>
          <dd>{token.subject}</dd>
          <dt>Created</dt>
          <dd>
            <Ago iso={token.created} now={deps.clock.now()} />
          </dd>
        </dl>
        <p>
          Whatever uses it (Terraform, CI, a script) is refused from then on, and so are the tokens
          made with it. This cannot be undone.
        </p>
        {current ? (
          <p class="notice error" role="alert">
            You are signed in with this token: revoking it signs you out.
          </p>
        ) : null}
        <form method="post" action={`${TOKENS}/revoke`}>
          <CsrfField csrf={c.var.session.csrf} />
          <input type="hidden" name="id" value={token.id} />
          <p>
            <button class="danger" type="submit">
              Revoke token {token.name}
            </button>{' '}
            <a class="button secondary" href={TOKENS}>
              Cancel
            </a>
          </p>
        </form>
      </Page>,
    )
  })

  app.post(`${TOKENS}/revoke`, async (c) => {
    if (deps.mode === 'disabled') return c.redirect(TOKENS, 303)
    const id = postedForm(c).get('id') ?? ''
    noteAudit(c, { detail: { token_id: id.slice(0, 128) } })
    const revoked = await deps.auth.revokeApiToken(c.var.principal, id)
    c.var.log.info('API token revoked', { token_id: revoked.id, by: c.var.principal.subject })
    deps.sessions.flash(c, `Revoked token ${revoked.name} (${revoked.id}).`)
    return c.redirect(TOKENS, 303)
  })

  return app
}

/** A lifetime in whole days as the API's `expires_in`; a field the schema refuses otherwise. */
function lifetimeOf(days: string): { expires_in?: unknown } {
  if (days === '') return {}
  if (!/^\d{1,5}$/.test(days)) {
    throw new InvalidRequestError('the lifetime must be a whole number of days')
  }
  return { expires_in: Number(days) * DAY_S }
}

function listOf(c: Context<AppEnv>, deps: DashboardDeps): Promise<ApiToken[]> {
  return deps.auth.listApiTokens(c.var.principal)
}

interface PageContext {
  c: Context<AppEnv>
  deps: DashboardDeps
}

function TokensPage({
  c,
  deps,
  tokens,
  error,
  name,
  days,
  administers,
}: PageContext & {
  tokens: ApiToken[]
  administers: boolean
  error?: string
  name?: string
  days?: string
}) {
  const now = deps.clock.now()
  const me = c.var.principal.subject
  const others = tokens.some((token) => token.subject !== me)
  return (
    <Page title="API tokens" section="tokens" viewer={viewerOf(c, deps.mode)}>
      <h1>API tokens</h1>
      <Notice {...flashed(c)} />
      <Notice text={error} error />
      {c.req.query('source') === 'terraform-login' ? (
        <p class="notice" role="status">
          Terraform asked you for a token: create one below, copy it, and paste it at Terraform’s
          prompt.
        </p>
      ) : null}
      <p>
        An API token acts for you with your rights, or fewer: use it for Terraform, CI, the{' '}
        <code>cairn</code> command or the API.
      </p>
      <section aria-labelledby="create">
        <h2 id="create">Create a token</h2>
        <form class="filters" method="post" action={TOKENS}>
          <CsrfField csrf={c.var.session.csrf} />
          <label>
            Name
            <input
              name="name"
              required
              maxlength={100}
              value={name ?? ''}
              placeholder="terraform"
              autocomplete="off"
            />
          </label>
          <label>
            Lifetime in days (empty: until revoked)
            <input name="days" type="number" min={1} max={3650} step={1} value={days ?? ''} />
          </label>
          <button type="submit">Create token</button>
        </form>
        <p class="muted">
          A token limited to some units and a role is made with{' '}
          <code>cairn tokens create &lt;name&gt; --scope team/* --role writer</code>.
          {administers ? (
            <>
              {' '}
              A CI job needs none: see the{' '}
              <a href="/app/settings/trust-policies">trust policies for CI jobs</a>.
            </>
          ) : null}
        </p>
      </section>
      <section aria-labelledby="yours">
        <h2 id="yours">
          {others ? 'Tokens (everyone’s: you are an administrator)' : 'Your tokens'}
        </h2>
        {tokens.length === 0 ? (
          <p class="muted">No API token yet.</p>
        ) : (
          <DataTable
            caption="API tokens"
            columns={[
              'Name',
              'ID',
              others && 'Owner',
              'Created',
              'Expires',
              'Limit',
              { label: 'Actions', skip: true },
            ]}
          >
            {tokens.map((token) => (
              <tr>
                <td data-label="Name">{token.name}</td>
                <td data-label="ID" class="mono">
                  {token.id}
                </td>
                {others ? <td data-label="Owner">{token.subject}</td> : null}
                <td data-label="Created">
                  <Ago iso={token.created} now={now} />
                </td>
                <td data-label="Expires">
                  <Expiry iso={token.expires} now={now} />
                </td>
                <td data-label="Limit">
                  {token.limit === null ? (
                    <span class="muted">all of its owner’s rights</span>
                  ) : (
                    <span>
                      {token.limit.role} on <code>{token.limit.scope}</code>
                    </span>
                  )}
                </td>
                <td data-label="Actions">
                  <a
                    class="button secondary"
                    href={`${TOKENS}/revoke?${new URLSearchParams({ id: token.id }).toString()}`}
                  >
                    Revoke {token.name}
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <Usage base={deps.baseUrl(c.req.raw)} />
    </Page>
  )
}

function Expiry({ iso, now }: { iso: string | null; now: number }) {
  if (iso === null) return <span class="muted">never (until revoked)</span>
  const expired = Date.parse(iso) <= now
  return (
    <time datetime={iso} title={iso} class={expired ? 'badge stale' : undefined}>
      {expired ? `expired ${iso.slice(0, 10)}` : iso.slice(0, 10)}
    </time>
  )
}

/** The answer to a creation: the secret, once, with a copy button and how to use it. */
function CreatedPage({ c, deps, created }: PageContext & { created: CreatedApiToken }) {
  return (
    <Page title="Token created" section="tokens" viewer={viewerOf(c, deps.mode)}>
      <h1>Token {created.name} created</h1>
      <ShownOnce
        id="new-token"
        secret={created.token}
        notice="Copy the token now: it is shown this once, and Cairn keeps only its hash."
        copy="Copy the token"
      />
      <dl class="facts">
        <dt>ID</dt>
        <dd class="mono">{created.id}</dd>
        <dt>Expires</dt>
        <dd>{created.expires ?? 'never (until revoked)'}</dd>
        {created.limit === null ? null : (
          <>
            <dt>Limit</dt>
            <dd>
              {created.limit.role} on <code>{created.limit.scope}</code>
            </dd>
          </>
        )}
      </dl>
      <Usage base={deps.baseUrl(c.req.raw)} />
      <p>
        <a href={TOKENS}>Back to the tokens</a>
      </p>
    </Page>
  )
}

/** How to use a token with Terraform, the CLI and the API: placeholders, never a secret. */
function Usage({ base }: { base: string }) {
  const host = new URL(base).host
  const variable = `TF_TOKEN_${host.replaceAll('-', '__').replaceAll('.', '_')}`
  // A shell cannot `export` a name with a colon in it (a host with a port): `env` can set it.
  const terraformEnv = host.includes(':')
    ? `env '${variable}=<token>' terraform plan`
    : `export ${variable}='<token>'`
  return (
    <section aria-labelledby="usage">
      <h2 id="usage">Using a token</h2>
      <p>
        <strong>Terraform</strong>: <code>terraform login {host}</code> opens a page that gives it a
        token of its own; in CI, give one in the environment:
      </p>
      <pre class="panel scroll">
        <code>{terraformEnv}</code>
      </pre>
      <p>
        <strong>The API</strong>, as a Bearer token:
      </p>
      <pre class="panel scroll">
        <code>{`curl -H "Authorization: Bearer <token>" ${base}/v1/auth/me`}</code>
      </pre>
      <p>
        <strong>The CLI</strong>: <code>{`cairn login --server ${base} --token-stdin`}</code>, with
        the token on standard input. <code>cairn tokens ls</code> and{' '}
        <code>cairn tokens revoke &lt;id&gt;</code> do what this page does.
      </p>
    </section>
  )
}

/** With authentication disabled, any token (or none) is accepted: there is nothing to make. */
function NotNeeded({ c, deps }: PageContext) {
  const host = new URL(deps.baseUrl(c.req.raw)).host
  return (
    <Page title="API tokens" section="tokens" viewer={viewerOf(c, deps.mode)}>
      <h1>API tokens</h1>
      <p>
        This server runs with authentication disabled (for development only): it needs no token, and
        accepts any. If <code>terraform login {host}</code> asks for one, paste any text.
      </p>
    </Page>
  )
}
