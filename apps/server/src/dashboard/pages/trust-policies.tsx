import { parseTrustPolicy, type StoredTrustPolicy } from '@cairn/ci-identity'
import { demandAdmin, InvalidRequestError, RoleNotFoundError } from '@cairn/core'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import type { AppEnv } from '../../http/app-env'
import { HttpError } from '../../http/errors'
import { postedForm } from '../posted-form'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { ConfirmPage } from '../view/confirm'
import { Ago, CsrfField, DataTable, Notice, Page } from '../view/layout'

export const TRUST_POLICIES = '/app/settings/trust-policies'

/** What the form gave, kept to show it again beside the reason it was refused. */
interface Draft {
  name: string
  issuer: string
  audience: string
  claims: string
  role: string
  scope: string
  maxTtl: string
}

const EMPTY: Draft = {
  name: '',
  issuer: '',
  audience: '',
  claims: '',
  role: 'writer',
  scope: '',
  maxTtl: '1h',
}

/**
 * Trust policies for CI jobs (administrators; DESIGN section 17): the list, a form that sets one
 * (the same checks as `POST /v1/auth/trust-policies`), and removal after a confirmation. Anyone
 * else gets the 403 page, as the API answers them.
 */
export function trustPolicyRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.get(TRUST_POLICIES, async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'see the trust policies')
    return c.html(await listPage(c, deps, EMPTY))
  })

  app.post(TRUST_POLICIES, async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'set a trust policy')
    const form = postedForm(c)
    const draft: Draft = {
      name: form.get('name') ?? '',
      issuer: form.get('issuer') ?? '',
      audience: form.get('audience') ?? '',
      claims: form.get('claims') ?? '',
      role: form.get('role') ?? '',
      scope: form.get('scope') ?? '',
      maxTtl: form.get('max_ttl') ?? '',
    }
    try {
      const policy = parseTrustPolicy({
        name: draft.name,
        issuer: draft.issuer,
        audience: draft.audience,
        claims: claimsOf(draft.claims),
        role: draft.role,
        scope: draft.scope,
        ...(draft.maxTtl === '' ? {} : { max_ttl: draft.maxTtl }),
      })
      await deps.rbac.role(policy.role)
      const { replaced } = await deps.trustPolicies.put(policy, c.var.principal.subject)
      noteAudit(c, { detail: { policy: policy.name, change: replaced ? 'replaced' : 'created' } })
      deps.sessions.flash(c, `Trust policy ${policy.name} ${replaced ? 'replaced' : 'set'}.`)
      return c.redirect(TRUST_POLICIES, 303)
    } catch (error) {
      if (!(error instanceof InvalidRequestError || error instanceof RoleNotFoundError)) throw error
      return c.html(await listPage(c, deps, draft, error.message), 400)
    }
  })

  app.get(`${TRUST_POLICIES}/remove`, async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'remove a trust policy')
    const name = queryOf(c, 'name') ?? ''
    const policy = await deps.trustPolicies.get(name)
    if (policy === undefined)
      throw new HttpError('not_found', `no trust policy ${name.slice(0, 100)}`)
    return c.html(
      <ConfirmPage
        title="Remove a trust policy"
        heading={`Remove trust policy ${policy.name}?`}
        section="access"
        viewer={viewerOf(c, deps.mode)}
        action={`${TRUST_POLICIES}/remove`}
        fields={{ name: policy.name }}
        button={`Remove trust policy ${policy.name}`}
        back={TRUST_POLICIES}
      >
        <PolicyFacts policy={policy} now={deps.clock.now()} />
        <p>
          No CI job earns a token under it any more. Tokens it gave already live out their time (at
          most {policy.max_ttl}).
        </p>
      </ConfirmPage>,
    )
  })

  app.post(`${TRUST_POLICIES}/remove`, async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'remove a trust policy')
    const name = postedForm(c).get('name') ?? ''
    noteAudit(c, { detail: { policy: name.slice(0, 64), change: 'removed' } })
    if (!(await deps.trustPolicies.delete(name))) {
      throw new HttpError('not_found', `no trust policy ${name.slice(0, 100)}`)
    }
    deps.sessions.flash(c, `Trust policy ${name} removed.`)
    return c.redirect(TRUST_POLICIES, 303)
  })

  return app
}

/** `claim=value` lines (or separated by commas) as the policy's conditions. */
function claimsOf(text: string): Record<string, string> {
  const claims: Record<string, string> = {}
  for (const line of text.split(/[\n,]/).map((part) => part.trim())) {
    if (line === '') continue
    const equals = line.indexOf('=')
    if (equals < 1)
      throw new InvalidRequestError(
        `claim condition ${JSON.stringify(line.slice(0, 100))} is not claim=value`,
      )
    claims[line.slice(0, equals).trim()] = line.slice(equals + 1).trim()
  }
  return claims
}

async function listPage(c: Context<AppEnv>, deps: DashboardDeps, draft: Draft, error?: string) {
  const policies = await deps.trustPolicies.list()
  const roles = await deps.rbac.roles()
  const now = deps.clock.now()
  return (
    <Page title="Trust policies" section="access" viewer={viewerOf(c, deps.mode)}>
      <h1>Trust policies for CI jobs</h1>
      <Notice {...flashed(c)} />
      <Notice text={error} error />
      <p>
        A CI job whose OIDC ID token matches a policy gets a token of{' '}
        <code>policy:&lt;name&gt;</code> with the policy’s role on its scope, with no secret stored
        in the CI platform (<code>cairn login --ci</code>).
      </p>
      <section aria-labelledby="policies">
        <h2 id="policies">Policies</h2>
        {policies.length === 0 ? (
          <p class="muted">No trust policy yet.</p>
        ) : (
          <DataTable
            caption="Trust policies, by name"
            columns={[
              'Name',
              'Issuer',
              'Audience',
              'Claims',
              'Grants',
              'Max TTL',
              'Set',
              { label: 'Actions', skip: true },
            ]}
          >
            {policies.map((policy) => (
              <tr>
                <td data-label="Name" class="mono">
                  {policy.name}
                </td>
                <td data-label="Issuer" class="mono">
                  {policy.issuer}
                </td>
                <td data-label="Audience" class="mono">
                  {policy.audience}
                </td>
                <td data-label="Claims" class="mono">
                  {Object.entries(policy.claims).map(([claim, value]) => (
                    <div>
                      {claim}={value}
                    </div>
                  ))}
                </td>
                <td data-label="Grants">
                  {policy.role} on <code>{policy.scope}</code>
                </td>
                <td data-label="Max TTL">{policy.max_ttl}</td>
                <td data-label="Set">
                  <Ago iso={policy.created} now={now} /> by {policy.by}
                </td>
                <td data-label="Actions">
                  <a
                    class="button secondary"
                    href={`${TRUST_POLICIES}/remove?${new URLSearchParams({ name: policy.name }).toString()}`}
                  >
                    Remove {policy.name}
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <section aria-labelledby="set">
        <h2 id="set">Set a policy</h2>
        <form class="filters" method="post" action={TRUST_POLICIES}>
          <CsrfField csrf={c.var.session.csrf} />
          <label>
            Name
            <input
              name="name"
              required
              maxlength={64}
              value={draft.name}
              placeholder="github-deploy"
              autocomplete="off"
            />
          </label>
          <label>
            Issuer
            <input
              name="issuer"
              required
              value={draft.issuer}
              placeholder="https://token.actions.githubusercontent.com"
            />
          </label>
          <label>
            Audience
            <input name="audience" required value={draft.audience} placeholder="cairn" />
          </label>
          <label>
            Claims, one claim=value (or glob) a line; all must hold
            <textarea
              name="claims"
              rows={3}
              required
              placeholder={'repository=acme/infra\nref=refs/heads/main'}
            >
              {draft.claims}
            </textarea>
          </label>
          <label>
            Role
            <select name="role">
              {roles.map((role) => (
                <option value={role.name} selected={role.name === draft.role}>
                  {role.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Scope
            <input name="scope" required value={draft.scope} placeholder="team/*" />
          </label>
          <label>
            Max TTL
            <input name="max_ttl" value={draft.maxTtl} placeholder="1h" />
          </label>
          <button type="submit">Set policy</button>
        </form>
      </section>
    </Page>
  )
}

function PolicyFacts({ policy, now }: { policy: StoredTrustPolicy; now: number }) {
  return (
    <dl class="facts">
      <dt>Issuer</dt>
      <dd class="mono">{policy.issuer}</dd>
      <dt>Audience</dt>
      <dd class="mono">{policy.audience}</dd>
      <dt>Claims</dt>
      <dd class="mono">
        {Object.entries(policy.claims)
          .map(([claim, value]) => `${claim}=${value}`)
          .join(' ')}
      </dd>
      <dt>Grants</dt>
      <dd>
        {policy.role} on <code>{policy.scope}</code>
      </dd>
      <dt>Set</dt>
      <dd>
        <Ago iso={policy.created} now={now} /> by {policy.by}
      </dd>
    </dl>
  )
}
