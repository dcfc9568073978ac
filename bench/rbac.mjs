// Measures what role-based access control costs: the same requests to two servers in local mode
// on the `fs` store, one with RBAC off (the baseline) and one with it on, holding the same units and
// the same access policy, in the same run. See bench/README.md.
//
//   npm run bench:rbac [-- --units 10000 --rounds 31 --concurrency 32 --no-build]
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails or a listing
// returns other units than the policy says it must, 2 on bad flags.
import { Buffer } from 'node:buffer'
import { readFile } from 'node:fs/promises'
import { arch, availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  pool,
  request,
  runBench,
  startServer,
  parseStoreFlags,
  STORE_PREFIXES as PREFIXES,
  team,
  unitName,
} from './processes.mjs'

const USAGE = `usage: npm run bench:rbac [-- options]   (or node bench/rbac.mjs [options])

  --units N         units in each store, spread over 100 prefixes (default 10000)
  --rounds N        measured requests (or page walks) per figure and server (default 31)
  --concurrency N   requests in flight while creating the units (default 32)
  --no-build        use apps/server/dist as it is instead of building first
  -h, --help        print this
`

// ---------------------------------------------------------------------------------------------
// The store and the policy

/** The prefix the narrow token may read, and the units whose reads and writes are measured. */
const SCOPE_TEAM = 7
const SCOPE = `${team(SCOPE_TEAM)}/*`
const READ_UNIT = unitName(SCOPE_TEAM)
const WRITE_UNIT = unitName(42)
/** Units given a small state before measuring, beside the two above. */
const STATEFUL = [0, 1, 2, 3, 4, 5, 6, SCOPE_TEAM, 42, 99]

/**
 * A policy such as a team of teams keeps: 49 assignments of `reader`, `writer` and `admin` to users
 * and groups, on prefixes spread over the store and on single units, then the measured caller's
 * `reader` on its prefix (last, where a scan of the list finds it latest).
 */
function assignments() {
  const roles = ['reader', 'writer', 'reader', 'admin', 'writer', 'reader', 'outputs-reader']
  const list = []
  for (let k = 0; k < 49; k += 1) {
    const principal = k % 3 === 0 ? `group:${team((k * 2) % PREFIXES)}` : `user:dev-${k}`
    const scope = k % 5 === 4 ? unitName(k) : `${team((k * 2 + 1) % PREFIXES)}/*`
    list.push({ principal, role: roles[k % roles.length], scope })
  }
  list.push({ principal: 'user:local-admin', role: 'reader', scope: SCOPE })
  return list
}

/** A small Terraform state. */
function state(serial) {
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

// ---------------------------------------------------------------------------------------------
// Requests

/** A request as `token`, with a JSON body when there is one. */
function requestAs(server, token, method, path, { body, expect = 200 } = {}) {
  return request(server, method, path, {
    body,
    expect,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  })
}

/** Every page of a listing (`path` holds the other query parameters): its units and pages. */
async function walk(server, token, path) {
  const ids = []
  let pages = 0
  let cursor = null
  do {
    const query = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const page = await requestAs(server, token, 'GET', `${path}${query}`)
    pages += 1
    for (const unit of page.units) ids.push(unit.id)
    cursor = page.next_cursor
  } while (cursor !== null)
  return { ids, pages }
}

/**
 * `rounds` timings of `job(server, round)` on each server, alternating (off on off on), so that
 * whatever the machine does meanwhile falls on both. Keeps what the last call of each returned.
 */
async function alternate(rounds, servers, job) {
  const times = servers.map(() => [])
  const last = servers.map(() => undefined)
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, server] of servers.entries()) {
      const start = performance.now()
      last[index] = await job(server, round)
      times[index].push(performance.now() - start)
    }
  }
  return { times, last }
}

// ---------------------------------------------------------------------------------------------
// The servers

/** Starts a server in local mode (RBAC on or off) and reads the admin token it made. */
async function startLocal(label, rbac) {
  const dataDir = await makeTemporaryDir(`cairn-bench-rbac-${rbac ? 'on' : 'off'}-`)
  const args = cairnArgs(dataDir).filter((arg) => arg !== '-auth-disable')
  const server = await startServer(label, rbac ? [...args, '-rbac'] : args)
  server.admin = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
  return server
}

/** The same units, states, policy and narrow token on a server, each through the API. */
async function populate(server, flags) {
  const start = performance.now()
  await pool(flags.units, flags.concurrency, (index) =>
    requestAs(server, server.admin, 'POST', '/v1/units', {
      body: JSON.stringify({ id: unitName(index) }),
      expect: 201,
    }),
  )
  for (const index of STATEFUL) {
    await requestAs(server, server.admin, 'PUT', `/v1/backend/${unitName(index)}`, {
      body: state(1),
    })
  }
  for (const assignment of assignments()) {
    await requestAs(server, server.admin, 'POST', '/v1/rbac/assignments', {
      body: JSON.stringify(assignment),
      expect: 201,
    })
  }
  const created = await requestAs(server, server.admin, 'POST', '/v1/auth/tokens', {
    body: JSON.stringify({ name: 'bench-reader', scope: SCOPE, role: 'reader' }),
    expect: 201,
  })
  server.narrow = created.token
  return performance.now() - start
}

// ---------------------------------------------------------------------------------------------
// The measurements

async function measure(servers, flags) {
  const [off, on] = servers
  const { units, rounds } = flags
  const inScope = Math.ceil((units - SCOPE_TEAM) / PREFIXES)

  // RBAC is really on where it should be: the narrow token is refused outside its prefix there,
  // and (its bounds kept but not applied) let through with RBAC off.
  const outside = `/v1/units/${unitName(SCOPE_TEAM + 1)}`
  await requestAs(off, off.narrow, 'GET', outside)
  await requestAs(on, on.narrow, 'GET', outside, { expect: 403 })

  const figures = []
  const figure = async (name, what, job, check) => {
    process.stderr.write(`bench: ${name}\n`)
    // One round first, not counted, so that no figure carries a first request's cold caches.
    for (const server of servers) await job(server, -1)
    const { times, last } = await alternate(rounds, servers, job)
    const row = { name, what, off: times[0], on: times[1] }
    if (check !== undefined) Object.assign(row, check(last))
    figures.push(row)
  }

  await figure('unit one', 'GET /v1/units/{id}, admin', (server) =>
    requestAs(server, server.admin, 'GET', `/v1/units/${READ_UNIT}`),
  )
  await figure('list page', 'GET /v1/units?limit=1000, admin, one page', (server) =>
    requestAs(server, server.admin, 'GET', '/v1/units?limit=1000'),
  )
  await figure(
    'list narrow',
    `every page of GET /v1/units?limit=1000, token limited to reader on ${SCOPE}`,
    (server) => walk(server, server.narrow, '/v1/units?limit=1000'),
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
    (server) => walk(server, server.narrow, `/v1/status?prefix=${team(SCOPE_TEAM)}/&limit=1000`),
    (seen) => {
      for (const [index, { ids }] of seen.entries()) {
        if (ids.length !== inScope) {
          throw new BenchError(
            `${servers[index].label}: /v1/status listed ${ids.length} of ${inScope}`,
          )
        }
      }
      return { returned: seen.map(({ ids }) => ids.length), pages: seen.map(({ pages }) => pages) }
    },
  )
  await figure(
    'state PUT',
    `PUT /v1/backend/{id} of a ${Buffer.byteLength(state(rounds + 3))}-byte state, admin`,
    (server, round) =>
      requestAs(server, server.admin, 'PUT', `/v1/backend/${WRITE_UNIT}`, {
        body: state(round + 3),
      }),
  )
  return figures
}

// ---------------------------------------------------------------------------------------------
// Report

/** The nearest-rank percentile `p` (0 to 100) of a list of numbers. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]
}

const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2))
const pad = (text, width) => String(text).padStart(width)

function report(figures, flags, buildMs) {
  const lines = [
    '',
    `rbac: node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, fs store in ${tmpdir()}`,
    `${flags.units} units over ${PREFIXES} prefixes, ${assignments().length} assignments; medians and p90 of ${flags.rounds} rounds, RBAC off and on alternating`,
    '',
    `${'figure'.padEnd(15)}${pad('off', 10)}${pad('on', 10)}${pad('on/off', 8)}${pad('off p90', 10)}${pad('on p90', 10)}${pad('units off/on', 14)}${pad('pages', 8)}`,
  ]
  for (const row of figures) {
    const off = median(row.off)
    const on = median(row.on)
    lines.push(
      `${row.name.padEnd(15)}${pad(`${ms(off)} ms`, 10)}${pad(`${ms(on)} ms`, 10)}${pad((on / off).toFixed(2), 8)}${pad(`${ms(percentile(row.off, 90))} ms`, 10)}${pad(`${ms(percentile(row.on, 90))} ms`, 10)}${pad(row.returned === undefined ? '' : row.returned.join('/'), 14)}${pad(row.pages === undefined ? '' : row.pages.join('/'), 8)}`,
    )
  }
  lines.push('')
  for (const row of figures) lines.push(`${row.name}: ${row.what}`)
  lines.push(
    'off: the baseline, the same store and policy with RBAC off; on: with -rbac.',
    `setup: ${flags.units} units created ${flags.concurrency} at a time, ${(buildMs[0] / 1000).toFixed(1)} s (off) and ${(buildMs[1] / 1000).toFixed(1)} s (on).`,
    '',
  )
  process.stdout.write(lines.join('\n'))
}

await runBench(parseStoreFlags(USAGE), async (flags) => {
  const servers = [await startLocal('RBAC off', false), await startLocal('RBAC on', true)]
  process.stderr.write(`bench: creating ${flags.units} units on each server\n`)
  const buildMs = await Promise.all(servers.map((server) => populate(server, flags)))
  report(await measure(servers, flags), flags, buildMs)
})
