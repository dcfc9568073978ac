// Measures the web dashboard's pages against the `/v1` API answering the same question, on one
// server in local mode on the `fs` store, in the same run: the units page (first page, a page deep
// in the listing, a prefix, tags), the status page and a unit's page. See bench/README.md.
//
//   npm run bench:dashboard [-- --units 10000 --rounds 31 --no-build]
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails or a page
// does not show what the store holds, 2 on bad flags.
import { readFile } from 'node:fs/promises'
import { arch, availableParallelism } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { URL, URLSearchParams } from 'node:url'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  pool,
  runBench,
  startServer,
  parseStoreFlags,
  STORE_PREFIXES as PREFIXES,
  team,
  unitName,
} from './processes.mjs'

const { fetch } = globalThis

const USAGE = `usage: npm run bench:dashboard [-- options]   (or node bench/dashboard.mjs [options])

  --units N         units in the store, spread over 100 prefixes (default 10000)
  --rounds N        measured requests per figure (default 31)
  --concurrency N   requests in flight while creating the units (default 32)
  --no-build        use apps/server/dist as it is instead of building first
  -h, --help        print this
`

/** Units the dashboard shows on a page (pages/units.tsx). */
const PAGE = 50
/** One unit in ten carries the tag `prod`. */
const tagsOf = (index) => (index % 10 === 0 ? ['prod'] : ['dev'])
/** The units of prefix 0 form a chain of dependencies, each with a state: the status page's work. */
const CHAIN = 20

const chainLength = (flags) => Math.min(CHAIN, Math.floor(flags.units / PREFIXES))

/** A small Terraform state with one output, so that dependencies have something to consume. */
function state(serial, value) {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'bench-dashboard',
    outputs: { value: { value, type: 'string' } },
    resources: [],
  })
}

async function call(server, method, path, { token, cookie, body, type, expect = 200 } = {}) {
  const headers = {}
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`
  if (cookie !== undefined) headers['Cookie'] = cookie
  if (type !== undefined) headers['Content-Type'] = type
  if (method === 'POST' && cookie !== undefined) headers['Origin'] = server.origin
  let response
  try {
    response = await fetch(`${server.origin}${path}`, {
      method,
      headers,
      body,
      redirect: 'manual',
    })
  } catch (error) {
    throw new BenchError(`${method} ${path} failed: ${error.message}${server.tail()}`)
  }
  const text = await response.text()
  if (response.status !== expect) {
    throw new BenchError(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  }
  return { text, headers: response.headers }
}

async function populate(server, flags) {
  const started = performance.now()
  await pool(flags.units, flags.concurrency, (index) =>
    call(server, 'POST', '/v1/units', {
      token: server.admin,
      type: 'application/json',
      body: JSON.stringify({ id: unitName(index), tags: tagsOf(index) }),
      expect: 201,
    }),
  )
  // A chain in prefix 0: each unit consumes the output of the one before; the first is then
  // written again, so everything downstream of it needs an apply.
  const chain = Array.from({ length: chainLength(flags) }, (_, k) => unitName(k * PREFIXES))
  for (const [k, id] of chain.entries()) {
    await call(server, 'POST', `/v1/units/${id}/upload`, {
      token: server.admin,
      type: 'application/json',
      body: state(1, `v1-${k}`),
    })
    if (k > 0) {
      await call(server, 'PUT', `/v1/units/${id}/dependencies`, {
        token: server.admin,
        type: 'application/json',
        body: JSON.stringify({ dependencies: [{ from: chain[k - 1], output: 'value' }] }),
      })
    }
  }
  await call(server, 'POST', `/v1/units/${chain[0]}/upload`, {
    token: server.admin,
    type: 'application/json',
    body: state(2, 'v2-0'),
  })
  return performance.now() - started
}

/** Signs in to the dashboard with the admin token; returns the session cookie. */
async function signIn(server) {
  const login = await call(server, 'GET', '/app/login')
  const visitor = cookieOf(login.headers)
  const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)?.[1]
  if (csrf === undefined) throw new BenchError('the sign-in page has no CSRF field')
  const form = new URLSearchParams({ csrf, token: server.admin, next: '/app/units' })
  const signedIn = await call(server, 'POST', '/app/login', {
    cookie: visitor,
    type: 'application/x-www-form-urlencoded',
    body: form.toString(),
    expect: 303,
  })
  return cookieOf(signedIn.headers)
}

function cookieOf(headers) {
  const set = headers.getSetCookie().find((line) => line.startsWith('cairn_session='))
  if (set === undefined) throw new BenchError('no session cookie was set')
  return set.split(';')[0]
}

/** Times `rounds` requests of each figure, the page and its API twin alternating. */
async function timeBoth(server, cookie, rounds, page, api, check) {
  const times = { page: [], api: [] }
  for (let round = 0; round < rounds + 1; round++) {
    const order = round % 2 === 0 ? ['page', 'api'] : ['api', 'page']
    for (const which of order) {
      const started = performance.now()
      const answer =
        which === 'page'
          ? await call(server, 'GET', page, { cookie })
          : await call(server, 'GET', api, { token: server.admin })
      const ms = performance.now() - started
      if (round === 0) check?.(which, answer.text)
      else times[which].push(ms)
    }
  }
  return times
}

/** The cursor of the page `pages` pages into the listing, by following the dashboard's links. */
async function deepCursor(server, cookie, pages) {
  let path = '/app/units'
  let cursor
  for (let k = 0; k < pages; k++) {
    const { text } = await call(server, 'GET', path, { cookie })
    const next = /href="([^"]+)" rel="next"/.exec(text)?.[1]
    if (next === undefined) throw new BenchError(`the units page ${k + 1} has no next page`)
    path = next.replaceAll('&amp;', '&')
    cursor = new URL(path, server.origin).searchParams.get('cursor')
  }
  return cursor
}

const rowsIn = (text) => (text.match(/<tr>/g) ?? []).length - 1

async function measure(server, cookie, flags) {
  const { rounds } = flags
  const figures = []
  const expectRows = (count) => (which, text) => {
    const found = which === 'page' ? rowsIn(text) : JSON.parse(text).units.length
    if (found !== count) throw new BenchError(`${which} listed ${found} units, expected ${count}`)
  }
  figures.push({
    name: 'units, first page',
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      '/app/units',
      `/v1/units?limit=${PAGE}`,
      expectRows(PAGE),
    )),
  })
  const depth = Math.floor(flags.units / PAGE / 2)
  const cursor = await deepCursor(server, cookie, depth)
  figures.push({
    name: `units, page ${depth + 1}`,
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      `/app/units?cursor=${encodeURIComponent(cursor)}`,
      `/v1/units?limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`,
      expectRows(PAGE),
    )),
  })
  const perPrefix = Math.ceil(flags.units / PREFIXES)
  figures.push({
    name: 'units, one prefix',
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      `/app/units?prefix=${team(42)}/`,
      `/v1/units?limit=${PAGE}&prefix=${team(42)}/`,
      expectRows(Math.min(PAGE, perPrefix)),
    )),
  })
  figures.push({
    name: 'units, tag prod',
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      '/app/units?tags=prod',
      `/v1/units?limit=${PAGE}&tags=prod`,
    )),
  })
  figures.push({
    name: 'status, one prefix',
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      `/app/status?prefix=${team(0)}/`,
      `/v1/status?prefix=${team(0)}/&limit=1000`,
    )),
  })
  const plain = unitName(PREFIXES + 42)
  figures.push({
    name: 'a unit, no edges',
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      `/app/unit?id=${encodeURIComponent(plain)}`,
      `/v1/units/${plain}/status`,
    )),
  })
  // The end of the chain: its status reads every unit upstream of it.
  const focus = unitName((chainLength(flags) - 1) * PREFIXES)
  figures.push({
    name: `a unit, ${chainLength(flags) - 1} deep`,
    ...(await timeBoth(
      server,
      cookie,
      rounds,
      `/app/unit?id=${encodeURIComponent(focus)}`,
      `/v1/units/${focus}/status`,
    )),
  })
  return figures
}

function report(figures, flags, buildMs) {
  const say = (line = '') => process.stdout.write(`${line}\n`)
  const p95 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]
  const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)).padStart(7)
  say('Cairn dashboard benchmark: pages against the /v1 API answering the same question')
  say(
    `node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs; fs store, local mode`,
  )
  say(
    `${flags.units.toLocaleString('en-US')} units over ${PREFIXES} prefixes (created in ${(buildMs / 1000).toFixed(1)} s), ${flags.rounds} rounds each`,
  )
  say()
  say('                          dashboard page (ms)        /v1 API (ms)')
  say('                          median      p95        median      p95     page/API')
  for (const figure of figures) {
    const page = median(figure.page)
    const api = median(figure.api)
    say(
      `  ${figure.name.padEnd(22)} ${fmt(page)}  ${fmt(p95(figure.page))}     ${fmt(api)}  ${fmt(p95(figure.api))}   ${(page / api).toFixed(2).padStart(8)}`,
    )
  }
  say()
  say('  (the API twin of a page: /v1/units with the same limit, cursor and filter; /v1/status;')
  say('   GET /v1/units/{id}/status for the unit page, which also reads the unit, its versions and')
  say('   outputs)')
}

await runBench(parseStoreFlags(USAGE), async (flags) => {
  const dataDir = await makeTemporaryDir('cairn-bench-dashboard-')
  const args = cairnArgs(dataDir).filter((arg) => arg !== '-auth-disable')
  const server = await startServer('dashboard', args)
  server.origin = `http://127.0.0.1:${server.port}`
  server.admin = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
  process.stderr.write(`bench: creating ${flags.units} units\n`)
  const buildMs = await populate(server, flags)
  const cookie = await signIn(server)
  process.stderr.write('bench: measuring\n')
  report(await measure(server, cookie, flags), flags, buildMs)
})
