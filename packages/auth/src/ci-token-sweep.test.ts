import { describe, expect, it } from 'vitest'
import { setup } from '../test/fixtures'
import { LOCAL_ISSUER, TRUST_POLICY_ISSUER } from './identity'

describe("the sweep of CI jobs' expired tokens", () => {
  it("deletes a trust policy principal's tokens an hour past their expiry, and no one else's", async () => {
    const { auth, clock } = await setup({ acceptLocal: true })
    const job = { subject: 'policy:deploy', issuer: TRUST_POLICY_ISSUER, groups: [], roles: [] }
    const person = { subject: 'alice', issuer: LOCAL_ISSUER, groups: [], roles: [] }
    const limit = { role: 'writer', scope: 'team/*' }
    const short = await auth.createApiToken(job, 'ci deploy', { expiresInSeconds: 60, limit })
    const long = await auth.createApiToken(job, 'ci deploy', { expiresInSeconds: 86_400, limit })
    const hers = await auth.createApiToken(person, 'laptop', { expiresInSeconds: 60 })
    const names = async () => (await auth.apiTokens.list(undefined)).map((token) => token.id).sort()

    expect(await auth.sweepExpiredCiTokens()).toBe(0)
    clock.advance(30 * 60_000)
    // Expired, but within the hour of grace.
    expect(await auth.sweepExpiredCiTokens()).toBe(0)
    clock.advance(60 * 60_000)
    expect(await auth.sweepExpiredCiTokens()).toBe(1)
    expect(await names()).toEqual([long.id, hers.id].sort())
    expect(await names()).not.toContain(short.id)
    await expect(auth.authenticate(short.token)).rejects.toThrow()
    expect((await auth.authenticate(long.token)).subject).toBe('policy:deploy')
  })
})
