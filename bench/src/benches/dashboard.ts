// The web dashboard's pages against the `/v1` request that answers the same question, on one
// server in local mode on the `fs` store, in the same run: the units page (first page, a page deep
// in the listing, a prefix, a tag), the status page and a unit's page. See bench/README.md.
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir } from '../harness/cleanup'
import { fmtInt, fmtMs, fmtRatio, fmtSeconds } from '../harness/format'
import { pool } from '../harness/http'
import { progress } from '../harness/progress'
import type { BenchReport } from '../harness/report'
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
    help: 'units in the store, spread over 100 prefixes',
  },
  rounds: { kind: 'whole', default: 31, min: 1, max: 10_000, help: 'measured requests per figure' },
  concurrency: {
    kind: 'whole',
    default: 32,
    min: 1,
    max: 256,
    help: 'requests in flight while creating the units',
  },
} as const

type Values = FlagValues<typeof flags>

/** Units the dashboard shows on a page (pages/units.tsx). */
const PAGE = 50
/** One unit in ten carries the tag `prod`. */
const tagsOf = (index: number) => (index % 10 === 0 ? ['prod'] : ['dev'])
/** The units of prefix 0 form a chain of dependencies, each with a state: the status page's work. */
const CHAIN = 20

const chainLength = (values: Values) => Math.min(CHAIN, Math.floor(values.units / STORE_PREFIXES))

/** A small Terraform state with one output, so that dependencies have something to consume. */
function state(serial: number, value: string): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'bench-dashboard',
    outputs: { value: { value, type: 'string' } },
    resources: [],
  })
}

interface CallOptions {
  readonly token?: string
  readonly cookie?: string
  readonly body?: string
  readonly type?: string
  readonly expect?: number
}

/** A request as a browser (a cookie, an Origin on a form) or an API client (a Bearer token). */
async function call(
  server: BenchServer,
  method: string,
  path: string,
  { token, cookie, body, type, expect = 200 }: CallOptions = {},
): Promise<{ text: string; headers: Headers }> {
  const headers: Record<string, string> = {}
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`
  if (cookie !== undefined) headers['Cookie'] = cookie
  if (type !== undefined) headers['Content-Type'] = type
  if (method === 'POST' && cookie !== undefined) headers['Origin'] = server.origin
  let response: Response
  try {
    response = await fetch(`${server.origin}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new BenchError(`${method} ${path} failed: ${reason}${server.tail()}`)
  }
  const text = await response.text()
  if (response.status !== expect) {
    throw new BenchError(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  }
  return { text, headers: response.headers }
}

async function populate(server: BenchServer, admin: string, values: Values): Promise<number> {
  const started = performance.now()
  const json = { token: admin, type: 'application/json' }
  await pool(values.units, values.concurrency, (index) =>
    call(server, 'POST', '/v1/units', {
      ...json,
      body: JSON.stringify({ id: unitName(index), tags: tagsOf(index) }),
      expect: 201,
    }),
  )
  // A chain in prefix 0: each unit consumes the output of the one before; the first is then
  // written again, so everything downstream of it needs an apply.
  const chain = Array.from({ length: chainLength(values) }, (_, k) => unitName(k * STORE_PREFIXES))
  for (const [k, id] of chain.entries()) {
    await call(server, 'POST', `/v1/units/${id}/upload`, { ...json, body: state(1, `v1-${k}`) })
    if (k > 0) {
      await call(server, 'PUT', `/v1/units/${id}/dependencies`, {
        ...json,
        body: JSON.stringify({ dependencies: [{ from: chain[k - 1], output: 'value' }] }),
      })
    }
  }
  await call(server, 'POST', `/v1/units/${unitName(0)}/upload`, { ...json, body: state(2, 'v2-0') })
  return performance.now() - started
}

function cookieOf(headers: Headers): string {
  const set = headers.getSetCookie().find((line) => line.startsWith('cairn_session='))
  if (set === undefined) throw new BenchError('no session cookie was set')
  return set.split(';')[0] ?? ''
}

/** Signs in to the dashboard with the admin token; returns the session cookie. */
async function signIn(server: BenchServer, admin: string): Promise<string> {
  const login = await call(server, 'GET', '/app/login')
  const visitor = cookieOf(login.headers)
  const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)?.[1]
  if (csrf === undefined) throw new BenchError('the sign-in page has no CSRF field')
  const form = new URLSearchParams({ csrf, token: admin, next: '/app/units' })
  const signedIn = await call(server, 'POST', '/app/login', {
    cookie: visitor,
    type: 'application/x-www-form-urlencoded',
    body: form.toString(),
    expect: 303,
  })
  return cookieOf(signedIn.headers)
}

type Which = 'page' | 'api'

interface Row {
  readonly name: string
  readonly page: number[]
  readonly api: number[]
}

/** The cursor of the page `pages` pages into the listing, by following the dashboard's links. */
async function deepCursor(server: BenchServer, cookie: string, pages: number): Promise<string> {
  let path = '/app/units'
  let cursor = ''
  for (let k = 0; k < pages; k++) {
    const { text } = await call(server, 'GET', path, { cookie })
    const next = /href="([^"]+)" rel="next"/.exec(text)?.[1]
    if (next === undefined) throw new BenchError(`the units page ${k + 1} has no next page`)
    path = next.replaceAll('&amp;', '&')
    cursor = new URL(path, server.origin).searchParams.get('cursor') ?? ''
  }
  return cursor
}

const rowsIn = (text: string) => (text.match(/<tr>/g) ?? []).length - 1

async function measure(
  server: BenchServer,
  admin: string,
  cookie: string,
  values: Values,
): Promise<Row[]> {
  const rows: Row[] = []
  /**
   * `rounds` requests of the page and of its API twin, alternating which goes first; an uncounted
   * first round checks what each lists.
   */
  const both = async (name: string, page: string, api: string, expected?: number) => {
    const times: Record<Which, number[]> = { page: [], api: [] }
    for (let round = 0; round < values.rounds + 1; round++) {
      const order: Which[] = round % 2 === 0 ? ['page', 'api'] : ['api', 'page']
      for (const which of order) {
        const started = performance.now()
        const answer =
          which === 'page'
            ? await call(server, 'GET', page, { cookie })
            : await call(server, 'GET', api, { token: admin })
        const ms = performance.now() - started
        if (round > 0) times[which].push(ms)
        else if (expected !== undefined) {
          const found =
            which === 'page'
              ? rowsIn(answer.text)
              : (JSON.parse(answer.text) as { units: unknown[] }).units.length
          if (found !== expected)
            throw new BenchError(`${which} ${name} listed ${found} units, expected ${expected}`)
        }
      }
    }
    rows.push({ name, ...times })
  }
  await both('units, first page', '/app/units', `/v1/units?limit=${PAGE}`, PAGE)
  const depth = Math.floor(values.units / PAGE / 2)
  const cursor = encodeURIComponent(await deepCursor(server, cookie, depth))
  await both(
    `units, page ${depth + 1}`,
    `/app/units?cursor=${cursor}`,
    `/v1/units?limit=${PAGE}&cursor=${cursor}`,
    PAGE,
  )
  const perPrefix = Math.ceil(values.units / STORE_PREFIXES)
  await both(
    'units, one prefix',
    `/app/units?prefix=${team(42)}/`,
    `/v1/units?limit=${PAGE}&prefix=${team(42)}/`,
    Math.min(PAGE, perPrefix),
  )
  await both('units, tag prod', '/app/units?tags=prod', `/v1/units?limit=${PAGE}&tags=prod`)
  await both(
    'status, one prefix',
    `/app/status?prefix=${team(0)}/`,
    `/v1/status?prefix=${team(0)}/&limit=1000`,
  )
  const plain = unitName(STORE_PREFIXES + 42)
  await both(
    'a unit, no edges',
    `/app/unit?id=${encodeURIComponent(plain)}`,
    `/v1/units/${plain}/status`,
  )
  // The end of the chain: its status reads every unit upstream of it.
  const focus = unitName((chainLength(values) - 1) * STORE_PREFIXES)
  await both(
    `a unit, ${chainLength(values) - 1} deep`,
    `/app/unit?id=${encodeURIComponent(focus)}`,
    `/v1/units/${focus}/status`,
  )
  return rows
}

function report(rows: readonly Row[], values: Values, buildMs: number): BenchReport {
  return {
    title: 'Cairn dashboard benchmark: pages against the /v1 API answering the same question',
    facts: [
      `fs store, local mode; ${fmtInt(values.units)} units over ${STORE_PREFIXES} prefixes (created in ${fmtSeconds(buildMs)}), ${values.rounds} rounds each`,
    ],
    tables: [
      {
        columns: ['figure', 'page median', 'page p95', 'API median', 'API p95', 'page/API'],
        rows: rows.map((row) => [
          row.name,
          fmtMs(median(row.page)),
          fmtMs(percentile(row.page, 95)),
          fmtMs(median(row.api)),
          fmtMs(percentile(row.api, 95)),
          fmtRatio(median(row.page) / median(row.api)),
        ]),
        notes: ['ms; the page and its API twin alternate'],
      },
    ],
    notes: [
      'The API twin of a page: /v1/units with the same limit, cursor and filter; /v1/status;',
      'GET /v1/units/{id}/status for the unit page, which also reads the unit, its versions and outputs.',
    ],
    figures: rows.map((row) => ({
      figure: `${row.name}, ms`,
      cairn: fmtMs(median(row.page)),
      baseline: fmtMs(median(row.api)),
      ratio: fmtRatio(median(row.page) / median(row.api)),
    })),
  }
}

export const dashboard = defineBench({
  name: 'dashboard',
  script: 'bench:dashboard',
  summary:
    "The web dashboard's pages against the /v1 request answering the same question, on one server in the same run, the page and its twin alternating.",
  flags,
  quick: { units: 200, rounds: 5 },
  inAll: true,
  run: async (values) => {
    const dataDir = await makeTemporaryDir('cairn-bench-dashboard-')
    const server = await startServer('dashboard', localServerArgs(dataDir))
    const admin = await readAdminToken(dataDir)
    progress(`creating ${values.units} units`)
    const buildMs = await populate(server, admin, values)
    const cookie = await signIn(server, admin)
    progress('measuring')
    return report(await measure(server, admin, cookie, values), values, buildMs)
  },
})
