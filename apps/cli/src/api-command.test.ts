import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLIError, UsageError } from './cli-error'
import { routeRequestsThrough } from './context'
import { cairn, run, useCliHome } from './testing/in-process-cli'

/**
 * `cairn api <METHOD> <route>`, as `gh api`: an authenticated request to the chosen server, the
 * answer printed as it came (stdout is not a terminal here), exit 1 on HTTP 400 and above with
 * the body still printed. Against a local-mode server in process, logged in with its admin token.
 */

const home = useCliHome('cairn-api-command-')
let server: InProcessApp
let seen: { method: string; path: string; auth: string | null; type: string | null; body: string }[]

beforeEach(async () => {
  server = await inProcessApp({ auth: 'local' })
  seen = []
  routeRequestsThrough(async (input, init) => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    seen.push({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      auth: request.headers.get('Authorization'),
      type: request.headers.get('Content-Type'),
      body: await request.clone().text(),
    })
    return await server.app.request(request)
  })
  await cairn('login', '--token', server.adminToken ?? '')
  seen = []
})
afterEach(async () => {
  await server.close()
})

describe('cairn api', () => {
  it('sends a GET with the saved token and prints the body as it came', async () => {
    await cairn('unit', 'create', 'team/app')
    seen = []
    const out = await cairn('api', 'GET', '/v1/units/team/app')
    expect(JSON.parse(out)).toMatchObject({ id: 'team/app', locked: false })
    expect(seen).toEqual([
      {
        method: 'GET',
        path: '/v1/units/team/app',
        auth: `Bearer ${server.adminToken ?? ''}`,
        type: null,
        body: '',
      },
    ])
  })

  it('sends --field and --raw-field as a JSON body, typed as gh api -F and -f do', async () => {
    const out = await cairn(
      'api',
      'post',
      'v1/units',
      '--field',
      'id=team/db',
      '-f',
      'note=42',
      '-F',
      'count=3',
      '-F',
      'draft=true',
      '-F',
      'gone=null',
    )
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/v1/units', type: 'application/json' })
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({
      id: 'team/db',
      note: '42',
      count: 3,
      draft: true,
      gone: null,
    })
    expect(JSON.parse(out)).toMatchObject({ id: 'team/db' })
  })

  it('puts the fields of a GET in its query, and sends the headers given', async () => {
    await cairn('api', 'GET', '/v1/units?limit=5', '-F', 'prefix=team/', '-H', 'X-Request-Id: abc')
    expect(seen[0]?.path).toBe('/v1/units?limit=5&prefix=team%2F')
    const include = await cairn('api', 'GET', '/v1/units', '-i', '--header', 'X-Request-Id: abc')
    expect(include).toMatch(
      /^HTTP\/1\.1 200 OK\n(.+\n)*content-type: application\/json\n(.+\n)*\n\{/,
    )
  })

  it('sends a file as the body with --input', async () => {
    await cairn('unit', 'create', 'team/app')
    const file = join(home(), 'state.tfstate')
    const state = terraformState({ serial: 1 })
    await writeFile(file, state)
    const out = await cairn('api', 'POST', '/v1/units/team/app/upload', '--input', file)
    expect(JSON.parse(out)).toMatchObject({ serial: 1, source: 'api' })
    expect(await cairn('api', 'GET', '/v1/units/team/app/download')).toBe(state)
  })

  it('prints the body of an HTTP error and exits 1 naming the status', async () => {
    const result = await run('api', 'GET', '/v1/units/team/none')
    expect(JSON.parse(result.stdout)).toMatchObject({ error: 'unit_not_found' })
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error).toMatchObject({
      exitCode: 1,
      message: 'GET /v1/units/team/none answered HTTP 404',
    })
  })

  it('follows next_cursor with --paginate, joining the pages into one JSON value', async () => {
    for (const id of ['p/a', 'p/b', 'p/c']) await cairn('unit', 'create', id)
    seen = []
    const out = await cairn('api', 'GET', '/v1/units', '--paginate', '-F', 'limit=2')
    const joined = JSON.parse(out) as { units: { id: string }[]; next_cursor: string | null }
    expect(joined.units.map((unit) => unit.id)).toEqual(['p/a', 'p/b', 'p/c'])
    expect(joined.next_cursor).toBeNull()
    expect(seen.map((request) => request.path)).toEqual([
      '/v1/units?limit=2',
      '/v1/units?limit=2&cursor=p%2Fb',
    ])
  })

  it.each([
    [['api', 'GET', 'https://elsewhere.example/v1/units'], 'is not a path on the server'],
    [['api', 'GET', '//elsewhere.example/v1/units'], 'is not a path on the server'],
    [['api', 'G E T', '/v1/units'], 'is not an HTTP method'],
    [['api', 'POST', '/v1/units', '-F', 'novalue'], 'novalue is not a field: write key=value'],
    [['api', 'GET', '/v1/units', '-H', 'no colon'], "is not a header: write 'Name: value'"],
    [['api', 'POST', '/v1/units', '--paginate'], '--paginate follows the pages of a GET'],
  ])('refuses %j as bad usage, sending nothing', async (words, message) => {
    const result = await run(...words)
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toContain(message)
    expect(seen).toEqual([])
  })
})
