import { ManualClock } from '@cairn/core/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setup } from '../test/fixtures'
import { startIdProvider, type IdProvider } from '../test/id-provider'
import type { Identity } from './identity'
import { OidcClient } from './oidc/oidc-client'

const CLIENT_ID = 'cairn'

let clock: ManualClock
let provider: IdProvider
let oidc: OidcClient

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2026-11-22T00:00:00Z'))
  provider = await startIdProvider(CLIENT_ID, clock)
  oidc = new OidcClient({
    issuer: provider.issuer,
    clientId: CLIENT_ID,
    skipVerify: false,
    clock,
    warn: () => undefined,
  })
})
afterEach(() => provider.close())

describe('logins reported to onLogin', () => {
  it('reports each ID token exchange once, with who logged in, and no refresh', async () => {
    const seen: Identity[] = []
    const { auth } = await setup({
      clock,
      oidc,
      onLogin: (identity) => {
        seen.push(identity)
      },
    })
    const idToken = await provider.idToken('alice', {
      email: 'alice@example.test',
      groups: ['platform'],
    })
    const { pair } = await auth.exchange(idToken)
    expect(seen).toEqual([
      {
        subject: 'alice',
        issuer: provider.issuer,
        email: 'alice@example.test',
        groups: ['platform'],
        roles: [],
      },
    ])
    await auth.refresh(pair.refresh_token)
    expect(seen).toHaveLength(1)
    await auth.exchange(await provider.idToken('bob'))
    expect(seen.map((identity) => identity.subject)).toEqual(['alice', 'bob'])
  })

  it('reports a login proven elsewhere (terraform login) through loggedIn', async () => {
    const seen: string[] = []
    const { auth } = await setup({
      clock,
      onLogin: (identity) => {
        seen.push(identity.subject)
      },
    })
    await auth.loggedIn({ subject: 'carol', issuer: provider.issuer, groups: [], roles: [] })
    expect(seen).toEqual(['carol'])
  })

  it('keeps a login working when the report fails, and warns about it', async () => {
    const warnings: { message: string; fields: Record<string, unknown> }[] = []
    const { auth } = await setup({
      clock,
      oidc,
      onLogin: () => Promise.reject(new Error('store unavailable')),
      warn: (message, fields) => {
        warnings.push({ message, fields })
      },
    })
    const { pair } = await auth.exchange(await provider.idToken('alice'))
    expect((await auth.authenticate(pair.access_token)).subject).toBe('alice')
    expect(warnings).toEqual([
      {
        message: expect.stringContaining('could not be recorded') as string,
        fields: { subject: 'alice', error: 'store unavailable' },
      },
    ])
  })
})
