// What role-based access control costs: the same requests to two servers in local mode on the
// `fs` store, one with RBAC off (the baseline) and one with it on, holding the same units and the
// same access policy, in the same run. See bench/README.md.
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir } from '../harness/cleanup'
import { fmtMs, fmtRatio, fmtSeconds } from '../harness/format'
import { pool, request, walkPages } from '../harness/http'
import type { RequestOptions } from '../harness/http'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import { localServerArgs, readAdminToken, startServer } from '../harness/server-process'
import type { BenchServer } from '../harness/server-process'
import { median, percentile } from '../harness/stats'
import { STORE_PREFIXES, team, unitName } from '../store/units'

const flags = {
  units: {
    kind: 'whole',
    default: 10_000,
    min: STORE_PREFIXES,
    max: 100_000,
    help: 'units in each store, spread over 100 prefixes',
  },
  rounds: {
    kind: 'whole',
    default: 31,
    min: 1,
    max: 10_000,
    help: 'measured requests (or page walks) per figure and server',
  },
  concurrency: {
    kind: 'whole',
    default: 32,
    min: 1,
    max: 256,
    help: 'requests in flight while creating the units',
  },
} as const

type Values = FlagValues<typeof flags>

/** The prefix the narrow token may read, and the units whose reads and writes are measured. */
const SCOPE_TEAM = 7
const SCOPE = `${team(SCOPE_TEAM)}/*`
const READ_UNIT = unitName(SCOPE_TEAM)
const WRITE_UNIT = unitName(42)
/** Units given a small state before measuring, beside the two above. */
const STATEFUL = [0, 1, 2, 3, 4, 5, 6, SCOPE_TEAM, 42, 99]

interface Assignment {
  readonly principal: string
  readonly role: string
  readonly scope: string
}

/**
 * A policy such as a team of teams keeps: 49 assignments of `reader`, `writer` and `admin` to users
 * and groups, on prefixes spread over the store and on single units, then the measured caller's
 * `reader` on its prefix (last, where a scan of the list finds it latest).
 */
function assignments(): Assignment[] {
  const roles = ['reader', 'writer', 'reader', 'admin', 'writer', 'reader', 'outputs-reader']
  const list: Assignment[] = []
  for (let k = 0; k < 49; k += 1) {
    const principal = k % 3 === 0 ? `group:${team((k * 2) % STORE_PREFIXES)}` : `user:dev-${k}`
    const scope = k % 5 === 4 ? unitName(k) : `${team((k * 2 + 1) % STORE_PREFIXES)}/*`
    list.push({ principal, role: roles[k % roles.length] as string, scope })
  }
  list.push({ principal: 'user:local-admin', role: 'reader', scope: SCOPE })
  return list
}

/** A small Terraform state. */
function state(serial: number): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'b2d4b0b8-7a3c-4f0e-9a57-2e3f5e1c9d10',
    outputs: { region: { value: 'eu-west-1', type: 'string' } },
    resources: [],
    check_results: null,
  })
}

interface RbacServer {
  readonly server: BenchServer
  readonly admin: string
  narrow: string
}

const as = (
  via: RbacServer,
  token: string,
  method: string,
  path: string,
  options: RequestOptions = {},
) => request(via.server, method, path, { ...options, token })

/** Starts a server in local mode (RBAC on or off) and reads the admin token it made. */
async function startLocal(label: string, rbac: boolean): Promise<RbacServer> {
  const dataDir = await makeTemporaryDir(`cairn-bench-rbac-${rbac ? 'on' : 'off'}-`)
  const server = await startServer(label, localServerArgs(dataDir, ...(rbac ? ['-rbac'] : [])))
  return { server, admin: await readAdminToken(dataDir), narrow: '' }
}

/** The same units, states, policy and narrow token on a server, each through the API. */
async function populate(via: RbacServer, values: Values): Promise<number> {
  const start = performance.now()
  await pool(values.units, values.concurrency, (index) =>
    as(via, via.admin, 'POST', '/v1/units', {
      body: JSON.stringify({ id: unitName(index) }),
      expect: 201,
    }),
  )
  for (const index of STATEFUL) {
    await as(via, via.admin, 'PUT', `/v1/backend/${unitName(index)}`, { body: state(1) })
  }
  for (const assignment of assignments()) {
    await as(via, via.admin, 'POST', '/v1/rbac/assignments', {
      body: JSON.stringify(assignment),
      expect: 201,
    })
  }
  const created = (await as(via, via.admin, 'POST', '/v1/auth/tokens', {
    body: JSON.stringify({ name: 'bench-reader', scope: SCOPE, role: 'reader' }),
    expect: 201,
  })) as { token: string }
  via.narrow = created.token
  return performance.now() - start
}

interface Row {
  readonly name: string
  readonly what: string
  readonly off: number[]
  readonly on: number[]
  readonly returned?: readonly number[]
  readonly pages?: readonly number[]
}

async function measure(servers: readonly [RbacServer, RbacServer], values: Values): Promise<Row[]> {
  const [off, on] = servers
  const { units, rounds } = values
  const inScope = Math.ceil((units - SCOPE_TEAM) / STORE_PREFIXES)

  // RBAC is really on where it should be: the narrow token is refused outside its prefix there,
  // and (its bounds kept but not applied) let through with RBAC off.
  const outside = `/v1/units/${unitName(SCOPE_TEAM + 1)}`
  await as(off, off.narrow, 'GET', outside)
  await as(on, on.narrow, 'GET', outside, { expect: 403 })

  const rows: Row[] = []
  const figure = async <T>(
    name: string,
    what: string,
    job: (via: RbacServer, round: number) => Promise<T>,
    check?: (last: [T, T]) => Pick<Row, 'returned' | 'pages'>,
  ) => {
    progress(name)
    // One round first, not counted, so that no figure carries a first request's cold caches.
    for (const via of servers) await job(via, -1)
    const times: [number[], number[]] = [[], []]
    const last: T[] = []
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, via] of servers.entries()) {
        const started = performance.now()
        last[index] = await job(via, round)
        times[index]?.push(performance.now() - started)
      }
    }
    rows.push({ name, what, off: times[0], on: times[1], ...check?.(last as [T, T]) })
  }
  const walk = (via: RbacServer, path: string) =>
    walkPages((page) => as(via, via.narrow, 'GET', page), path)

  await figure('unit one', 'GET /v1/units/{id}, admin', (via) =>
    as(via, via.admin, 'GET', `/v1/units/${READ_UNIT}`),
  )
  await figure('list page', 'GET /v1/units?limit=1000, admin, one page', (via) =>
    as(via, via.admin, 'GET', '/v1/units?limit=1000'),
  )
  await figure(
    'list narrow',
    `every page of GET /v1/units?limit=1000, token limited to reader on ${SCOPE}`,
    (via) => walk(via, '/v1/units?limit=1000'),
    ([seenOff, seenOn]) => {
      if (seenOff.ids.length !== units) {
        throw new BenchError(`RBAC off: the narrow token listed ${seenOff.ids.length} of ${units}`)
      }
      const strays = seenOn.ids.filter((id) => !id.startsWith(`${team(SCOPE_TEAM)}/`))
      if (seenOn.ids.length !== inScope || strays.length > 0) {
        throw new BenchError(
          `RBAC on: the narrow token listed ${seenOn.ids.length} units (${strays.length} outside ${SCOPE}), not the ${inScope} of its prefix`,
        )
      }
      return {
        returned: [seenOff.ids.length, seenOn.ids.length],
        pages: [seenOff.pages, seenOn.pages],
      }
    },
  )
  await figure(
    'status prefix',
    `every page of GET /v1/status?prefix=${team(SCOPE_TEAM)}/&limit=1000, narrow token`,
    (via) => walk(via, `/v1/status?prefix=${team(SCOPE_TEAM)}/&limit=1000`),
    (seen) => {
      for (const [index, { ids }] of seen.entries()) {
        if (ids.length !== inScope) {
          throw new BenchError(
            `${servers[index]?.server.label ?? ''}: /v1/status listed ${ids.length} of ${inScope}`,
          )
        }
      }
      return { returned: seen.map(({ ids }) => ids.length), pages: seen.map(({ pages }) => pages) }
    },
  )
  await figure(
    'state PUT',
    `PUT /v1/backend/{id} of a ${Buffer.byteLength(state(rounds + 3))}-byte state, admin`,
    (via, round) =>
      as(via, via.admin, 'PUT', `/v1/backend/${WRITE_UNIT}`, { body: state(round + 3) }),
  )
  return rows
}

function report(rows: readonly Row[], values: Values, buildMs: readonly number[]): BenchReport {
  const ms = (value: number) => `${fmtMs(value)} ms`
  const figures: Figure[] = rows.map((row) => ({
    figure: `${row.name}, ${values.units} units`,
    cairn: ms(median(row.on)),
    baseline: ms(median(row.off)),
    ratio: fmtRatio(median(row.on) / median(row.off)),
  }))
  return {
    title: 'Cairn RBAC benchmark: the same requests with RBAC on and off',
    facts: [
      `${values.units} units over ${STORE_PREFIXES} prefixes, ${assignments().length} assignments; medians and p90 of ${values.rounds} rounds, RBAC off and on alternating`,
    ],
    tables: [
      {
        columns: ['figure', 'off', 'on', 'on/off', 'off p90', 'on p90', 'units off/on', 'pages'],
        rows: rows.map((row) => [
          row.name,
          ms(median(row.off)),
          ms(median(row.on)),
          fmtRatio(median(row.on) / median(row.off)),
          ms(percentile(row.off, 90)),
          ms(percentile(row.on, 90)),
          row.returned?.join('/') ?? '',
          row.pages?.join('/') ?? '',
        ]),
      },
    ],
    notes: [
      ...rows.map((row) => `${row.name}: ${row.what}`),
      'off: the baseline, the same store and policy with RBAC off; on: with -rbac.',
      `setup: ${values.units} units created ${values.concurrency} at a time, ${fmtSeconds(buildMs[0] ?? Number.NaN)} (off) and ${fmtSeconds(buildMs[1] ?? Number.NaN)} (on).`,
    ],
    figures,
  }
}

export const rbac = defineBench({
  name: 'rbac',
  script: 'bench:rbac',
  summary:
    'What RBAC adds to reads, listings and writes: the same requests to two servers in the same run, RBAC off (the baseline) and on, holding the same units and policy.',
  flags,
  quick: { units: 200, rounds: 5 },
  inAll: true,
  run: async (values) => {
    const servers = [
      await startLocal('RBAC off', false),
      await startLocal('RBAC on', true),
    ] as const
    progress(`creating ${values.units} units on each server`)
    const buildMs = await Promise.all(servers.map((via) => populate(via, values)))
    return report(await measure(servers, values), values, buildMs)
  },
})
