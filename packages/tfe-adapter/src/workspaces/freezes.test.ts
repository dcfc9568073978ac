import { describe, expect, it } from 'vitest'
import { alice, setup, stateText } from '../../test/harness'

/** A harness with workspace team__app (unit team/app) and a freeze of team/* made by alice. */
async function frozen() {
  const h = setup()
  const workspace = await h.workspace('team__app')
  const freeze = await h.core.freezes.create(alice, { prefix: 'team/*', reason: 'release freeze' })
  return { ...h, workspace, freeze }
}

describe('a frozen workspace', () => {
  it('refuses a lock with 423 and the reason in the detail Terraform prints', async () => {
    const h = await frozen()
    const answer = await h.lock(h.workspace)
    expect(answer.status).toBe(423)
    expect(answer.error()).toEqual({
      status: '423',
      title: 'locked',
      detail: `team/app is frozen: release freeze (freeze ${h.freeze.id} by alice@example.test)`,
    })
    expect((await h.unit('team/app')).locked).toBe(false)
  })

  it('refuses a new state version with 423 before handing out upload URLs', async () => {
    const h = await frozen()
    const answer = await h.createStateVersion(h.workspace, stateText(1))
    expect(answer.status).toBe(423)
    expect(answer.error().detail).toContain('release freeze')
    expect((await h.unit('team/app')).serial).toBeNull()
  })

  it('locks again once the freeze is lifted', async () => {
    const h = await frozen()
    await h.core.freezes.delete(alice, h.freeze.id)
    expect((await h.lock(h.workspace)).status).toBe(200)
  })
})
