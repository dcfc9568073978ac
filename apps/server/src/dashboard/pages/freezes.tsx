import type { Freeze } from '@cairn/contract'
import { demandAdmin, InvalidRequestError, parseFreezeRequest } from '@cairn/core'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import type { AppEnv } from '../../http/app-env'
import { HttpError } from '../../http/errors'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { postedForm } from '../posted-form'
import { ConfirmPage } from '../view/confirm'
import { At, DataTable, Notice, Page } from '../view/layout'

export const FREEZES = '/app/admin/freezes'

/**
 * Freezes (administrators; DESIGN section 3) as a page: those in force with who, why and since
 * when; freezing a prefix and lifting a freeze, each after a page that asks. The same service as
 * `/v1/freezes`, which refuses anyone else (the 403 page).
 */
export function freezeRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const { freezes } = deps.core

  app.get(FREEZES, async (c) => c.html(await listPage(c, deps, { prefix: '', reason: '' })))

  // The form asks first: its GET shows what will be frozen, checked, and posts only from there.
  app.get(`${FREEZES}/new`, async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'freeze units')
    const draft = { prefix: queryOf(c, 'prefix') ?? '', reason: queryOf(c, 'reason') ?? '' }
    let freeze
    try {
      freeze = parseFreezeRequest(draft)
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      return c.html(await listPage(c, deps, draft, error.message), 400)
    }
    return c.html(
      <ConfirmPage
        title="Freeze units"
        heading={`Freeze ${freeze.prefix}?`}
        section="freezes"
        viewer={viewerOf(c, deps.mode)}
        action={FREEZES}
        fields={freeze}
        button={`Freeze ${freeze.prefix}`}
        back={FREEZES}
      >
        <dl class="facts">
          <dt>Prefix</dt>
          <dd class="mono">{freeze.prefix}</dd>
          <dt>Reason</dt>
          <dd>{freeze.reason}</dd>
        </dl>
        <p>
          Every lock and every write of the units under it is refused on every way in, with this
          reason, until the freeze is lifted. Reads and unlocks go on, so nobody holding a lock is
          trapped.
        </p>
      </ConfirmPage>,
    )
  })

  app.post(FREEZES, async (c) => {
    const form = postedForm(c)
    const draft = { prefix: form.get('prefix') ?? '', reason: form.get('reason') ?? '' }
    let freeze: Freeze
    try {
      freeze = await freezes.create(c.var.principal, draft)
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      return c.html(await listPage(c, deps, draft, error.message), 400)
    }
    noteAudit(c, { detail: { freeze_id: freeze.id, prefix: freeze.prefix, reason: freeze.reason } })
    deps.sessions.flash(c, `Froze ${freeze.prefix}.`)
    return c.redirect(FREEZES, 303)
  })

  app.get(`${FREEZES}/lift`, async (c) => {
    const id = queryOf(c, 'id') ?? ''
    const freeze = (await freezes.list(c.var.principal)).find((item) => item.id === id)
    if (freeze === undefined) throw new HttpError('not_found', `no freeze ${id.slice(0, 100)}`)
    return c.html(
      <ConfirmPage
        title="Lift a freeze"
        heading={`Lift the freeze of ${freeze.prefix}?`}
        section="freezes"
        viewer={viewerOf(c, deps.mode)}
        action={`${FREEZES}/lift`}
        fields={{ id: freeze.id }}
        button={`Lift the freeze of ${freeze.prefix}`}
        back={FREEZES}
      >
        <FreezeFacts freeze={freeze} now={deps.clock.now()} />
        <p>Locks and writes under it are allowed again at once, on every instance.</p>
      </ConfirmPage>,
    )
  })

  app.post(`${FREEZES}/lift`, async (c) => {
    const id = postedForm(c).get('id') ?? ''
    noteAudit(c, { detail: { freeze_id: id.slice(0, 64) } })
    const lifted = await freezes.delete(c.var.principal, id)
    noteAudit(c, { detail: { freeze_id: lifted.id, prefix: lifted.prefix } })
    deps.sessions.flash(c, `Lifted the freeze of ${lifted.prefix}.`)
    return c.redirect(FREEZES, 303)
  })

  return app
}

async function listPage(
  c: Context<AppEnv>,
  deps: DashboardDeps,
  draft: { prefix: string; reason: string },
  error?: string,
) {
  const freezes = await deps.core.freezes.list(c.var.principal)
  const now = deps.clock.now()
  return (
    <Page title="Freezes" section="freezes" viewer={viewerOf(c, deps.mode)}>
      <h1>Freezes</h1>
      <Notice {...flashed(c)} />
      <Notice text={error} error />
      <p class="muted">
        A freeze refuses every lock and write under a prefix, on every way in, until it is lifted:
        before a migration, during a release.
      </p>
      <section aria-labelledby="in-force">
        <h2 id="in-force">In force</h2>
        {freezes.length === 0 ? (
          <p class="muted">Nothing is frozen.</p>
        ) : (
          <DataTable
            caption="Freezes in force, oldest first"
            columns={['Prefix', 'Reason', 'By', 'Since (UTC)', { label: 'Actions', skip: true }]}
          >
            {freezes.map((freeze) => (
              <tr>
                <td data-label="Prefix" class="mono">
                  {freeze.prefix}
                </td>
                <td data-label="Reason">{freeze.reason}</td>
                <td data-label="By">{freeze.by}</td>
                <td data-label="Since">
                  <At iso={freeze.created} now={now} />
                </td>
                <td data-label="Actions">
                  <a
                    class="button secondary"
                    href={`${FREEZES}/lift?${new URLSearchParams({ id: freeze.id }).toString()}`}
                  >
                    Lift {freeze.prefix}
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <section aria-labelledby="freeze">
        <h2 id="freeze">Freeze a prefix</h2>
        <form class="filters" method="get" action={`${FREEZES}/new`}>
          <label>
            <span>
              Prefix (<code>*</code>, <code>team/*</code> or one unit)
            </span>
            <input name="prefix" required value={draft.prefix} placeholder="prod/*" />
          </label>
          <label>
            Reason, shown to everyone refused
            <input
              name="reason"
              required
              maxlength={500}
              value={draft.reason}
              placeholder="release 2026.12 in progress"
            />
          </label>
          <button type="submit">Freeze…</button>
        </form>
      </section>
    </Page>
  )
}

function FreezeFacts({ freeze, now }: { freeze: Freeze; now: number }) {
  return (
    <dl class="facts">
      <dt>Prefix</dt>
      <dd class="mono">{freeze.prefix}</dd>
      <dt>Reason</dt>
      <dd>{freeze.reason}</dd>
      <dt>By</dt>
      <dd>{freeze.by}</dd>
      <dt>Since</dt>
      <dd>
        <At iso={freeze.created} now={now} />
      </dd>
    </dl>
  )
}
