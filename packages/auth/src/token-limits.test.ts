import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { alice, PROVIDER, setup } from '../test/fixtures'
import { LOCAL_ISSUER, type Identity } from './identity'

const CI = { scope: 'team/app/*', role: 'writer' }

describe('API tokens limited to a role on a scope', () => {
  it('speak for their owner and carry their limit; others carry none', async () => {
    const { auth } = await setup()
    const limited = await auth.createApiToken(alice, 'ci-app', { limit: CI })
    const full = await auth.createApiToken(alice, 'laptop')
    expect(limited.limit).toEqual(CI)
    expect(await auth.authenticate(limited.token)).toMatchObject({ ...alice, limit: CI })
    expect(await auth.authenticate(full.token)).not.toHaveProperty('limit')
    const listed = await auth.listApiTokens(alice)
    expect(listed.map(({ name, limit }) => ({ name, limit }))).toEqual(
      expect.arrayContaining([
        { name: 'ci-app', limit: CI },
        { name: 'laptop', limit: null },
      ]),
    )
  })

  it('read records written before limits were kept, as tokens without one', async () => {
    const { auth, store } = await setup()
    const token = `svc_tfe_${'B'.repeat(43)}`
    const sha256 = createHash('sha256').update(token).digest('hex')
    const id = `tok_${sha256.slice(0, 24)}`
    const old = {
      id,
      name: 'old ci',
      sha256,
      subject: 'alice',
      issuer: PROVIDER,
      groups: ['platform'],
      roles: [],
      created: '2026-01-01T00:00:00.000Z',
      expires: null,
    }
    await store.put(`auth/api-tokens/${id}.json`, Buffer.from(JSON.stringify(old)))
    const identity = await auth.authenticate(token)
    expect(identity).toMatchObject({ subject: 'alice', issuer: PROVIDER })
    expect(identity).not.toHaveProperty('limit')
    expect(await auth.listApiTokens(alice)).toEqual([
      { id, name: 'old ci', subject: 'alice', created: old.created, expires: null, limit: null },
    ])
  })

  it('pass their limit to the tokens minted with them', async () => {
    const { auth } = await setup()
    const parent = await auth.authenticate(
      (await auth.createApiToken(alice, 'parent', { limit: CI })).token,
    )
    const child = await auth.createApiToken(parent, 'child')
    expect(child.limit).toEqual(CI)
    expect((await auth.authenticate(child.token)).limit).toEqual(CI)
  })

  it.each([
    ['the same limit', CI],
    ['a prefix inside its prefix', { scope: 'team/app/prod/*', role: 'writer' }],
    ['one unit inside its prefix', { scope: 'team/app/prod', role: 'writer' }],
  ])('let a limited token mint one with %s', async (_label, asked) => {
    const { auth } = await setup()
    const parent = await auth.authenticate(
      (await auth.createApiToken(alice, 'parent', { limit: CI })).token,
    )
    const child = await auth.createApiToken(parent, 'child', { limit: asked })
    expect((await auth.authenticate(child.token)).limit).toEqual(asked)
  })

  it.each([
    ['every unit', { scope: '*', role: 'writer' }, /does not cover \*/],
    ['a wider prefix', { scope: 'team/*', role: 'writer' }, /does not cover team\/\*/],
    ['a neighbouring prefix', { scope: 'team/web/*', role: 'writer' }, /does not cover/],
    ['the prefix itself as a unit', { scope: 'team/app', role: 'writer' }, /does not cover/],
    ['a look-alike prefix', { scope: 'team/app-b/x', role: 'writer' }, /does not cover/],
    ['another role', { scope: 'team/app/*', role: 'admin' }, /limited to role writer/],
    ['a lesser role', { scope: 'team/app/*', role: 'reader' }, /limited to role writer/],
  ])('refuse a limited token minting one with %s: 403 forbidden', async (_label, asked, why) => {
    const { auth } = await setup()
    const parent = await auth.authenticate(
      (await auth.createApiToken(alice, 'parent', { limit: CI })).token,
    )
    await expect(auth.createApiToken(parent, 'wider', { limit: asked })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(why) as string,
    })
    expect((await auth.listApiTokens(alice)).map((token) => token.name)).toEqual(['parent'])
  })

  it("see and revoke only themselves and what they minted, not their owner's other tokens", async () => {
    const { auth } = await setup()
    const laptop = await auth.createApiToken(alice, 'laptop')
    const created = await auth.createApiToken(alice, 'ci-app', { limit: CI })
    const ci = await auth.authenticate(created.token)
    const child = await auth.createApiToken(ci, 'ci-app job')
    expect((await auth.listApiTokens(ci)).map((token) => token.name).sort()).toEqual([
      'ci-app',
      'ci-app job',
    ])
    await expect(auth.revokeApiToken(ci, laptop.id)).rejects.toMatchObject({
      code: 'token_not_found',
    })
    expect((await auth.authenticate(laptop.token)).subject).toBe('alice')
    await auth.revokeApiToken(ci, child.id)
    expect((await auth.listApiTokens(alice)).map((token) => token.name).sort()).toEqual([
      'ci-app',
      'laptop',
    ])
  })

  it("do not make an administrator's narrower token manage everyone's tokens", async () => {
    const { auth } = await setup()
    const localAdmin: Identity = {
      subject: 'local-admin',
      issuer: LOCAL_ISSUER,
      groups: [],
      roles: ['admin'],
    }
    const bobs = await auth.createApiToken({ ...alice, subject: 'bob' }, 'bob')
    const narrow = await auth.authenticate(
      (await auth.createApiToken(localAdmin, 'ci', { limit: CI })).token,
    )
    expect((await auth.listApiTokens(narrow)).map((token) => token.id)).not.toContain(bobs.id)
    await expect(auth.revokeApiToken(narrow, bobs.id)).rejects.toMatchObject({
      code: 'token_not_found',
    })
    const everything = await auth.authenticate(
      (await auth.createApiToken(localAdmin, 'all', { limit: { scope: '*', role: 'admin' } }))
        .token,
    )
    expect((await auth.listApiTokens(everything)).map((token) => token.id)).toContain(bobs.id)
  })
})
