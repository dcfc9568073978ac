// API tokens and the groups of their owner, through a real OpenID provider, the real server
// process and the real AWS SDK: a token speaks with the groups of its owner's last login, not those
// of the day it was made, so someone the provider takes out of a team loses that team's units on
// every token at their next login; and an administrator removing a user ends every token, login
// and S3 credential they hold.
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import {
  idTokenThroughServer,
  startOidcProvider,
  useServer,
  type RunningProvider,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueS3Credentials, s3Client, s3ErrorOf, tfState } from './support/s3'

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access']
const UNIT = 'team-a/app'
const KEY = `${UNIT}/terraform.tfstate`
const LINEAGE = 'f3b7b0f4-3c55-4a43-9b42-5b2c1d3e4f50'

interface Pair {
  access_token: string
  refresh_token: string
}

describe('API tokens follow their owner\u2019s groups at the provider', () => {
  let idp: RunningProvider
  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: {
        root: { groups: [] },
        alice: { email: 'alice@example.test', groups: ['team-a'] },
      },
    })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
      SVC_RBAC_ENABLED: 'true',
      SVC_RBAC_ADMINS: 'user:root',
    },
  }))

  /** The whole browser login through the provider, ending with Cairn's tokens. */
  async function login(who: string): Promise<Pair> {
    const idToken = await idTokenThroughServer(server.url, who, SCOPES)
    const exchanged = await send('', 'POST', '/v1/auth/exchange', { id_token: idToken })
    expect(exchanged.status, await exchanged.clone().text()).toBe(200)
    return (await exchanged.json()) as Pair
  }

  function send(token: string, method: string, path: string, json?: unknown, body?: string) {
    return fetch(`${server.url}${path}`, {
      method,
      headers: token === '' ? {} : { Authorization: `Bearer ${token}` },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      ...(body === undefined ? {} : { body }),
    })
  }

  /** An API token minted with a login's access token. */
  async function apiToken(access: string, name: string): Promise<string> {
    const minted = await send(access, 'POST', '/v1/auth/tokens', { name })
    expect(minted.status, await minted.clone().text()).toBe(201)
    return ((await minted.json()) as { token: string }).token
  }

  let serial = 1
  /** Uploads the next serial of the unit through `/v1` with `token`; answers the status. */
  async function upload(token: string): Promise<number> {
    const answer = await send(
      token,
      'POST',
      `/v1/units/${UNIT}/upload`,
      undefined,
      tfState(serial + 1, LINEAGE),
    )
    if (answer.status === 200) serial += 1
    await answer.body?.cancel()
    return answer.status
  }

  /** Writes the next serial through `/s3` with credentials minted by `token`, with the AWS SDK. */
  async function s3Put(token: string): Promise<string> {
    const s3 = s3Client(server.url, await issueS3Credentials(server.url, token))
    const outcome = await s3ErrorOf(
      s3.send(new PutObjectCommand({ Bucket: 'tf', Key: KEY, Body: tfState(serial + 1, LINEAGE) })),
    )
    if (outcome === 'succeeded') serial += 1
    return outcome
  }

  let root: string
  beforeAll(async () => {
    root = (await login('root')).access_token
    for (const [principal, role] of [['group:team-a', 'writer']] as const) {
      const assigned = await send(root, 'POST', '/v1/rbac/assignments', {
        principal,
        role,
        scope: 'team-a/*',
      })
      expect(assigned.status, await assigned.text()).toBe(201)
    }
    expect((await send(root, 'POST', '/v1/units', { id: UNIT })).status).toBe(201)
    expect(await upload(root)).toBe(200)
  })

  it('takes team-a from alice\u2019s token once the provider takes her out of team-a and she signs in again', async () => {
    idp.setAccount('alice', { email: 'alice@example.test', groups: ['team-a'] })
    const token = await apiToken((await login('alice')).access_token, 'alice-ci')
    expect(await upload(token)).toBe(200)
    expect(await s3Put(token)).toBe('succeeded')

    idp.setAccount('alice', { email: 'alice@example.test', groups: [] })
    await login('alice')

    const me = await send(token, 'GET', '/v1/auth/me')
    expect(await me.json()).toMatchObject({ subject: 'alice', groups: [] })
    expect(await upload(token)).toBe(403)
    expect(await s3Put(token)).toBe('403 AccessDenied')

    // And back again with her next login into the group.
    idp.setAccount('alice', { email: 'alice@example.test', groups: ['team-a'] })
    await login('alice')
    expect(await upload(token)).toBe(200)
  })

  it('ends alice\u2019s tokens, logins and S3 credentials when an administrator removes her', async () => {
    idp.setAccount('alice', { email: 'alice@example.test', groups: ['team-a'] })
    const session = await login('alice')
    const token = await apiToken(session.access_token, 'alice-ci-2')
    const fromToken = s3Client(server.url, await issueS3Credentials(server.url, token))
    const fromLogin = s3Client(
      server.url,
      await issueS3Credentials(server.url, session.access_token),
    )
    const read = (client: typeof fromToken) =>
      s3ErrorOf(client.send(new GetObjectCommand({ Bucket: 'tf', Key: KEY })))
    expect(await read(fromToken)).toBe('succeeded')
    expect(await read(fromLogin)).toBe('succeeded')

    expect((await send(token, 'DELETE', '/v1/rbac/users/alice')).status).toBe(403)
    const removed = await send(root, 'DELETE', '/v1/rbac/users/alice')
    expect(removed.status, await removed.clone().text()).toBe(200)
    expect(await removed.json()).toMatchObject({ subject: 'alice', issuer: idp.issuer })

    expect((await send(token, 'GET', '/v1/auth/me')).status).toBe(401)
    expect((await send(session.access_token, 'GET', '/v1/auth/me')).status).toBe(401)
    const refreshed = await send('', 'POST', '/v1/auth/token', {
      refresh_token: session.refresh_token,
    })
    expect(refreshed.status).toBe(401)
    expect(await read(fromToken)).toBe('400 InvalidToken')
    expect(await read(fromLogin)).toBe('400 InvalidToken')
    const users = await send(root, 'GET', '/v1/rbac/users')
    expect(
      ((await users.json()) as { users: { subject: string }[] }).users.map((u) => u.subject),
    ).toEqual(['root'])
  })
})
