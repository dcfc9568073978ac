import { describe, expect, it } from 'vitest'
import { alice, PROVIDER, setup } from '../test/fixtures'
import { LOCAL_ISSUER, type Identity } from './identity'
import { MAX_TOKEN_CHAIN } from './tokens/api-tokens'
import { TokenVerificationError } from './errors'

const localAdmin: Identity = {
  subject: 'local-admin',
  issuer: LOCAL_ISSUER,
  groups: [],
  roles: ['admin'],
}

describe('tokens minted with other tokens', () => {
  it('never outlive the API token they were minted with', async () => {
    const { auth, clock } = await setup()
    const short = await auth.createApiToken(alice, 'short', { expiresInSeconds: 60 })
    const caller = await auth.authenticate(short.token)
    const forever = await auth.createApiToken(caller, 'asked for no expiry')
    const longer = await auth.createApiToken(caller, 'asked for a day', {
      expiresInSeconds: 86_400,
    })
    const shorter = await auth.createApiToken(caller, 'asked for 10 s', { expiresInSeconds: 10 })
    expect(forever.expires).toBe(short.expires)
    expect(longer.expires).toBe(short.expires)
    expect(Date.parse(shorter.expires ?? '')).toBe(clock.now() + 10_000)
    clock.advance(61_000)
    await expect(auth.authenticate(forever.token)).rejects.toBeInstanceOf(TokenVerificationError)
    await expect(auth.authenticate(longer.token)).rejects.toBeInstanceOf(TokenVerificationError)
  })

  it('stop working when the token they were minted with is revoked', async () => {
    const { auth } = await setup()
    const parent = await auth.createApiToken(alice, 'parent')
    const child = await auth.createApiToken(await auth.authenticate(parent.token), 'child')
    const grandchild = await auth.createApiToken(await auth.authenticate(child.token), 'grand')
    await auth.revokeApiToken(alice, parent.id)
    await expect(auth.authenticate(child.token)).rejects.toBeInstanceOf(TokenVerificationError)
    await expect(auth.authenticate(grandchild.token)).rejects.toBeInstanceOf(TokenVerificationError)
  })

  it('never outrank the token they were minted with', async () => {
    const { auth } = await setup()
    const parent = await auth.createApiToken(alice, 'parent')
    const caller = await auth.authenticate(parent.token)
    const child = await auth.authenticate((await auth.createApiToken({ ...caller }, 'child')).token)
    expect(child).toMatchObject({
      subject: 'alice',
      issuer: PROVIDER,
      roles: [],
      groups: ['platform'],
    })
  })

  it(`refuse to grow a chain past ${MAX_TOKEN_CHAIN} tokens`, async () => {
    const { auth } = await setup()
    let caller: Identity = alice
    for (let depth = 0; depth < MAX_TOKEN_CHAIN; depth += 1) {
      caller = await auth.authenticate((await auth.createApiToken(caller, `t${depth}`)).token)
    }
    await expect(auth.createApiToken(caller, 'one too many')).rejects.toMatchObject({
      code: 'invalid_request',
    })
  })

  it('expire with the access token of terraform login that minted them', async () => {
    const { auth, clock } = await setup()
    const access = await auth.accessToken(alice, 60_000)
    const minted = await auth.createApiToken(await auth.authenticate(access), 'from login')
    expect(Date.parse(minted.expires ?? '')).toBeLessThanOrEqual(clock.now() + 60_000)
  })
})

describe('a spent refresh token presented again', () => {
  it('revokes the whole login: its refresh tokens, its access tokens and the API tokens minted in it', async () => {
    const { auth } = await setup()
    const first = await auth.issueFor(alice)
    const minted = await auth.createApiToken(await auth.authenticate(first.access_token), 'ci', {
      expiresInSeconds: 3600,
    })
    const second = await auth.refresh(first.refresh_token)
    expect((await auth.authenticate(minted.token)).subject).toBe('alice')
    // The thief replays the spent token: the family is revoked.
    await expect(auth.refresh(first.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
    await expect(auth.refresh(second.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
    await expect(auth.authenticate(second.access_token)).rejects.toBeInstanceOf(
      TokenVerificationError,
    )
    await expect(auth.authenticate(minted.token)).rejects.toBeInstanceOf(TokenVerificationError)
  })

  it('leaves the API tokens of other logins working', async () => {
    const { auth } = await setup()
    const stolen = await auth.issueFor(alice)
    const other = await auth.issueFor(alice)
    const kept = await auth.createApiToken(await auth.authenticate(other.access_token), 'kept')
    await auth.refresh(stolen.refresh_token)
    await expect(auth.refresh(stolen.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
    expect((await auth.authenticate(kept.token)).subject).toBe('alice')
    expect((await auth.authenticate(other.access_token)).subject).toBe('alice')
  })
})

describe('issuers', () => {
  it('keep a provider user named local-admin apart from the local administrator', async () => {
    const { auth } = await setup()
    const admins = await auth.createApiToken(localAdmin, 'local admin')
    const impostor: Identity = { subject: 'local-admin', issuer: PROVIDER, groups: [], roles: [] }
    expect(await auth.listApiTokens(impostor)).toEqual([])
    await expect(auth.revokeApiToken(impostor, admins.id)).rejects.toMatchObject({
      code: 'token_not_found',
    })
    expect((await auth.authenticate(admins.token)).issuer).toBe(LOCAL_ISSUER)
  })

  it('carry the provider in access tokens, so a login is never taken for a local identity', async () => {
    const { auth } = await setup()
    const pair = await auth.issueFor({ ...alice, subject: 'local-admin' })
    expect(await auth.authenticate(pair.access_token)).toMatchObject({
      subject: 'local-admin',
      issuer: PROVIDER,
      roles: [],
    })
  })

  it('refuse local-mode tokens where local mode is off', async () => {
    const { auth, store, clock, keys } = await setup({ acceptLocal: false })
    const admins = await auth.createApiToken(localAdmin, 'local admin')
    await expect(auth.authenticate(admins.token)).rejects.toBeInstanceOf(TokenVerificationError)
    // The same record, read by a server that accepts them (local mode, or SVC_LOCAL_ADMIN=true).
    const { AuthService } = await import('./auth-service')
    const accepting = new AuthService({
      store,
      keys,
      clock,
      issuer: 'https://cairn.example.test',
      accessTtlMs: 3_600_000,
      refreshTtlMs: 3_600_000,
      acceptLocal: true,
    })
    expect((await accepting.authenticate(admins.token)).subject).toBe('local-admin')
  })

  it('read records written before issuers were kept: the local admin stays local', async () => {
    const { auth, store } = await setup()
    const created = await auth.createApiToken(localAdmin, 'local admin')
    const bobs = await auth.createApiToken({ ...alice, subject: 'bob' }, 'bob')
    for (const id of [created.id, bobs.id]) {
      const key = `auth/api-tokens/${id}.json`
      const object = await store.get(key)
      const chunks: Uint8Array[] = []
      for await (const chunk of object?.body ?? []) chunks.push(chunk)
      const { issuer: _dropped, ...legacy } = JSON.parse(Buffer.concat(chunks).toString()) as {
        issuer: string
      }
      await store.put(key, Buffer.from(JSON.stringify(legacy)))
    }
    expect((await auth.authenticate(created.token)).issuer).toBe(LOCAL_ISSUER)
    expect((await auth.authenticate(bobs.token)).issuer).not.toBe(LOCAL_ISSUER)
  })
})

describe('a damaged token record', () => {
  it('answers storage_unavailable naming the record, never a silent refusal', async () => {
    const { auth, store } = await setup()
    const created = await auth.createApiToken(alice, 'ci')
    const key = `auth/api-tokens/${created.id}.json`
    await store.put(key, Buffer.from('{"id": "tok_'))
    await expect(auth.authenticate(created.token)).rejects.toMatchObject({
      code: 'storage_unavailable',
      message: expect.stringContaining(key) as unknown,
    })
  })
})
