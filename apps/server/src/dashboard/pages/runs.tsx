import { InvalidRequestError, RunConflictError } from '@cairn/core'
import type { Run } from '@cairn/contract'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import type { AppEnv } from '../../http/app-env'
import { HttpError } from '../../http/errors'
import { flashed, may, queryOf, viewerOf, type DashboardDeps } from '../context'
import { postedForm } from '../posted-form'
import { Ago, CsrfField, DataTable, Notice, Page, unitHref } from '../view/layout'

/** The runs a unit's page lists, newest first. */
const LISTED = 10
/** How often a run's page reloads itself while the run goes on, in seconds. */
const REFRESH_S = 2
/** The most of a run's log its page shows: the end of it. */
const SHOWN_LOG_BYTES = 256 * 1024

/** A unit's latest runs, each a link to its page, with why a queued one waits. */
export function RunsPanel({ runs, now }: { runs: readonly Run[]; now: number }) {
  return (
    <section class="panel" aria-labelledby="runs">
      <h2 id="runs">Runs</h2>
      {runs.length === 0 ? (
        <p class="muted">No runs yet. Start one with cairn run plan or cairn run apply.</p>
      ) : (
        <DataTable caption="Runs" columns={['Run', 'Operation', 'Status', 'Started', 'By', 'Why']}>
          {runs.map((run) => (
            <tr>
              <td data-label="Run">
                <a class="mono" href={runHref(run.id)}>
                  {run.id}
                </a>
              </td>
              <td data-label="Operation">{run.operation}</td>
              <td data-label="Status">
                <span class={`badge run-${run.status}`}>{run.status}</span>{' '}
                <span class="muted">{run.phase}</span>
              </td>
              <td data-label="Started">
                <Ago iso={run.created} now={now} />
              </td>
              <td data-label="By">{run.created_by}</td>
              <td data-label="Why">
                {run.queue?.reason ?? run.error ?? <span class="muted">—</span>}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  )
}

/** The runs of a unit for its page: none when runs are off. */
export async function unitRuns(deps: DashboardDeps, c: Context<AppEnv>, unit: string) {
  if (deps.runs === undefined) return undefined
  return (await deps.runs.list(c.var.principal, { unit, limit: LISTED })).runs
}

/**
 * A run's page (its facts and its log, reloading while it goes on) and, for those who may write
 * its unit, cancel and confirm, each behind a confirmation page whose form posts the action.
 */
export function runRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const runs = deps.runs
  if (runs === undefined) return app

  // The link Terraform's cloud block prints for each run (HCP Terraform's path): its page here.
  app.get('/app/:organization/:workspace/runs/:id', (c) => {
    const id = c.req.param('id')
    if (!/^run-[0-9a-z]{1,64}$/.test(id)) return c.notFound()
    return c.redirect(`/app/run?id=${id}`, 302)
  })

  app.get('/app/run', async (c) => {
    const id = runIdOf(c)
    const run = await runs.get(c.var.principal, id)
    const log = await runs.readLog(c.var.principal, id, 0)
    const canWrite = await may(c, deps.core, 'unit:write', run.unit)
    const ended = run.finished !== null
    const now = deps.clock.now()
    const text = log.bytes
      .subarray(Math.max(0, log.bytes.length - SHOWN_LOG_BYTES))
      .toString('utf8')
    return c.html(
      <Page
        title={`Run ${id}`}
        section="units"
        viewer={viewerOf(c, deps.mode)}
        refreshSeconds={ended ? undefined : REFRESH_S}
      >
        <p class="muted">
          <a href="/app/units">Units</a> / <a href={unitHref(run.unit)}>{run.unit}</a> /
        </p>
        <h1>
          {run.operation} of {run.unit}
        </h1>
        <Notice {...flashed(c)} />
        <div class="grid">
          <section class="panel" aria-labelledby="about">
            <h2 id="about">Run</h2>
            <RunFacts run={run} now={now} />
          </section>
          {canWrite && !ended ? (
            <section class="panel" aria-labelledby="actions">
              <h2 id="actions">Actions</h2>
              <p>
                {run.status === 'running' && run.phase === 'planned' ? (
                  <a class="button" href={`/app/run/confirm?id=${encodeURIComponent(id)}`}>
                    Confirm and apply
                  </a>
                ) : null}{' '}
                <a class="button danger" href={`/app/run/cancel?id=${encodeURIComponent(id)}`}>
                  Cancel
                </a>
              </p>
            </section>
          ) : null}
        </div>
        <section class="panel" aria-labelledby="log">
          <h2 id="log">Log</h2>
          {ended ? null : (
            <p class="muted">The run goes on: this page reloads every {REFRESH_S} s.</p>
          )}
          {text === '' ? <p class="muted">Nothing yet.</p> : <pre class="log">{text}</pre>}
        </section>
      </Page>,
    )
  })

  for (const action of ['cancel', 'confirm'] as const) {
    const verb = action === 'cancel' ? 'Cancel' : 'Confirm'
    app.get(`/app/run/${action}`, async (c) => {
      const id = runIdOf(c)
      const run = await runs.get(c.var.principal, id)
      if (!(await may(c, deps.core, 'unit:write', run.unit))) {
        throw new HttpError('not_found', `no run ${id}`)
      }
      return c.html(
        <Page title={`${verb} run ${id}`} section="units" viewer={viewerOf(c, deps.mode)}>
          <h1>
            {verb} the {run.operation} of {run.unit}
          </h1>
          <p>
            {action === 'cancel'
              ? run.status === 'queued'
                ? 'The run leaves the queue at once.'
                : 'Terraform is interrupted and stops as it would on Ctrl-C; what it applied so far is kept in the state. The unit is unlocked when it has stopped.'
              : `Terraform applies the plan: ${run.plan === null ? 'its changes' : `${run.plan.add} to add, ${run.plan.change} to change, ${run.plan.destroy} to destroy`}.`}
          </p>
          <RunFacts run={run} now={deps.clock.now()} />
          <form method="post" action={`/app/run/${action}`}>
            <CsrfField csrf={c.var.session.csrf} />
            <input type="hidden" name="id" value={id} />
            <button class={action === 'cancel' ? 'danger' : undefined} type="submit">
              {action === 'cancel' ? 'Cancel the run' : 'Apply'}
            </button>
          </form>
          <p>
            <a href={runHref(id)}>Back to the run</a>
          </p>
        </Page>,
      )
    })

    app.post(`/app/run/${action}`, async (c) => {
      const id = postedForm(c).get('id') ?? ''
      let done: string
      try {
        const run =
          action === 'cancel'
            ? await runs.cancel(c.var.principal, id)
            : await runs.confirm(c.var.principal, id)
        noteAudit(c, { unit: run.unit, detail: { run_id: id } })
        done =
          action === 'cancel'
            ? run.status === 'canceled'
              ? `Run ${id} canceled`
              : `Run ${id}: Terraform is being interrupted`
            : `Run ${id} confirmed: applying`
      } catch (refusal) {
        if (!(refusal instanceof RunConflictError)) throw refusal
        deps.sessions.flash(c, refusal.message, { error: true })
        return c.redirect(runHref(id), 303)
      }
      deps.sessions.flash(c, done)
      return c.redirect(runHref(id), 303)
    })
  }
  return app
}

function RunFacts({ run, now }: { run: Run; now: number }) {
  return (
    <dl class="facts">
      <dt>ID</dt>
      <dd class="mono">{run.id}</dd>
      <dt>Status</dt>
      <dd>
        <span class={`badge run-${run.status}`}>{run.status}</span>{' '}
        <span class="muted">{run.phase}</span>
      </dd>
      {run.queue === null ? null : (
        <>
          <dt>Queue</dt>
          <dd>
            #{run.queue.position}: {run.queue.reason}
          </dd>
        </>
      )}
      <dt>Created</dt>
      <dd>
        <Ago iso={run.created} now={now} /> by {run.created_by}
      </dd>
      {run.agent === null ? null : (
        <>
          <dt>Agent</dt>
          <dd>{run.agent}</dd>
        </>
      )}
      {run.plan === null ? null : (
        <>
          <dt>Plan</dt>
          <dd>
            {run.plan.add} to add, {run.plan.change} to change, {run.plan.destroy} to destroy
          </dd>
        </>
      )}
      {run.finished === null ? null : (
        <>
          <dt>Finished</dt>
          <dd>
            <Ago iso={run.finished} now={now} />
          </dd>
        </>
      )}
      {run.error === null ? null : (
        <>
          <dt>Error</dt>
          <dd>{run.error}</dd>
        </>
      )}
      {run.state_diverged ? (
        <>
          <dt>State</dt>
          <dd>the state Terraform left could not be written</dd>
        </>
      ) : null}
    </dl>
  )
}

function runHref(id: string): string {
  return `/app/run?id=${encodeURIComponent(id)}`
}

function runIdOf(c: Context<AppEnv>): string {
  const id = queryOf(c, 'id')
  if (id === undefined) throw new InvalidRequestError('id: which run')
  return id
}
