import { listAllKeys, parseUnitId, type Principal } from '@cairn/core'
import { MAX_STATE_DEPTH } from '@cairn/state-scan'
import { bytesOf, terraformState } from '@cairn/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp, type InProcessOptions } from './testing/in-process'

// A state stored before the nesting limit (issue 30: one 4,000 levels deep was taken, then its
// outputs and detailed diffs answered 500 from a stack overflow), read on every surface that reads
// inside a state: each answers a clear error in its own dialect, never a 500. The refusal of such
// a write, on each surface with its real client, is in test/nesting-limit.integration.test.ts.

const ARRANGER: Principal = { subject: 'test-arranger', roles: ['admin'] }
const UNIT = 'team/deep'
const TFE = '/tfe/api/v2'

/** A Terraform state whose one output nests the document `depth` levels deep. */
function deepState(depth: number): string {
  const value = `${'['.repeat(depth - 3)}${']'.repeat(depth - 3)}`
  return `{"version":4,"serial":2,"lineage":"nesting","outputs":{"deep":{"value":${value},"type":"dynamic"}},"resources":[]}`
}

let fixture: InProcessApp | undefined

/** The app, its unit written twice, and the current version's bytes as an older server took them. */
async function withDeepState(options: InProcessOptions = {}): Promise<InProcessApp> {
  const app = await inProcessApp(options)
  fixture = app
  const stored = async () => {
    const states = new Set<string>()
    for await (const key of listAllKeys(app.store, 'units/')) {
      if (key.endsWith('.tfstate')) states.add(key)
    }
    return states
  }
  const write = (serial: number) =>
    app.core.states.write(
      ARRANGER,
      parseUnitId(UNIT),
      bytesOf(terraformState({ serial, outputs: { shallow: serial } })),
      { source: 'api', create: true },
    )
  await write(1)
  const before = await stored()
  await write(2)
  const current = [...(await stored())].find((key) => !before.has(key))
  if (current === undefined) throw new Error('no state stored')
  await app.store.put(current, bytesOf(deepState(4_000)))
  return app
}
afterEach(() => fixture?.close())

async function answer(app: InProcessApp, path: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> =
    app.adminToken === undefined ? {} : { Authorization: `Bearer ${app.adminToken}` }
  const response = await app.request(path, { headers })
  return { status: response.status, text: await response.text() }
}

describe('a state stored nested deeper than the limit', () => {
  it.each([
    ['/v1 outputs', `/v1/units/${UNIT}/outputs`],
    ['/v1 detailed diff', `/v1/units/${UNIT}/diff?detail=true`],
  ])('is refused with invalid_state naming the limit on %s', async (_, path) => {
    const { status, text } = await answer(await withDeepState(), path)
    expect(status, text).toBe(400)
    expect(JSON.parse(text)).toEqual({
      error: 'invalid_state',
      message: expect.stringContaining(`nested deeper than ${MAX_STATE_DEPTH} levels`) as string,
    })
  })

  it("is refused in JSON:API on the cloud block's output endpoints", async () => {
    // The cloud block's API always wants a token: local mode gives one.
    const app = await withDeepState({ auth: 'local' })
    const current = await answer(app, `${TFE}/workspaces/ws-team__deep/current-state-version`)
    expect(current.status, current.text).toBe(200)
    const versionId = (JSON.parse(current.text) as { data: { id: string } }).data.id
    for (const path of [
      `${TFE}/workspaces/ws-team__deep/current-state-version-outputs`,
      `${TFE}/state-versions/${versionId}/outputs`,
    ]) {
      const { status, text } = await answer(app, path)
      expect(status, `${path}: ${text}`).toBe(422)
      const errors = (JSON.parse(text) as { errors: { detail: string }[] }).errors
      expect(errors[0]?.detail, path).toContain(`nested deeper than ${MAX_STATE_DEPTH} levels`)
    }
  })

  it("leaves the dashboard's unit page served, saying the outputs cannot be read", async () => {
    const app = await withDeepState()
    const page = await answer(app, `/app/unit?id=${UNIT}`)
    expect(page.status, page.text).toBe(200)
    expect(page.text).toContain('they nest too deeply')
    const diff = await answer(app, `/app/unit/diff?id=${UNIT}&detail=1`)
    expect(diff.status, diff.text).toBe(400)
    expect(diff.text).toContain(`nested deeper than ${MAX_STATE_DEPTH} levels`)
  })

  it('is still listed and compared by what its index holds', async () => {
    const { status, text } = await answer(await withDeepState(), `/v1/units/${UNIT}/diff`)
    expect(status, text).toBe(200)
    expect(JSON.parse(text)).toMatchObject({ outputs: { changed: [{ name: 'shallow' }] } })
  })
})
