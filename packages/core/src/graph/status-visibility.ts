import type { UnitStatus } from '@cairn/contract'
import type { Authorizer } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import type { UnitId } from '../units/unit-id'
import { READ_CONCURRENCY } from '../units/unit-listing'

// What a caller sees of status: only the units they may read, and of the others only a count.

/**
 * The reports without what the caller may not read of other units: the red units upstream
 * that they may not read are counted (`red_upstream_hidden`) instead of named, and an edge from
 * one keeps its `from` (the caller's unit names it) but not the upstream version it waits on.
 */
export async function hideUnreadable(
  authorizer: Authorizer,
  principal: Principal,
  reports: UnitStatus[],
): Promise<UnitStatus[]> {
  const others = new Set<string>()
  for (const report of reports) {
    for (const upstream of report.red_upstream) others.add(upstream)
    for (const edge of report.edges) if (edge.since !== undefined) others.add(edge.from)
  }
  if (others.size === 0) return reports
  const hidden = new Set<string>()
  await mapLimit([...others], READ_CONCURRENCY, async (id) => {
    if (!(await authorizer.can(principal, 'unit:read', id as UnitId))) {
      hidden.add(id)
    }
  })
  if (hidden.size === 0) return reports
  return reports.map((report) => {
    const named = report.red_upstream.filter((upstream) => !hidden.has(upstream))
    const count = report.red_upstream.length - named.length
    return {
      ...report,
      edges: report.edges.map((edge) => {
        if (edge.since === undefined || !hidden.has(edge.from)) return edge
        const { since: _since, ...rest } = edge
        return rest
      }),
      red_upstream: named,
      ...(count === 0 ? {} : { red_upstream_hidden: count }),
    }
  })
}

/** The units of `ids` the caller may read, in their order. */
export async function readableUnits(
  authorizer: Authorizer,
  principal: Principal,
  ids: readonly UnitId[],
): Promise<UnitId[]> {
  const allowed = await mapLimit(ids, READ_CONCURRENCY, async (id) =>
    (await authorizer.can(principal, 'unit:read', id)) ? id : undefined,
  )
  return allowed.filter((id): id is UnitId => id !== undefined)
}
