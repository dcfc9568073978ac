import {
  ForbiddenError,
  InvalidStateError,
  StateNotFoundError,
  type Core,
  type Principal,
  type UnitId,
} from '@cairn/core'
import type { HeldLockView } from '@cairn/contract'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { flashed, may, queryOf, viewerOf, type DashboardDeps } from '../context'
import { At, Notice, Page, size, StatusDot, TagLinks } from '../view/layout'
import { AUDIT } from './audit'
import { unitActionRoutes } from './unit-actions'
import { unitDiffRoutes } from './unit-diff'
import { unitIdOf } from './unit-query'
import {
  DependenciesPanel,
  LockPanel,
  OutputsPanel,
  type Downstream,
  type ShownOutputs,
} from './unit-sections'
import { runRoutes, RunsPanel, unitRuns } from './runs'
import { VersionsPanel } from './unit-versions'

/** Versions per page of a unit's history. */
const VERSIONS_PAGE = 20

/**
 * A unit's page (metadata, lock, outputs, versions, dependencies) and what can be done from it:
 * force-unlock and restore, each behind a confirmation page, and the diff of two versions.
 */
export function unitRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/unit', async (c) => {
    const id = unitIdOf(c)
    const { core } = deps
    const principal = c.var.principal
    const vcursor = queryOf(c, 'vcursor')
    const [unit, versions, status, outputs, canManage, canWrite, runs] = await Promise.all([
      core.units.get(principal, id),
      core.versions.list(principal, id, {
        limit: VERSIONS_PAGE,
        ...(vcursor === undefined ? {} : { cursor: vcursor }),
      }),
      core.dependencies.status(principal, id),
      outputsOf(core, principal, id),
      may(c, core, 'unit:manage', id),
      may(c, core, 'unit:write', id),
      unitRuns(deps, c, id),
    ])
    const [held, downstream] = await Promise.all([
      heldLock(core, principal, id, unit.lock?.ID),
      downstreamOf(core, principal, id),
    ])
    const now = deps.clock.now()
    const viewer = viewerOf(c, deps.mode)
    // Only the first page of versions starts with the current one.
    const current = vcursor === undefined ? versions.items[0]?.timestamp : undefined
    return c.html(
      <Page title={id} section="units" viewer={viewer}>
        <p class="muted">
          <a href="/app/units">Units</a> /
        </p>
        <h1>{id}</h1>
        <Notice {...flashed(c)} />
        <div class="grid">
          <section class="panel" aria-labelledby="about">
            <h2 id="about">About</h2>
            <dl class="facts">
              <dt>ID</dt>
              <dd class="mono">{unit.id}</dd>
              <dt>Status</dt>
              <dd>
                <StatusDot status={status.status} />
              </dd>
              <dt>Created</dt>
              <dd>
                <At iso={unit.created} now={now} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <At iso={unit.updated} now={now} />
              </dd>
              <dt>Size</dt>
              <dd>{unit.version_count === 0 ? '—' : size(unit.size)}</dd>
              <dt>Serial</dt>
              <dd>{unit.serial ?? '—'}</dd>
              <dt>Lineage</dt>
              <dd class="mono">{unit.lineage ?? '—'}</dd>
              {unit.encrypted === 'client' ? (
                <>
                  <dt>Encryption</dt>
                  <dd>
                    <span class="badge">client-encrypted</span>{' '}
                    <span class="muted">
                      OpenTofu encrypted this state: only its serial and lineage can be read here
                    </span>
                  </dd>
                </>
              ) : null}
              <dt>Versions</dt>
              <dd>{unit.version_count}</dd>
              <dt>Tags</dt>
              <dd>
                {unit.tags.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <TagLinks tags={unit.tags} />
                )}
              </dd>
            </dl>
            {canManage || viewer.administrator ? (
              <p>
                <a href={`${AUDIT}?${new URLSearchParams({ unit: id }).toString()}`}>
                  Audit trail of this unit
                </a>
              </p>
            ) : null}
          </section>
          <LockPanel unit={unit} now={now} canManage={canManage} held={held} />
        </div>
        <OutputsPanel outputs={outputs} />
        <VersionsPanel
          id={id}
          page={versions}
          current={current}
          vcursor={vcursor}
          canWrite={canWrite}
          now={now}
        />
        <DependenciesPanel id={id} status={status} now={now} downstream={downstream} />
        {runs === undefined ? null : <RunsPanel runs={runs} now={now} />}
      </Page>,
    )
  })
  app.route('/', unitActionRoutes(deps))
  app.route('/', unitDiffRoutes(deps))
  app.route('/', runRoutes(deps))
  return app
}

/**
 * The current version's outputs, or why there are none to show: a unit without state, or a
 * person who may read the unit's metadata but not its outputs, sees the page without them.
 */
async function outputsOf(core: Core, principal: Principal, id: UnitId): Promise<ShownOutputs> {
  try {
    return (await core.versions.outputs(principal, id)).outputs ?? 'unreadable'
  } catch (error) {
    if (error instanceof StateNotFoundError) return 'no-state'
    if (error instanceof ForbiddenError) return 'forbidden'
    // A state stored before a limit it breaks (nested too deeply): the rest of the page still is.
    if (error instanceof InvalidStateError) return 'unreadable'
    throw error
  }
}

/** Downstream units listed on a unit's page, at most this many. */
const DOWNSTREAM_SHOWN = 100

/**
 * The units that read `id`, one edge downstream, as the graph page finds them: those the person
 * may read by ID with their status, and how many more they may not.
 */
async function downstreamOf(core: Core, principal: Principal, id: UnitId): Promise<Downstream> {
  const graph = await core.dependencies.neighbourhood(principal, id, {
    depth: 1,
    limit: DOWNSTREAM_SHOWN + 1,
  })
  const below = graph.nodes.filter((node) => node.level === 1)
  return {
    units: below.flatMap((node) =>
      node.id === null ? [] : [{ id: node.id, status: node.status }],
    ),
    hidden: below.filter((node) => node.hidden).length,
    truncated: graph.truncated,
  }
}

/** The lock held on `id` as the lock listing tells it (its way in, its holder), if it still is. */
async function heldLock(
  core: Core,
  principal: Principal,
  id: UnitId,
  lockId: string | undefined,
): Promise<HeldLockView | undefined> {
  if (lockId === undefined) return undefined
  const page = await core.locks.list(principal, { prefix: id, limit: 50 })
  return page.items.find((view) => view.unit === id && view.lock.ID === lockId)
}
