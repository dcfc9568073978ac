import {
  AssignmentNotFoundError,
  demandAdmin,
  InvalidRequestError,
  PERMISSIONS,
  RoleConflictError,
  RoleNotFoundError,
} from '@cairn/core'
import type { Role } from '@cairn/rbac'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import { removedDetail, removeUser } from '../../auth/remove-user'
import type { AppEnv } from '../../http/app-env'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { postedForm } from '../posted-form'
import { ConfirmPage } from '../view/confirm'
import { Ago, At, CsrfField, DataTable, Notice, Page } from '../view/layout'
import { TRUST_POLICIES } from './trust-policies'

export const ACCESS = '/app/admin/access'
const ROLES = `${ACCESS}/roles`
const ASSIGNMENTS = `${ACCESS}/assignments`
const USERS = `${ACCESS}/users`

/** What the forms gave, kept to show them again beside the reason one was refused. */
interface Drafts {
  role: { name: string; description: string; permissions: string[] }
  assignment: { principal: string; role: string; scope: string }
}

const EMPTY: Drafts = {
  role: { name: '', description: '', permissions: ['unit:read'] },
  assignment: { principal: '', role: 'reader', scope: '' },
}

/** The errors of a form that the page shows beside it, keeping what was typed. */
function isRefusal(error: unknown): error is Error {
  return (
    error instanceof InvalidRequestError ||
    error instanceof RoleNotFoundError ||
    error instanceof RoleConflictError
  )
}

/**
 * Access control (administrators; DESIGN section 9) as a page: the roles with their permissions,
 * the assignments with their scopes, the users seen at login and the trust policies of CI jobs;
 * custom roles and assignments made from forms, and roles, assignments and users removed after a
 * page that asks. The same service as `/v1/rbac`; anyone else gets the 403 page.
 */
export function accessRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const { rbac } = deps
  const admin = (c: Context<AppEnv>, what: string) =>
    demandAdmin(deps.core.authorizer, c.var.principal, what)

  app.get(ACCESS, async (c) => c.html(await accessPage(c, deps, EMPTY)))

  app.post(ROLES, async (c) => {
    const form = postedForm(c)
    const draft = {
      name: (form.get('name') ?? '').trim(),
      description: form.get('description') ?? '',
      permissions: form.getAll('permissions'),
    }
    try {
      const { role } = await rbac.putRole(
        c.var.principal,
        draft.name,
        { permissions: draft.permissions, description: draft.description },
        { replace: false },
      )
      noteAudit(c, { detail: { role: role.name, change: 'created' } })
      deps.sessions.flash(c, `Role ${role.name} created.`)
      return c.redirect(ACCESS, 303)
    } catch (error) {
      if (!isRefusal(error)) throw error
      return c.html(await accessPage(c, deps, { ...EMPTY, role: draft }, error.message), 400)
    }
  })

  app.get(`${ROLES}/delete`, async (c) => {
    await admin(c, 'delete roles')
    const role = await rbac.role(queryOf(c, 'name') ?? '')
    if (role.builtIn) throw new RoleConflictError(`${role.name} is a built-in role`)
    return c.html(
      <ConfirmPage
        title="Delete a role"
        heading={`Delete role ${role.name}?`}
        section="access"
        viewer={viewerOf(c, deps.mode)}
        action={`${ROLES}/delete`}
        fields={{ name: role.name }}
        button={`Delete role ${role.name}`}
        back={ACCESS}
      >
        <RoleFacts role={role} />
        <p>A role still assigned is not deleted: remove its assignments first.</p>
      </ConfirmPage>,
    )
  })

  app.post(`${ROLES}/delete`, async (c) => {
    const name = postedForm(c).get('name') ?? ''
    noteAudit(c, { detail: { role: name.slice(0, 64), change: 'deleted' } })
    try {
      await rbac.deleteRole(c.var.principal, name)
    } catch (error) {
      if (!(error instanceof RoleConflictError)) throw error
      return c.html(await accessPage(c, deps, EMPTY, error.message), 409)
    }
    deps.sessions.flash(c, `Role ${name} deleted.`)
    return c.redirect(ACCESS, 303)
  })

  app.post(ASSIGNMENTS, async (c) => {
    const form = postedForm(c)
    const draft = {
      principal: (form.get('principal') ?? '').trim(),
      role: form.get('role') ?? '',
      scope: (form.get('scope') ?? '').trim(),
    }
    try {
      const { assignment, created } = await rbac.assign(c.var.principal, draft)
      noteAudit(c, {
        detail: {
          assignment_id: assignment.id,
          principal: assignment.principal,
          role: assignment.role,
          scope: assignment.scope,
          change: created ? 'created' : 'unchanged',
        },
      })
      deps.sessions.flash(
        c,
        created
          ? `Gave ${assignment.principal} ${assignment.role} on ${assignment.scope}.`
          : `${assignment.principal} already holds ${assignment.role} on ${assignment.scope}.`,
      )
      return c.redirect(ACCESS, 303)
    } catch (error) {
      if (!isRefusal(error)) throw error
      return c.html(await accessPage(c, deps, { ...EMPTY, assignment: draft }, error.message), 400)
    }
  })

  app.get(`${ASSIGNMENTS}/remove`, async (c) => {
    const id = queryOf(c, 'id') ?? ''
    const found = (await rbac.assignments(c.var.principal)).find((item) => item.id === id)
    if (found === undefined) throw new AssignmentNotFoundError(id.slice(0, 100))
    return c.html(
      <ConfirmPage
        title="Remove an assignment"
        heading={`Take ${found.role} on ${found.scope} from ${found.principal}?`}
        section="access"
        viewer={viewerOf(c, deps.mode)}
        action={`${ASSIGNMENTS}/remove`}
        fields={{ id: found.id }}
        button="Remove the assignment"
        back={ACCESS}
      >
        <p>
          What {found.principal} may do under <code>{found.scope}</code> through this role stops at
          once, on every instance. Other assignments they hold stay.
        </p>
      </ConfirmPage>,
    )
  })

  app.post(`${ASSIGNMENTS}/remove`, async (c) => {
    const id = postedForm(c).get('id') ?? ''
    noteAudit(c, { detail: { assignment_id: id.slice(0, 64), change: 'removed' } })
    const removed = await rbac.revoke(c.var.principal, { id })
    deps.sessions.flash(c, `Took ${removed.role} on ${removed.scope} from ${removed.principal}.`)
    return c.redirect(ACCESS, 303)
  })

  app.get(`${USERS}/remove`, async (c) => {
    const subject = queryOf(c, 'subject') ?? ''
    const issuer = queryOf(c, 'issuer')
    const user = await rbac.findUser(c.var.principal, subject, issuer)
    return c.html(
      <ConfirmPage
        title="Remove a user"
        heading={`Remove user ${user.email ?? user.subject}?`}
        section="access"
        viewer={viewerOf(c, deps.mode)}
        action={`${USERS}/remove`}
        fields={{
          subject: user.subject,
          ...(user.issuer === undefined ? {} : { issuer: user.issuer }),
        }}
        button={`Remove ${user.email ?? user.subject}`}
        back={ACCESS}
      >
        <p>
          Their API tokens and logins stop working at once, on every instance, and the assignments
          that name them go (those of their groups stay). If your identity provider still lets them
          in, they can sign in again: remove them there too.
        </p>
      </ConfirmPage>,
    )
  })

  app.post(`${USERS}/remove`, async (c) => {
    const form = postedForm(c)
    const subject = form.get('subject') ?? ''
    noteAudit(c, { detail: { user: subject.slice(0, 128), change: 'removed' } })
    const removed = await removeUser(
      { rbac, auth: deps.auth },
      c.var.principal,
      subject,
      form.get('issuer') ?? undefined,
    )
    noteAudit(c, { detail: { ...c.var.audit?.detail, ...removedDetail(removed) } })
    deps.sessions.flash(
      c,
      `Removed ${removed.subject}: ${removed.tokens_revoked} tokens and ${removed.logins_revoked} logins ended, ${removed.assignments_removed.length} assignments removed.`,
    )
    return c.redirect(ACCESS, 303)
  })

  return app
}

async function accessPage(c: Context<AppEnv>, deps: DashboardDeps, drafts: Drafts, error?: string) {
  const { rbac } = deps
  // The users and assignments take an administrator: anyone else is refused here.
  const [users, assignments, roles, policies] = await Promise.all([
    rbac.users(c.var.principal),
    rbac.assignments(c.var.principal),
    rbac.roles(),
    deps.trustPolicies.list(),
  ])
  const now = deps.clock.now()
  const csrf = c.var.session.csrf
  return (
    <Page title="Access" section="access" viewer={viewerOf(c, deps.mode)}>
      <h1>Access control</h1>
      <Notice {...flashed(c)} />
      <Notice text={error} error />
      {rbac.enforced ? (
        <p class="muted">
          Roles grant permissions on the units of a scope (<code>*</code>, <code>team/*</code> or
          one unit); an assignment gives a role to a user, an email address or a group.
        </p>
      ) : (
        <p class="notice" role="status">
          RBAC is off on this server: every signed-in caller may do everything to units, and only
          administrators administer it. Roles and assignments are kept here and decide once it is
          started with <code>-rbac</code>.
        </p>
      )}
      <section aria-labelledby="assignments">
        <h2 id="assignments">Assignments</h2>
        {assignments.length === 0 ? (
          <p class="muted">No assignment yet.</p>
        ) : (
          <DataTable
            caption="Assignments, oldest first"
            columns={['Principal', 'Role', 'Scope', 'Given', { label: 'Actions', skip: true }]}
          >
            {assignments.map((assignment) => (
              <tr>
                <td data-label="Principal" class="mono">
                  {assignment.principal}
                </td>
                <td data-label="Role">{assignment.role}</td>
                <td data-label="Scope" class="mono">
                  {assignment.scope}
                </td>
                <td data-label="Given">
                  <Ago iso={assignment.created} now={now} /> by {assignment.created_by}
                </td>
                <td data-label="Actions">
                  <a
                    class="button secondary"
                    href={`${ASSIGNMENTS}/remove?${new URLSearchParams({ id: assignment.id }).toString()}`}
                  >
                    Remove
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        <h3>Give a role</h3>
        <form class="filters" method="post" action={ASSIGNMENTS}>
          <CsrfField csrf={csrf} />
          <label>
            Principal (user:, email: or group:)
            <input
              name="principal"
              required
              value={drafts.assignment.principal}
              placeholder="group:platform"
              autocomplete="off"
            />
          </label>
          <label>
            Role
            <select name="role">
              {roles.map((role) => (
                <option value={role.name} selected={role.name === drafts.assignment.role}>
                  {role.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Scope
            <input name="scope" required value={drafts.assignment.scope} placeholder="team/*" />
          </label>
          <button type="submit">Give role</button>
        </form>
      </section>
      <section aria-labelledby="roles">
        <h2 id="roles">Roles</h2>
        <DataTable
          caption="Roles, built-in first"
          columns={['Role', 'Permissions', 'Description', { label: 'Actions', skip: true }]}
        >
          {roles.map((role) => (
            <tr>
              <td data-label="Role">
                {role.name} {role.builtIn ? <span class="badge">built-in</span> : null}
              </td>
              <td data-label="Permissions" class="mono">
                {role.permissions.join(', ')}
              </td>
              <td data-label="Description">{role.description}</td>
              <td data-label="Actions">
                {role.builtIn ? null : (
                  <a
                    class="button secondary"
                    href={`${ROLES}/delete?${new URLSearchParams({ name: role.name }).toString()}`}
                  >
                    Delete {role.name}
                  </a>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
        <h3>Make a custom role</h3>
        <form method="post" action={ROLES}>
          <CsrfField csrf={csrf} />
          <div class="filters">
            <label>
              Name
              <input
                name="name"
                required
                maxlength={64}
                value={drafts.role.name}
                placeholder="deployer"
                autocomplete="off"
              />
            </label>
            <label>
              Description
              <input name="description" maxlength={500} value={drafts.role.description} />
            </label>
          </div>
          <fieldset>
            <legend>Permissions</legend>
            <div class="filters">
              {PERMISSIONS.map((permission) => (
                <label class="check">
                  <input
                    type="checkbox"
                    name="permissions"
                    value={permission}
                    checked={drafts.role.permissions.includes(permission)}
                  />
                  <span class="mono">{permission}</span>
                </label>
              ))}
            </div>
          </fieldset>
          <p>
            <button type="submit">Make role</button>
          </p>
        </form>
      </section>
      <section aria-labelledby="users">
        <h2 id="users">Users seen at login</h2>
        {users.length === 0 ? (
          <p class="muted">Nobody has signed in through the identity provider yet.</p>
        ) : (
          <DataTable
            caption="Users seen at login, by subject"
            columns={[
              'User',
              'Groups',
              'Holds',
              'Last seen (UTC)',
              { label: 'Actions', skip: true },
            ]}
          >
            {users.map((user) => (
              <tr>
                <td data-label="User">
                  {user.email ?? user.subject}
                  <span class="provenance muted mono">
                    {user.subject}
                    {user.issuer === undefined ? '' : ` at ${user.issuer}`}
                  </span>
                </td>
                <td data-label="Groups" class="mono">
                  {user.groups.join(', ')}
                </td>
                <td data-label="Holds">
                  {user.assignments.length === 0 ? (
                    <span class="muted">nothing of their own</span>
                  ) : (
                    user.assignments.map((assignment) => (
                      <div>
                        {assignment.role} on <code>{assignment.scope}</code>
                      </div>
                    ))
                  )}
                </td>
                <td data-label="Last seen">
                  <At iso={user.last_seen} now={now} />
                </td>
                <td data-label="Actions">
                  <a
                    class="button secondary"
                    href={`${USERS}/remove?${new URLSearchParams({
                      subject: user.subject,
                      ...(user.issuer === undefined ? {} : { issuer: user.issuer }),
                    }).toString()}`}
                  >
                    Remove
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <section aria-labelledby="trust">
        <h2 id="trust">Trust policies for CI jobs</h2>
        {policies.length === 0 ? (
          <p class="muted">No trust policy yet.</p>
        ) : (
          <DataTable caption="Trust policies, by name" columns={['Name', 'Issuer', 'Grants']}>
            {policies.map((policy) => (
              <tr>
                <td data-label="Name" class="mono">
                  {policy.name}
                </td>
                <td data-label="Issuer" class="mono">
                  {policy.issuer}
                </td>
                <td data-label="Grants">
                  {policy.role} on <code>{policy.scope}</code>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        <p>
          <a href={TRUST_POLICIES}>Manage the trust policies</a>
        </p>
      </section>
    </Page>
  )
}

function RoleFacts({ role }: { role: Role }) {
  return (
    <dl class="facts">
      <dt>Permissions</dt>
      <dd class="mono">{role.permissions.join(', ')}</dd>
      <dt>Description</dt>
      <dd>{role.description === '' ? <span class="muted">none</span> : role.description}</dd>
    </dl>
  )
}
