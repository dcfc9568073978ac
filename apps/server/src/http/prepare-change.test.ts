import type { Core } from '@cairn/core'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from './app-env'
import { prepareChange } from './prepare-change'

/** How many times a request made the prefetch begin, through the middleware alone. */
async function prefetches(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  authDisabled = false,
): Promise<number> {
  let begun = 0
  const core = { prepareChange: () => (begun += 1) } as unknown as Core
  const app = new Hono<AppEnv>()
  app.use(prepareChange(core, authDisabled))
  app.all('*', (c) => c.body(null, 204))
  const answer = await app.request(path, { method, headers })
  expect(answer.status).toBe(204)
  return begun
}

const AUTHORIZED = { Authorization: 'Bearer cairn_x' }

describe('the prefetch of a change', () => {
  it.each([
    ['a lock with a token', 'POST', '/v1/units/team/a/lock', AUTHORIZED],
    ["the http backend's LOCK with a password", 'LOCK', '/v1/backend/team/a', AUTHORIZED],
    ['a workspace lock', 'POST', '/tfe/api/v2/workspaces/ws-a/actions/lock', AUTHORIZED],
    ['a signed state upload', 'PUT', '/tfe/api/v2/state-versions/sv-p-1/upload/9/sig', {}],
    ['a presigned S3 PUT', 'PUT', '/s3/bucket/key?X-Amz-Signature=abc', {}],
  ])('begins for %s', async (_what, method, path, headers) => {
    expect(await prefetches(method, path, headers)).toBe(1)
  })

  it.each([
    ['a lock from nobody', 'POST', '/v1/units/team/a/lock', {}],
    ['an S3 PUT from nobody', 'PUT', '/s3/bucket/key', {}],
    ['a read', 'GET', '/v1/units/team/a', AUTHORIZED],
    ['the JSON form of a state', 'PUT', '/tfe/api/v2/state-versions/sv-p-1/json-upload/9/s', {}],
    ['a request that changes no unit', 'POST', '/v1/auth/tokens', AUTHORIZED],
  ])('does not begin for %s', async (_what, method, path, headers) => {
    expect(await prefetches(method, path, headers)).toBe(0)
  })

  it('begins for a request from nobody when authentication is off', async () => {
    expect(await prefetches('POST', '/v1/units/team/a/lock', {}, true)).toBe(1)
  })
})
