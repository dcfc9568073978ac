import { parseUnitId } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { alice, denying, JSON_API, setup, type HarnessOptions } from '../../test/harness'

const WS = 'ws-app-prod'
const UNIT = parseUnitId('app-prod')

/** A harness with workspace app-prod, unlocked. */
async function withWorkspace(options: HarnessOptions = {}) {
  const h = setup(options)
  await h.workspace('app-prod')
  const action = (name: 'unlock' | 'force-unlock', token = 'good') =>
    h.api('POST', `/workspaces/${WS}/actions/${name}`, { token })
  return {
    ...h,
    unlock: (token?: string) => action('unlock', token),
    forceUnlock: (token?: string) => action('force-unlock', token),
  }
}

describe('locking a workspace', () => {
  it('locks with 200 and a workspace document whose locked is true', async () => {
    const h = await withWorkspace()
    const answer = await h.lock(WS)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    expect(answer.one()).toMatchObject({ id: WS, type: 'workspaces', attributes: { locked: true } })
    const unit = await h.unit('app-prod')
    expect(unit.locked).toBe(true)
    expect(unit.lock).toMatchObject({ Who: 'alice@example.test', Info: 'Locked by Terraform' })
  })

  it('locks with an empty body too', async () => {
    const h = await withWorkspace()
    const answer = await h.api('POST', `/workspaces/${WS}/actions/lock`, {
      headers: { 'Content-Length': '0' },
    })
    expect(answer.status).toBe(200)
    expect(answer.one().attributes.locked).toBe(true)
  })

  it('refuses a reason longer than a lock field may be with 422, and the unit stays readable', async () => {
    const h = await withWorkspace()
    const answer = await h.api('POST', `/workspaces/${WS}/actions/lock`, {
      body: { data: { attributes: { reason: 'x'.repeat(5000) } } },
    })
    expect(answer.status).toBe(422)
    expect((await h.unit('app-prod')).locked).toBe(false)
    expect((await h.api('GET', `/workspaces/${WS}`)).status).toBe(200)
  })

  it('strips control characters from a reason before other operators see it', async () => {
    const h = await withWorkspace()
    const answer = await h.api('POST', `/workspaces/${WS}/actions/lock`, {
      body: { data: { attributes: { reason: '\u001b[2J\rdeploy' } } },
    })
    expect(answer.status).toBe(200)
    expect((await h.unit('app-prod')).lock?.Info).toBe('[2J deploy')
  })

  it.each([
    ['the holder', 'good'],
    ['another user', 'bob'],
  ])('refuses a second lock by %s with a JSON:API 409', async (_who, token) => {
    const h = await withWorkspace()
    await h.lock(WS)
    const held = (await h.unit('app-prod')).lock
    const answer = await h.lock(WS, token)
    expect(answer.status).toBe(409)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    expect(answer.error().status).toBe('409')
    expect((await h.unit('app-prod')).lock).toEqual(held)
  })

  it('grants exactly one of two concurrent locks', async () => {
    const h = await withWorkspace()
    const answers = await Promise.all([h.lock(WS), h.lock(WS, 'bob')])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
  })

  it('shows a lock taken through another protocol as locked', async () => {
    const h = await withWorkspace()
    await h.core.locks.lock(alice, UNIT, { Who: 'alice' }, { source: 'api' })
    expect((await h.api('GET', `/workspaces/${WS}`)).one().attributes.locked).toBe(true)
  })

  it('refuses to lock a unit locked through another protocol with 409', async () => {
    const h = await withWorkspace()
    await h.core.locks.lock(
      alice,
      UNIT,
      { Who: 'alice', Operation: 'OperationTypeApply' },
      { source: 'api' },
    )
    const answer = await h.lock(WS)
    expect(answer.status).toBe(409)
    expect((await h.unit('app-prod')).lock?.Operation).toBe('OperationTypeApply')
  })

  it('answers a lock of a workspace that does not exist with 404', async () => {
    const h = setup()
    expect((await h.lock('ws-missing')).status).toBe(404)
  })

  it('refuses the lock with 403 to a caller without unit:lock', async () => {
    const h = await withWorkspace({ authorizer: denying('unit:lock', 'unit:manage') })
    const answer = await h.lock(WS)
    expect(answer.status).toBe(403)
    expect((await h.unit('app-prod')).locked).toBe(false)
  })
})

describe('unlocking a workspace', () => {
  it('unlocks for the holder with 200 and locked false, after which the lock can be taken again', async () => {
    const h = await withWorkspace()
    await h.lock(WS)
    const answer = await h.unlock()
    expect(answer.status).toBe(200)
    expect(answer.one()).toMatchObject({
      id: WS,
      type: 'workspaces',
      attributes: { locked: false },
    })
    expect((await h.unit('app-prod')).locked).toBe(false)
    expect((await h.lock(WS, 'bob')).status).toBe(200)
  })

  it('refuses an unlock by another user with 409 saying who holds the lock', async () => {
    const h = await withWorkspace()
    await h.lock(WS)
    const answer = await h.unlock('bob')
    expect(answer.status).toBe(409)
    // go-tfe tells "locked by someone else" from "already unlocked" by this text.
    expect(answer.error().detail).toContain('is locked by User')
    expect((await h.unit('app-prod')).locked).toBe(true)
  })

  it('refuses to unlock a lock the same user took through another protocol', async () => {
    const h = await withWorkspace()
    await h.core.locks.lock(alice, UNIT, { Who: 'alice' }, { source: 'api' })
    const answer = await h.unlock()
    expect(answer.status).toBe(409)
    expect(answer.error().detail).toContain('is locked by')
    expect((await h.unit('app-prod')).locked).toBe(true)
  })

  it('answers an unlock of an unlocked workspace with 409 (already unlocked)', async () => {
    const h = await withWorkspace()
    const answer = await h.unlock()
    expect(answer.status).toBe(409)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    expect(answer.error().detail).not.toContain('is locked by')
  })
})

describe('force-unlocking a workspace', () => {
  it("releases another user's lock with 200 and records it in the unit's history", async () => {
    const h = await withWorkspace()
    await h.lock(WS)
    const answer = await h.forceUnlock('bob')
    expect(answer.status).toBe(200)
    expect(answer.one().attributes.locked).toBe(false)
    expect((await h.unit('app-prod')).locked).toBe(false)
    const history = await h.core.versions.history(alice, UNIT)
    expect(history.items[0]).toMatchObject({ type: 'force_unlock', actor: 'bob', source: 'cloud' })
  })

  it('releases a lock taken through another protocol', async () => {
    const h = await withWorkspace()
    await h.core.locks.lock(alice, UNIT, { Who: 'alice' }, { source: 'api' })
    expect((await h.forceUnlock()).status).toBe(200)
    expect((await h.unit('app-prod')).locked).toBe(false)
  })

  it('answers a force-unlock of an unlocked workspace with 409', async () => {
    const h = await withWorkspace()
    const answer = await h.forceUnlock()
    expect(answer.status).toBe(409)
    expect(answer.error().status).toBe('409')
  })

  it('refuses a force-unlock with 403 to a caller without unit:manage, keeping the lock', async () => {
    const h = await withWorkspace({ authorizer: denying('unit:manage') })
    expect((await h.lock(WS)).status).toBe(200)
    const answer = await h.forceUnlock()
    expect(answer.status).toBe(403)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    expect(answer.error().status).toBe('403')
    expect((await h.unit('app-prod')).locked).toBe(true)
  })
})
