import {
  demand,
  LockConflictError,
  MAX_UNLOCK_REASON_LENGTH,
  parseUnitId,
  UnitFrozenError,
} from '@cairn/core'
import { Hono } from 'hono'
import { noteAudit, noteUnlock } from '../../audit/audit-trail'
import type { AppEnv } from '../../http/app-env'
import { postedForm } from '../posted-form'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, CsrfField, Notice, Page, size, unitHref } from '../view/layout'
import { unitIdOf } from './unit-query'
import { LockFacts } from './unit-sections'
import { Provenance } from './unit-versions'

/**
 * The two destructive actions of a unit's page, each a confirmation page whose form posts the
 * action: forcing its lock open (`unit:manage`) and restoring an earlier version (`unit:write`).
 */
export function unitActionRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const { core } = deps
  const app = new Hono<AppEnv>()

  app.get('/app/unit/unlock', async (c) => {
    const id = unitIdOf(c)
    // A confirmation page is not shown to someone who could not confirm: the post would fail.
    await demand(deps.core.authorizer, c.var.principal, 'unit:manage', id)
    const unit = await core.units.get(c.var.principal, id)
    const lock = unit.locked ? unit.lock : null
    return c.html(
      <Page title={`Force unlock ${id}`} section="units" viewer={viewerOf(c, deps.mode)}>
        <h1>Force unlock {id}</h1>
        {lock === null ? (
          <p>This unit is not locked: there is nothing to unlock.</p>
        ) : (
          <>
            <p>
              Forcing the lock open lets anyone write the unit while its holder may still be
              running. The unlock is kept in the unit's history, with your reason.
            </p>
            <LockFacts lock={lock} now={deps.clock.now()} />
            <form method="post" action="/app/unit/unlock">
              <CsrfField csrf={c.var.session.csrf} />
              <input type="hidden" name="id" value={id} />
              <input type="hidden" name="lock" value={lock.ID} />
              <p>
                <label>
                  Reason (optional)
                  <input name="reason" maxlength={MAX_UNLOCK_REASON_LENGTH} size={60} />
                </label>
              </p>
              <button class="danger" type="submit">
                Force unlock
              </button>
            </form>
          </>
        )}
        <p>
          <a href={unitHref(id)}>Back to {id}</a>
        </p>
      </Page>,
    )
  })

  app.post('/app/unit/unlock', async (c) => {
    const form = postedForm(c)
    const id = parseUnitId(form.get('id') ?? '')
    const shown = form.get('lock') ?? ''
    const reason = (form.get('reason') ?? '').trim()
    noteAudit(c, { unit: id, ...(reason === '' ? {} : { detail: { reason } }) })
    // The confirmation named one lock: if another has been taken since, it is not forced blindly.
    // Core releases only the lock named, in the same conditional write that releases it, and
    // records a forced unlock whoever holds it. Sources name the protocols; the dashboard calls
    // the same services as the API, so the unit's history records a forced unlock from here as
    // one through `api`.
    let released
    try {
      released = await core.locks.unlock(c.var.principal, id, {
        source: 'api',
        force: true,
        ...(shown === '' ? {} : { lockId: shown }),
        ...(reason === '' ? {} : { reason }),
      })
    } catch (refusal) {
      if (!(refusal instanceof LockConflictError) || refusal.lock === null) throw refusal
      const { lock } = refusal
      const holder = lock.Who === '' ? '' : `, ${lock.Who}`
      const error = `Not unlocked: another lock (${lock.ID}${holder}) was taken since; look at it first`
      deps.sessions.flash(c, error, { error: true })
      return c.redirect(unitHref(id), 303)
    }
    noteUnlock(c, released)
    const done =
      released === null
        ? `${id} was not locked`
        : `Unlocked ${id} (lock ${released.ID}${released.Who === '' ? '' : ` held by ${released.Who}`})`
    deps.sessions.flash(c, done)
    return c.redirect(unitHref(id), 303)
  })

  app.get('/app/unit/restore', async (c) => {
    const id = unitIdOf(c)
    await demand(deps.core.authorizer, c.var.principal, 'unit:write', id)
    const timestamp = queryOf(c, 'version') ?? ''
    const [version, unit] = await Promise.all([
      core.versions.version(c.var.principal, id, timestamp),
      core.units.get(c.var.principal, id),
    ])
    const now = deps.clock.now()
    const lock = unit.locked ? unit.lock : null
    return c.html(
      <Page title={`Restore ${id}`} section="units" viewer={viewerOf(c, deps.mode)}>
        <h1>Restore a version of {id}</h1>
        {lock === null ? null : (
          <Notice
            error
            text={`The unit is locked by ${lock.Who === '' ? `lock ${lock.ID}` : lock.Who}: a restore is refused until the lock is released.`}
          />
        )}
        <p>
          Restoring writes a new version of {id} with the content of this one (its serial moved past
          the current one, so the next plan accepts it). The current version stays in the history
          and can be restored in turn.
        </p>
        <dl class="facts">
          <dt>Written</dt>
          <dd>
            <Ago iso={version.timestamp} now={now} /> <span class="mono">{version.timestamp}</span>
          </dd>
          <dt>Serial</dt>
          <dd>{version.serial ?? '—'}</dd>
          <dt>Author</dt>
          <dd>{version.author}</dd>
          <dt>Source</dt>
          <dd>
            {version.source}
            <Provenance version={version} />
          </dd>
          <dt>Size</dt>
          <dd>{size(version.size)}</dd>
        </dl>
        <form method="post" action="/app/unit/restore">
          <CsrfField csrf={c.var.session.csrf} />
          <input type="hidden" name="id" value={id} />
          <input type="hidden" name="version" value={version.timestamp} />
          <p>
            <button class="danger" type="submit">
              Restore this version
            </button>
          </p>
        </form>
        <p>
          <a href={unitHref(id)}>Back to {id}</a>
        </p>
      </Page>,
    )
  })

  app.post('/app/unit/restore', async (c) => {
    const form = postedForm(c)
    const id = parseUnitId(form.get('id') ?? '')
    const timestamp = form.get('version') ?? ''
    noteAudit(c, { unit: id, detail: { from: timestamp } })
    try {
      const version = await core.states.restore(c.var.principal, id, { timestamp })
      noteAudit(c, { version: version.timestamp })
      deps.sessions.flash(c, `Restored the version of ${timestamp} as version ${version.timestamp}`)
      return c.redirect(unitHref(id), 303)
    } catch (error) {
      // Someone else's lock or a freeze is a state of the unit, told on its page, not a failure.
      if (!(error instanceof LockConflictError || error instanceof UnitFrozenError)) throw error
      // Answered with a redirect like a success: the record says it was refused, and why.
      noteAudit(c, { detail: { from: timestamp, refused: error.code } })
      deps.sessions.flash(c, `Not restored: ${error.message}`, { error: true })
      return c.redirect(unitHref(id), 303)
    }
  })

  return app
}
