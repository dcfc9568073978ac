import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  idTokenThroughServer,
  followAuthorization,
  pkcePair,
  readAdminToken,
  startOidcProvider,
  startServer,
  useRgw,
  type RunningProvider,
  type RunningServer,
  type ServerOptions,
} from '@cairn/testkit'
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  call,
  onInstance,
  parseEnvFile,
  ROOT,
  runShell,
  stateOf,
  until,
  type Answer,
} from './support/instances'
import { docsBlocks } from './support/docs-blocks'

/**
 * Several server instances over one bucket of a real Ceph RGW, as docs/deployment.md's "Running
 * several instances" runs them: every request may reach any instance, so nothing an instance
 * decides may rest on its own memory.
 */

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access']
const TFE = '/tfe/api/v2'
const JSON_API = { 'Content-Type': 'application/vnd.api+json' }
/** Store timeouts short enough that a frozen store answers 503 within seconds. */
const STORE_TIMEOUTS = { SVC_S3_REQUEST_TIMEOUT: '2s', SVC_S3_MAX_ATTEMPTS: '2' }
/** How many writes each instance makes to the one unit at once with the others. */
const WRITES_PER_INSTANCE = 4
/** A store that does not answer must not hold a request longer than this. */
const STALLED_ANSWER_MS = 15_000

interface Pair {
  access_token: string
  refresh_token: string
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/** The instance at `index`, counted round the list, so that `index + 1` is always another one. */
const at = (servers: RunningServer[], index: number): RunningServer => {
  const server = servers[index % servers.length]
  if (server === undefined) throw new Error(`no instance ${index}`)
  return server
}

describe('three instances over one S3 bucket', () => {
  const rgw = useRgw({ gateways: 3 })

  /** What every instance needs to reach the bucket through gateway `index`. */
  const storeEnv = (index: number): Record<string, string> => ({
    SVC_S3_ENDPOINT: rgw.endpoints[index % rgw.endpoints.length] as string,
    AWS_ACCESS_KEY_ID: rgw.accessKeyId,
    AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    AWS_REGION: rgw.region,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...STORE_TIMEOUTS,
  })

  /**
   * The two-step upload of Terraform's `cloud` block with its steps spread over the instances:
   * the lock on the second, the state version created on the third, the JSON upload PUT to the
   * first and the state upload to the second, then the version and its download URL read on each.
   */
  async function cloudUploadAcross(servers: RunningServer[], token: string, unit: string) {
    const workspace = `ws-${unit.replaceAll('/', '__')}`
    expect((await call(at(servers, 0), token, 'POST', '/v1/units', { id: unit })).status).toBe(201)
    const lock = await call(
      at(servers, 1),
      token,
      'POST',
      `${TFE}/workspaces/${workspace}/actions/lock`,
      { reason: 'apply' },
      JSON_API,
    )
    expect(lock.status, lock.text).toBe(200)
    const state = stateOf(1, `cloud-${unit}`)
    const created = await call(
      at(servers, 2),
      token,
      'POST',
      `${TFE}/workspaces/${workspace}/state-versions`,
      {
        data: {
          type: 'state-versions',
          attributes: { serial: 1, lineage: 'multi-instance', md5: md5(state) },
        },
      },
      JSON_API,
    )
    expect(created.status, created.text).toBe(201)
    const { id, attributes } = (created.body as { data: { id: string; attributes: Urls } }).data
    const stateUrl = attributes['hosted-state-upload-url']
    const jsonUrl = attributes['hosted-json-state-upload-url']
    // A signature of another state version's URL is refused on any instance: the check is real.
    const forged = stateUrl.replace(/[^/]+$/, 'A'.repeat(43))
    expect((await put(onInstance(forged, at(servers, 1)), state)).status).toBe(403)
    expect(
      (await put(onInstance(jsonUrl, at(servers, 0)), '{"format_version":"1.0"}')).status,
    ).toBe(200)
    expect((await put(onInstance(stateUrl, at(servers, 1)), state)).status).toBe(200)
    for (const [index, server] of servers.entries()) {
      const read = await call(server, token, 'GET', `${TFE}/state-versions/${id}`)
      expect(read.status, read.text).toBe(200)
      const version = (read.body as { data: { attributes: Record<string, unknown> } }).data
      expect(version.attributes).toMatchObject({ status: 'finalized', serial: 1, md5: md5(state) })
      // The download URL one instance gives works on the next, as on the `/v1` surface.
      const downloadUrl = onInstance(
        String(version.attributes['hosted-state-download-url']),
        at(servers, index + 1),
      )
      const downloaded = await fetch(downloadUrl, { headers: { Authorization: `Bearer ${token}` } })
      expect(await downloaded.text()).toBe(state)
      expect((await call(server, token, 'GET', `/v1/units/${unit}/download`)).text).toBe(state)
    }
    const unlock = await call(
      at(servers, 0),
      token,
      'POST',
      `${TFE}/workspaces/${workspace}/actions/unlock`,
      undefined,
      JSON_API,
    )
    expect(unlock.status, unlock.text).toBe(200)
  }

  describe('in OIDC mode with RBAC on, started with the documented commands', () => {
    let dir: string
    let idp: RunningProvider
    /** Undoes what `beforeAll` made, the latest first, even when it stopped halfway. */
    const cleanups: (() => Promise<void>)[] = []
    let publicUrl: string
    let startScript: string
    const servers: RunningServer[] = []
    /** An access token of the administrator (`SVC_RBAC_ADMINS=user:admin`). */
    let admin: string

    const startInstance = (index: number): Promise<RunningServer> => {
      const options: ServerOptions = {
        auth: true,
        shell: { script: startScript, cwd: dir },
        env: {
          ...storeEnv(index),
          SVC_AUTH_ISSUER: idp.issuer,
          SVC_AUTH_CLIENT_ID: CLIENT,
          SVC_AUTH_REDIRECT_URIS: REDIRECT,
          SVC_RBAC_ENABLED: 'true',
          SVC_RBAC_ADMINS: 'user:admin',
        },
        startTimeoutMs: 30_000,
      }
      return startServer(options)
    }

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cairn-instances-'))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      // Laid out like a checkout, whose `apps/` the start command runs.
      await symlink(join(ROOT, 'apps'), join(dir, 'apps'))
      // A directory of its own stands for /etc/cairn, where the docs keep the shared settings:
      // the one change made to its text.
      const etc = await mkdtemp(join(tmpdir(), 'cairn-etc-'))
      cleanups.push(() => rm(etc, { recursive: true, force: true }))
      const inEtc = (block: string) => block.replaceAll('/etc/cairn', etc)
      const [setup, ...more] = await docsBlocks('run', 'instances')
      expect(setup, 'the block that makes the shared settings').toBeDefined()
      expect(more).toHaveLength(0)
      const made = await runShell(inEtc(setup as string), dir)
      expect(made.code, made.output).toBe(0)
      const settings = parseEnvFile(await readFile(join(etc, 'cairn.env'), 'utf8'))
      publicUrl = settings['SVC_PUBLIC_BASE_URL'] as string
      expect(settings['SVC_OAUTH_STATE_KEY']?.length).toBeGreaterThanOrEqual(32)
      await rgw.createBucket(settings['SVC_S3_BUCKET'])
      idp = await startOidcProvider({
        clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT, `${publicUrl}/oauth/callback`] }],
        accounts: {
          admin: { email: 'admin@example.test' },
          alice: { email: 'alice@example.test', groups: ['team-a'] },
          bob: { email: 'bob@example.test' },
        },
      })
      cleanups.push(() => idp.close())
      const [start] = await docsBlocks('start', 'instances')
      expect(start, 'the documented start command').toBeDefined()
      startScript = inEtc(start as string)
      servers.push(...(await Promise.all([0, 1, 2].map((index) => startInstance(index)))))
      admin = (await login(at(servers, 0), 'admin')).access_token
    }, 120_000)
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.dispose()))
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    /** A browser login with PKCE at the provider, exchanged for Cairn's tokens on `server`. */
    async function login(server: RunningServer, who: string): Promise<Pair> {
      const idToken = await idTokenThroughServer(server.url, who, SCOPES)
      const pair = await call(server, null, 'POST', '/v1/auth/exchange', { id_token: idToken })
      expect(pair.status, pair.text).toBe(200)
      return pair.body as unknown as Pair
    }

    const subjectOn = async (server: RunningServer, token: string) => {
      const me = await call(server, token, 'GET', '/v1/auth/me')
      return me.status === 200 ? me.body['subject'] : me.status
    }

    const createUnit = async (id: string, server = at(servers, 0)) => {
      const created = await call(server, admin, 'POST', '/v1/units', { id })
      expect(created.status, created.text).toBe(201)
    }

    const upload = (server: RunningServer, unit: string, body: string, token = admin) =>
      call(server, token, 'POST', `/v1/units/${unit}/upload`, body)

    const versionsOn = async (server: RunningServer, unit: string) => {
      const answer = await call(server, admin, 'GET', `/v1/units/${unit}/versions?limit=100`)
      expect(answer.status, answer.text).toBe(200)
      return answer.body['versions'] as { serial: number; md5: string }[]
    }

    it('starts each instance with the documented commands, and each answers the documented health checks', async () => {
      const [health] = await docsBlocks('run', 'instances-health')
      expect(health).toBeDefined()
      for (const server of servers) {
        expect(server.output()).toContain('"storage":"s3"')
        const script = (health as string).replaceAll('localhost:8080', `127.0.0.1:${server.port}`)
        const checked = await runShell(script, dir)
        expect(checked.code, checked.output).toBe(0)
        expect(checked.output).toContain('{"status":"ok"}')
        expect(checked.output).toContain('{"status":"ready"}')
      }
    })

    it('gives the lock to exactly one of 30 racers spread over the three instances, round after round', async () => {
      const unit = 'race/app'
      await createUnit(unit, at(servers, 1))
      for (let round = 0; round < 5; round += 1) {
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            call(at(servers, index), admin, 'POST', `/v1/units/${unit}/lock`, {
              Who: `racer-${round}-${index}`,
            }),
          ),
        )
        const winners = answers.filter((answer) => answer.status === 200)
        expect(winners, answers.map((answer) => answer.status).join(' ')).toHaveLength(1)
        const winner = (winners[0] as Answer).body as { ID: string; Who: string }
        for (const loser of answers.filter((answer) => answer.status !== 200)) {
          expect(loser.status, loser.text).toBe(409)
          expect(loser.body).toMatchObject({ error: 'lock_conflict', lock: { ID: winner.ID } })
        }
        const held = await Promise.all(
          servers.map((server) => call(server, admin, 'GET', `/v1/units/${unit}`)),
        )
        for (const unitNow of held) {
          expect(unitNow.body).toMatchObject({ locked: true, lock: { Who: winner.Who } })
        }
        const unlocked = await call(
          at(servers, round + 1),
          admin,
          'DELETE',
          `/v1/units/${unit}/unlock`,
          {
            ID: winner.ID,
          },
        )
        expect(unlocked.status, unlocked.text).toBe(200)
        for (const server of servers) {
          expect((await call(server, admin, 'GET', `/v1/units/${unit}`)).body).toMatchObject({
            locked: false,
          })
        }
      }
    })

    it('reads back through each other instance, byte for byte, what one instance wrote', async () => {
      const unit = 'rw/app'
      await createUnit(unit)
      const written: string[] = []
      for (const [index, writer] of servers.entries()) {
        const body = stateOf(index + 1, `written through instance ${index} ✓`)
        const answer = await upload(writer, unit, body)
        expect(answer.status, answer.text).toBe(200)
        written.unshift(body)
        for (const reader of servers.filter((server) => server !== writer)) {
          expect((await call(reader, admin, 'GET', `/v1/units/${unit}/download`)).text).toBe(body)
          const versions = await versionsOn(reader, unit)
          expect(versions.map((version) => version.md5)).toEqual(written.map(md5))
        }
      }
    })

    /**
     * One write as a client makes it: the unit's next serial, asked again after each 409 (another
     * write got in first) or 503; answers what was acknowledged.
     */
    const writeNext = async (server: RunningServer, unit: string, tag: string) => {
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const current = await call(server, admin, 'GET', `/v1/units/${unit}`)
        const serial = ((current.body['serial'] as number | null) ?? 0) + 1
        const body = stateOf(serial, tag)
        const answer = await upload(server, unit, body)
        if (answer.status === 200) return { serial, body }
        expect([409, 503], answer.text).toContain(answer.status)
      }
      throw new Error(`${tag} was refused 100 times`)
    }

    it('loses no acknowledged write when the three instances write one unit at once', async () => {
      const unit = 'concurrent/app'
      await createUnit(unit)
      const acknowledged: { serial: number; body: string }[] = []
      await Promise.all(
        servers.map(async (server, index) => {
          for (let n = 0; n < WRITES_PER_INSTANCE; n += 1) {
            acknowledged.push(await writeNext(server, unit, `instance ${index} write ${n}`))
          }
        }),
      )
      expect(acknowledged).toHaveLength(3 * WRITES_PER_INSTANCE)
      const newestFirst = [...acknowledged].sort((a, b) => b.serial - a.serial)
      for (const server of servers) {
        const versions = await versionsOn(server, unit)
        expect(versions.map((version) => version.serial)).toEqual(
          newestFirst.map((write) => write.serial),
        )
        expect(versions.map((version) => version.md5)).toEqual(
          newestFirst.map((write) => md5(write.body)),
        )
        const download = await call(server, admin, 'GET', `/v1/units/${unit}/download`)
        expect(download.text).toBe(newestFirst[0]?.body)
      }
    })

    it('refreshes on one instance a login made on another, and revokes the family on all of them', async () => {
      const first = await login(at(servers, 0), 'alice')
      expect(await subjectOn(at(servers, 1), first.access_token)).toBe('alice')
      let pair = first
      for (const index of [1, 2, 0]) {
        const refreshed = await call(at(servers, index), null, 'POST', '/v1/auth/token', {
          refresh_token: pair.refresh_token,
        })
        expect(refreshed.status, refreshed.text).toBe(200)
        const next = refreshed.body as unknown as Pair
        expect(next.refresh_token).not.toBe(pair.refresh_token)
        expect(await subjectOn(at(servers, index + 1), next.access_token)).toBe('alice')
        pair = next
      }
      // A superseded refresh token, presented anywhere, revokes the login on every instance.
      const reused = await call(at(servers, 2), null, 'POST', '/v1/auth/token', {
        refresh_token: first.refresh_token,
      })
      expect(reused.status).toBe(401)
      const newest = await call(at(servers, 1), null, 'POST', '/v1/auth/token', {
        refresh_token: pair.refresh_token,
      })
      expect(newest.status).toBe(401)
    })

    it('runs the steps of terraform login on three different instances, and spends its code on all', async () => {
      const pkce = pkcePair()
      const redirect = 'http://127.0.0.1:10001/login'
      const query = new URLSearchParams({
        client_id: 'terraform-cli',
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        state: 'terraform-state',
      })
      const toProvider = await fetch(
        `${at(servers, 0).url}/oauth/authorization?${query.toString()}`,
        {
          redirect: 'manual',
        },
      )
      expect(toProvider.status).toBe(302)
      const toCairn = await followAuthorization(toProvider.headers.get('location') ?? '', {
        login: 'bob',
      })
      // The callback is the public URL's: the load balancer may hand it to any instance.
      expect(toCairn.startsWith(`${publicUrl}/oauth/callback?`)).toBe(true)
      const back = await fetch(onInstance(toCairn, at(servers, 1)), { redirect: 'manual' })
      expect(back.status).toBe(302)
      const returned = new URL(back.headers.get('location') ?? '')
      expect(returned.searchParams.get('state')).toBe('terraform-state')
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: 'terraform-cli',
        code: returned.searchParams.get('code') ?? '',
        redirect_uri: redirect,
        code_verifier: pkce.verifier,
      })
      const tokens = await fetch(`${at(servers, 2).url}/oauth/token`, {
        method: 'POST',
        body: form,
      })
      expect(tokens.status).toBe(200)
      const { access_token: access, token } = (await tokens.json()) as Record<string, string>
      expect(await subjectOn(at(servers, 0), access as string)).toBe('bob')
      expect(await subjectOn(at(servers, 1), token as string)).toBe('bob')
      const replay = await fetch(`${at(servers, 0).url}/oauth/token`, {
        method: 'POST',
        body: form,
      })
      expect(replay.status).toBe(400)
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' })
    })

    it('accepts everywhere an API token made on one instance, and refuses it everywhere once revoked on another', async () => {
      const created = await call(at(servers, 0), admin, 'POST', '/v1/auth/tokens', { name: 'ci' })
      expect(created.status, created.text).toBe(201)
      const { id, token } = created.body as { id: string; token: string }
      for (const server of servers) expect(await subjectOn(server, token)).toBe('admin')
      const listed = await call(at(servers, 1), admin, 'GET', '/v1/auth/tokens')
      expect((listed.body['tokens'] as { id: string }[]).map((item) => item.id)).toContain(id)
      const revoked = await call(at(servers, 2), admin, 'DELETE', `/v1/auth/tokens/${id}`)
      expect(revoked.status).toBe(204)
      for (const server of servers) expect(await subjectOn(server, token)).toBe(401)
    })

    it("takes on one instance the cloud block's upload URLs another issued", async () => {
      await cloudUploadAcross(servers, admin, 'cloud/app')
    })

    it("answers every unit's status alike on every instance after edges and writes spread over them", async () => {
      const units = ['dep/net', 'dep/app', 'dep/dns']
      const serials = new Map<string, number>()
      const write = async (unit: string, server: RunningServer) => {
        const serial = (serials.get(unit) ?? 0) + 1
        serials.set(unit, serial)
        const answer = await upload(server, unit, stateOf(serial, `${unit} #${serial}`))
        expect(answer.status, answer.text).toBe(200)
      }
      const declare = async (unit: string, from: string) => {
        const answer = await call(at(servers, 0), admin, 'PUT', `/v1/units/${unit}/dependencies`, {
          dependencies: [{ from, output: 'tag' }],
        })
        expect(answer.status, answer.text).toBe(200)
      }
      /** Each unit's status as every instance tells it; all must agree. */
      const statuses = async (): Promise<Record<string, string>> => {
        const seen = await Promise.all(servers.map((server) => statusesOn(server)))
        expect(seen[1]).toEqual(seen[0])
        expect(seen[2]).toEqual(seen[0])
        return seen[0] as Record<string, string>
      }
      /** Each unit's status as one instance tells it, one unit at a time and in bulk, alike. */
      const statusesOn = async (server: RunningServer) => {
        const answers = await Promise.all(
          units.map((unit) => call(server, admin, 'GET', `/v1/units/${unit}/status`)),
        )
        const one: Record<string, string> = {}
        for (const [index, answer] of answers.entries()) {
          expect(answer.status, answer.text).toBe(200)
          one[units[index] as string] = answer.body['status'] as string
        }
        const bulk = await call(server, admin, 'GET', '/v1/status?prefix=dep/')
        const listed = bulk.body['units'] as { id: string; status: string }[]
        expect(Object.fromEntries(listed.map((unit) => [unit.id, unit.status]))).toEqual(one)
        return one
      }

      for (const [index, unit] of units.entries()) {
        await createUnit(unit, at(servers, index))
        await write(unit, at(servers, index + 1))
      }
      // Edges declared through one instance while the upstreams change through the others.
      await Promise.all([
        declare('dep/app', 'dep/net'),
        declare('dep/dns', 'dep/app'),
        write('dep/net', at(servers, 1)),
        write('dep/app', at(servers, 2)),
      ])
      await statuses()
      // Then, step by step, what each write means downstream, read on every instance.
      await write('dep/dns', at(servers, 0))
      await write('dep/app', at(servers, 2))
      await write('dep/dns', at(servers, 1))
      expect(await statuses()).toEqual({
        'dep/net': 'green',
        'dep/app': 'green',
        'dep/dns': 'green',
      })
      await write('dep/net', at(servers, 1))
      expect(await statuses()).toEqual({
        'dep/net': 'green',
        'dep/app': 'red',
        'dep/dns': 'yellow',
      })
      await write('dep/app', at(servers, 2))
      expect(await statuses()).toEqual({ 'dep/net': 'green', 'dep/app': 'green', 'dep/dns': 'red' })
      await write('dep/dns', at(servers, 0))
      expect(await statuses()).toEqual({
        'dep/net': 'green',
        'dep/app': 'green',
        'dep/dns': 'green',
      })
    })

    it('tells on every instance, at once, what a write on another means twelve units downstream', async () => {
      // A chain deeper than any walk record by record: status comes from each instance's copy of
      // the whole graph, which must hold a write another instance has just answered.
      const chain = Array.from(
        { length: 12 },
        (_, index) => `deep/u${String(index).padStart(2, '0')}`,
      )
      const tail = chain.at(-1) as string
      for (const [index, unit] of chain.entries()) {
        await createUnit(unit, at(servers, index))
        if (index > 0) {
          const answer = await call(
            at(servers, index),
            admin,
            'PUT',
            `/v1/units/${unit}/dependencies`,
            {
              dependencies: [{ from: chain[index - 1], output: 'tag' }],
            },
          )
          expect(answer.status, answer.text).toBe(200)
        }
        const written = await upload(at(servers, index + 1), unit, stateOf(1, 'first'))
        expect(written.status, written.text).toBe(200)
      }
      const statusOn = async (server: RunningServer) => {
        const answer = await call(server, admin, 'GET', `/v1/units/${tail}/status`)
        expect(answer.status, answer.text).toBe(200)
        return answer.body
      }
      for (const server of servers) expect((await statusOn(server))['status']).toBe('green')
      for (const [index, server] of servers.entries()) {
        const serial = index + 2
        const written = await upload(server, chain[0] as string, stateOf(serial, `tag ${serial}`))
        expect(written.status, written.text).toBe(200)
        // Asked of the other two at once, right after the write's answer.
        const others = servers.filter((other) => other !== server)
        for (const seen of await Promise.all(others.map((other) => statusOn(other)))) {
          expect(seen).toMatchObject({ status: 'yellow', red_upstream: [chain[1]] })
        }
        const healed = await upload(server, chain[1] as string, stateOf(serial, 'first'))
        expect(healed.status, healed.text).toBe(200)
        for (const seen of await Promise.all(others.map((other) => statusOn(other)))) {
          expect(seen['status']).toBe('green')
        }
      }
    })

    it('decides alike on every instance right after a role is assigned, and after it is removed, on another', async () => {
      const unit = 'rbac/app'
      await createUnit(unit)
      expect((await upload(at(servers, 0), unit, stateOf(1, 'rbac'))).status).toBe(200)
      const alice = (await login(at(servers, 1), 'alice')).access_token
      const reads = async () =>
        Promise.all(
          servers.map(
            async (server) => (await call(server, alice, 'GET', `/v1/units/${unit}`)).status,
          ),
        )
      expect(await reads()).toEqual([403, 403, 403])

      const grant = { principal: 'group:team-a', role: 'reader', scope: 'rbac/*' }
      const assigned = await call(at(servers, 0), admin, 'POST', '/v1/rbac/assignments', grant)
      expect(assigned.status, assigned.text).toBe(201)
      expect(await reads()).toEqual([200, 200, 200])
      for (const server of servers) {
        const refused = await upload(server, unit, stateOf(2, 'by alice'), alice)
        expect(refused.status, refused.text).toBe(403)
        expect(refused.body).toMatchObject({ error: 'forbidden' })
      }

      const removed = await call(at(servers, 2), admin, 'DELETE', '/v1/rbac/assignments', grant)
      expect(removed.status, removed.text).toBe(200)
      expect(await reads()).toEqual([403, 403, 403])
    })

    it('leaves no trace of an upload whose instance is killed mid-body, and takes the next write', async () => {
      const unit = 'crash/app'
      await createUnit(unit)
      const before = stateOf(1, 'before the crash')
      expect((await upload(at(servers, 0), unit, before)).status).toBe(200)

      const victim = at(servers, 2)
      await streamThenKill(victim, `/v1/units/${unit}/upload`, admin, 12)
      for (const server of servers.slice(0, 2)) {
        expect((await call(server, admin, 'GET', `/v1/units/${unit}`)).body).toMatchObject({
          serial: 1,
          version_count: 1,
          locked: false,
        })
        expect((await call(server, admin, 'GET', `/v1/units/${unit}/download`)).text).toBe(before)
      }
      const after = stateOf(2, 'after the crash')
      expect((await upload(at(servers, 1), unit, after)).status).toBe(200)
      expect((await call(at(servers, 0), admin, 'GET', `/v1/units/${unit}/download`)).text).toBe(
        after,
      )

      // A new instance takes the dead one's place and sees the same unit.
      servers[2] = await startInstance(2)
      await victim.dispose()
      expect((await call(at(servers, 2), admin, 'GET', `/v1/units/${unit}/download`)).text).toBe(
        after,
      )
    })

    /**
     * What one instance answers while the store is frozen: a read and a write each fail with 503
     * and a JSON error within the store's timeouts, `/readyz` says not ready, `/healthz` still ok.
     */
    const frozenAnswers = async (server: RunningServer, unit: string, index: number) => {
      const began = Date.now()
      const [read, write, ready, health] = await Promise.all([
        call(server, admin, 'GET', `/v1/units/${unit}`),
        upload(server, unit, stateOf(10 + index, 'while frozen')),
        call(server, null, 'GET', '/readyz'),
        call(server, null, 'GET', '/healthz'),
      ])
      expect(Date.now() - began).toBeLessThan(STALLED_ANSWER_MS)
      for (const answer of [read, write]) {
        expect(answer.status, answer.text).toBe(503)
        expect(answer.headers.get('content-type')).toContain('application/json')
        expect(answer.body).toMatchObject({ error: 'storage_unavailable' })
      }
      expect(ready.status).toBe(503)
      expect(ready.body).toMatchObject({ status: 'unavailable', error: 'storage_unavailable' })
      expect(health.status).toBe(200)
    }

    it('answers 503 promptly while the store is frozen, says not ready, and recovers on its own', async () => {
      const unit = 'frozen/app'
      await createUnit(unit)
      expect((await upload(at(servers, 0), unit, stateOf(1, 'before the freeze'))).status).toBe(200)
      const load = startLoad(servers, admin, unit)
      await until('the load to be served', () => load.served() >= 30)

      rgw.pause()
      try {
        await Promise.all(servers.map((server, index) => frozenAnswers(server, unit, index)))
      } finally {
        rgw.resume()
      }

      await Promise.all(
        servers.map((server) =>
          until(`instance ${server.port} ready again`, async () => {
            return (await call(server, null, 'GET', '/readyz')).status === 200
          }),
        ),
      )
      const served = load.served()
      await until('the load served again', () => load.served() > served + 30)
      const results = await load.stop()
      for (const [index, server] of servers.entries()) {
        const { body } = await writeNext(server, unit, `after the freeze ${index}`)
        expect(
          (await call(at(servers, index + 1), admin, 'GET', `/v1/units/${unit}/download`)).text,
        ).toBe(body)
      }
      expect(results.failures, results.failures.join('\n')).toEqual([])
      expect(results.slowestMs).toBeLessThan(STALLED_ANSWER_MS)
      expect(results.unavailable).toBeGreaterThan(0)
    })
  })

  describe('in local mode, with a shared signing key', () => {
    let keyDir: string
    let removeKey = (): Promise<void> => Promise.resolve()
    const servers: RunningServer[] = []
    let bucket: string
    const localOptions = (index: number, key = true): ServerOptions => ({
      auth: true,
      args: ['-storage', 's3'],
      env: {
        ...storeEnv(index),
        SVC_S3_BUCKET: bucket,
        SVC_S3_PREFIX: 'local',
        // The webhook test's receiver listens on 127.0.0.1, refused unless allowed.
        SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        ...(key ? { SVC_TOKENS_PRIVATE_KEY_PEM_PATH: join(keyDir, 'signing.pem') } : {}),
      },
      startTimeoutMs: 30_000,
    })

    beforeAll(async () => {
      keyDir = await mkdtemp(join(tmpdir(), 'cairn-key-'))
      removeKey = () => rm(keyDir, { recursive: true, force: true })
      const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' })
      await writeFile(join(keyDir, 'signing.pem'), pem, { mode: 0o400 })
      bucket = await rgw.createBucket()
      // All three at once: the race for the admin token has one winner.
      servers.push(
        ...(await Promise.all([0, 1, 2].map((index) => startServer(localOptions(index))))),
      )
    }, 120_000)
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.dispose()))
      await removeKey()
    })

    const makers = () => servers.filter((server) => existsSync(join(server.dataDir, 'admin.token')))

    it('makes one admin token, printed by one instance and accepted by all', async () => {
      expect(makers()).toHaveLength(1)
      const maker = makers()[0] as RunningServer
      const token = await readAdminToken(maker.dataDir)
      expect(maker.output()).toContain(token)
      for (const other of servers.filter((server) => server !== maker)) {
        expect(other.output()).not.toContain(token)
        expect(other.output()).toContain(
          'another instance sharing this storage made the admin token',
        )
      }
      for (const server of servers) {
        const me = await call(server, token, 'GET', '/v1/auth/me')
        expect(me.status, me.text).toBe(200)
        expect(me.body).toMatchObject({ subject: 'local-admin' })
      }
      const tokens = await call(maker, token, 'GET', '/v1/auth/tokens')
      expect(tokens.body['tokens']).toHaveLength(1)
    })

    it("takes on one instance the cloud block's upload URLs another issued", async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      await cloudUploadAcross(servers, token, 'local/cloud')
    })

    it('verifies on every instance the S3 credentials one issued, and spreads a multipart upload over all three', async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      const issued = await call(at(servers, 0), token, 'POST', '/v1/auth/issue-s3-creds')
      expect(issued.status, issued.text).toBe(200)
      const { AccessKeyId, SecretAccessKey, SessionToken } = issued.body as Record<string, string>
      const s3 = (index: number) =>
        new S3Client({
          endpoint: `${at(servers, index).url}/s3`,
          forcePathStyle: true,
          region: 'auto',
          maxAttempts: 1,
          credentials: {
            accessKeyId: AccessKeyId as string,
            secretAccessKey: SecretAccessKey as string,
            sessionToken: SessionToken as string,
          },
        })
      const Key = 'local/s3/terraform.tfstate'
      const Bucket = 'tfstate'
      const body = stateOf(1, 'x'.repeat(6 * 1024 * 1024), 's3-across')
      const cut = 5 * 1024 * 1024
      const { UploadId } = await s3(1).send(new CreateMultipartUploadCommand({ Bucket, Key }))
      const parts = await Promise.all(
        [body.slice(0, cut), body.slice(cut)].map(async (Body, index) => {
          const PartNumber = index + 1
          const { ETag } = await s3(index + 2).send(
            new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body }),
          )
          return { ETag, PartNumber }
        }),
      )
      await s3(1).send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key,
          UploadId,
          MultipartUpload: { Parts: parts },
        }),
      )
      for (const index of [0, 1, 2]) {
        const got = await s3(index).send(new GetObjectCommand({ Bucket, Key }))
        expect(md5((await got.Body?.transformToString()) ?? '')).toBe(md5(body))
      }
      // The lock object taken through one instance is held on the others.
      const lock = (index: number, ID: string) =>
        s3(index).send(
          new PutObjectCommand({
            Bucket,
            Key: `${Key}.tflock`,
            IfNoneMatch: '*',
            Body: JSON.stringify({ ID, Operation: 'OperationTypeApply', Who: 'multi' }),
          }),
        )
      await lock(0, '00000000-0000-0000-0000-000000000001')
      await expect(lock(2, '00000000-0000-0000-0000-000000000002')).rejects.toMatchObject({
        name: 'PreconditionFailed',
      })
      await s3(1).send(new DeleteObjectCommand({ Bucket, Key: `${Key}.tflock` }))
      const unit = await call(at(servers, 2), token, 'GET', '/v1/units/local/s3')
      expect(unit.body).toMatchObject({ locked: false, version_count: 1 })
    })

    it('keeps one audit trail that every instance appends to at once, losing no record', async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      const unit = 'local/audited'
      const state = JSON.stringify({ version: 4, serial: 1, lineage: 'audited', outputs: {} })
      const first = await call(at(servers, 0), token, 'POST', `/v1/backend/${unit}`, state)
      expect(first.status, first.text).toBe(200)
      // Ten reads on each instance, all at once: thirty records appended at the same time.
      const reads = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          call(at(servers, index), token, 'GET', `/v1/units/${unit}/download`, undefined, {
            'X-Request-ID': `multi-read-${index}`,
          }),
        ),
      )
      for (const read of reads) expect(read.status).toBe(200)
      for (const server of servers) {
        const trail = await call(server, token, 'GET', `/v1/audit?unit=${unit}&limit=1000`)
        expect(trail.status, trail.text).toBe(200)
        const records = trail.body['records'] as { action: string; request_id: string }[]
        const ids = records.filter((record) => record.action === 'state.read')
        expect(new Set(ids.map((record) => record.request_id)).size).toBe(30)
        expect(records.map((record) => record.action).sort()).toEqual([
          ...Array<string>(30).fill('state.read'),
          'state.write',
        ])
      }
    })

    it('delivers every event to a webhook made on one instance, in order, whichever instance wrote', async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      const received: { id: string; serial: number }[] = []
      const receiver = createServer((req, res) => {
        let body = ''
        req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
        req.on('end', () => {
          const event = JSON.parse(body) as { id: string; version: { serial: number } }
          received.push({ id: event.id, serial: event.version.serial })
          res.writeHead(204).end()
        })
      })
      await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done))
      try {
        const { port } = receiver.address() as AddressInfo
        const made = await call(at(servers, 0), token, 'POST', '/v1/webhooks', {
          url: `http://127.0.0.1:${port}/hook`,
          events: ['unit.written'],
          prefix: 'local/hooked',
        })
        expect(made.status, made.text).toBe(201)
        for (const serial of [1, 2, 3, 4, 5, 6]) {
          const state = JSON.stringify({ version: 4, serial, lineage: 'hooked', outputs: {} })
          const write = await call(
            at(servers, serial),
            token,
            'POST',
            '/v1/backend/local/hooked',
            state,
          )
          expect(write.status, write.text).toBe(200)
        }
        await until('six deliveries', () => new Set(received.map((event) => event.id)).size === 6)
        const unique = [...new Map(received.map((event) => [event.id, event])).values()]
        expect(unique.map((event) => event.serial)).toEqual([1, 2, 3, 4, 5, 6])
        const id = made.body['id'] as string
        const listed = await call(at(servers, 2), token, 'GET', `/v1/webhooks/${id}/deliveries`)
        const deliveries = listed.body['deliveries'] as { state: string }[]
        expect(deliveries.map((delivery) => delivery.state)).toEqual(
          Array<string>(6).fill('delivered'),
        )
      } finally {
        await new Promise((done) => receiver.close(done))
      }
    })

    it('finds on another instance, right after each write, the IDs it wrote, and diffs it alike on a third', async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      const units = ['local/found/a', 'local/found/b', 'local/found/c']
      const search = async (server: RunningServer, q: string) => {
        const found = await call(server, token, 'GET', `/v1/search?q=${encodeURIComponent(q)}`)
        expect(found.status, found.text).toBe(200)
        return found.body['results'] as { unit: string; address: string; match: string }[]
      }
      const previous = new Map<string, string>()
      let step = 0
      for (const serial of [1, 2, 3]) {
        for (const unit of units) {
          const writer = at(servers, step)
          const id = `i-${randomUUID()}`
          const wrote = await call(
            writer,
            token,
            'POST',
            `/v1/backend/${unit}`,
            resourceState(serial, id),
          )
          expect(wrote.status, wrote.text).toBe(200)
          // No waiting: the next search on another instance catches up with the write first.
          expect(await search(at(servers, step + 1), id)).toEqual([
            {
              unit,
              address: 'terraform_data.main',
              type: 'terraform_data',
              version: expect.any(String) as string,
              match: 'id',
              value: id,
            },
          ])
          const before = previous.get(unit)
          if (before !== undefined) expect(await search(at(servers, step + 1), before)).toEqual([])
          const diff = await call(
            at(servers, step + 2),
            token,
            'GET',
            `/v1/units/${unit}/diff?detail=true`,
          )
          expect(diff.status, diff.text).toBe(200)
          if (before === undefined) {
            expect(diff.body).toMatchObject({
              unit,
              from: null,
              resources: { added: [{ address: 'terraform_data.main', identity: { id } }] },
            })
          } else {
            expect(diff.body).toMatchObject({
              unit,
              resources: {
                added: [],
                removed: [],
                changed: [
                  {
                    address: 'terraform_data.main',
                    identity: { id },
                    attributes: [{ path: 'id', before, after: id }],
                  },
                ],
              },
            })
          }
          previous.set(unit, id)
          step += 1
        }
      }
      // Every instance finds all three units by type, each at its last ID.
      for (const server of servers) {
        const page = await call(
          server,
          token,
          'GET',
          '/v1/search?type=terraform_data&unit_prefix=local/found/',
        )
        expect(page.status, page.text).toBe(200)
        expect(page.body['results']).toMatchObject(
          units.map((unit) => ({ unit, address: 'terraform_data.main' })),
        )
      }
    })

    it('finds on every instance, at once, a unit that a reindex on one of them backfilled', async () => {
      const token = await readAdminToken((makers()[0] as RunningServer).dataDir)
      const unit = 'local/unindexed/net'
      const id = `vpc-${randomUUID()}`
      // An instance with indexing off writes the version as a server from before indexes did.
      const options = localOptions(1)
      const old = await startServer({
        ...options,
        env: { ...options.env, SVC_RESOURCE_INDEX: 'false' },
      })
      try {
        const wrote = await call(old, token, 'POST', `/v1/backend/${unit}`, resourceState(1, id))
        expect(wrote.status, wrote.text).toBe(200)
      } finally {
        await old.dispose()
      }
      const search = async (server: RunningServer) => {
        const found = await call(
          server,
          token,
          'GET',
          `/v1/search?q=${id}&unit_prefix=local/unindexed/`,
        )
        expect(found.status, found.text).toBe(200)
        return found.body
      }
      for (const server of servers) {
        expect(await search(server)).toMatchObject({
          results: [],
          not_indexed: [{ unit, reason: expect.stringContaining('cairn reindex') as string }],
          not_indexed_count: 1,
        })
      }
      const reindexed = await call(at(servers, 0), token, 'POST', '/v1/search/reindex')
      expect(reindexed.status, reindexed.text).toBe(200)
      expect(reindexed.body['backfilled']).toBeGreaterThanOrEqual(1)
      expect(reindexed.body['not_indexed']).toBe(0)
      // No waiting on the other instances either: the backfill is announced like a write.
      for (const server of servers) {
        expect(await search(server)).toMatchObject({
          results: [{ unit, address: 'terraform_data.main', match: 'id', value: id }],
          not_indexed: [],
          not_indexed_count: 0,
        })
      }
    })

    it('makes no second admin token when an instance starts on a new data directory', async () => {
      const maker = makers()[0] as RunningServer
      const token = await readAdminToken(maker.dataDir)
      const another = await startServer(localOptions(1))
      try {
        expect(existsSync(join(another.dataDir, 'admin.token'))).toBe(false)
        expect((await call(another, token, 'GET', '/v1/auth/me')).status).toBe(200)
        const tokens = await call(another, token, 'GET', '/v1/auth/tokens')
        expect(tokens.body['tokens']).toHaveLength(1)
      } finally {
        await another.dispose()
      }
    })

    it('refuses to start on -storage s3 without SVC_TOKENS_PRIVATE_KEY_PEM_PATH, saying what to set', async () => {
      await expect(startServer(localOptions(0, false))).rejects.toThrow(
        /exited with code 2[\s\S]*set SVC_TOKENS_PRIVATE_KEY_PEM_PATH to the same Ed25519 key/,
      )
    })
  })
})

interface Urls {
  'hosted-state-upload-url': string
  'hosted-json-state-upload-url': string
}

const MIB = 1024 * 1024

/** A Terraform state of `serial` holding one resource instance whose `id` is `id`. */
function resourceState(serial: number, id: string): string {
  return `${JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'multi-instance-search',
    outputs: {},
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'main',
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [
          { schema_version: 0, attributes: { id, input: null }, sensitive_attributes: [] },
        ],
      },
    ],
  })}\n`
}

/** A PUT of `body` to a URL without credentials, as Terraform sends an upload URL. */
function put(url: string, body: string): Promise<Response> {
  return fetch(url, { method: 'PUT', body })
}

/**
 * Streams a large state to `path` (chunked, as Terraform streams one) and SIGKILLs the server once
 * `killAfterMib` MiB of it have gone out; the request must end in a broken connection, unanswered.
 */
async function streamThenKill(
  server: RunningServer,
  path: string,
  token: string,
  killAfterMib: number,
): Promise<void> {
  const req = request(new URL(`${server.url}${path}`), {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  })
  const ended = new Promise<string>((resolve) => {
    req.on('error', (error) => {
      resolve(`error: ${error.message}`)
    })
    req.on('response', (response) => {
      resolve(`answered ${response.statusCode}`)
    })
  })
  const write = (chunk: string) =>
    new Promise<void>((resolve, reject) => {
      req.write(chunk, (error) => {
        if (error) reject(error)
        else resolve()
      })
    })
  await write('{"version":4,"terraform_version":"1.11.4","serial":2,"lineage":"multi-instance",')
  await write('"outputs":{"blob":{"type":"string","value":"')
  const chunk = 'x'.repeat(MIB)
  for (let mib = 0; mib < killAfterMib; mib += 1) await write(chunk)
  await server.stop('SIGKILL')
  expect(await ended).toMatch(/^error: /)
}

/**
 * Background readers and writers on every instance, until `stop`: each answer must be a success,
 * a 409 or a 503 `storage_unavailable`, and none may come later than a stalled store allows. No
 * locks: one granted by a store that answers after its client gave up would outlive the test.
 */
function startLoad(servers: RunningServer[], token: string, unit: string) {
  let running = true
  let served = 0
  let unavailable = 0
  let slowestMs = 0
  // Serials of the load's writes: two at once may clash (409), which a client retries.
  let next = 1000
  const failures: string[] = []
  const worker = async (server: RunningServer) => {
    for (let n = 0; running; n += 1) {
      const began = Date.now()
      try {
        const answer =
          n % 3 === 2
            ? await call(server, token, 'POST', `/v1/units/${unit}/upload`, stateOf(next++, 'load'))
            : await call(server, token, 'GET', `/v1/units/${unit}${n % 3 === 0 ? '' : '/download'}`)
        slowestMs = Math.max(slowestMs, Date.now() - began)
        if (answer.status === 200 || answer.status === 409) served += 1
        else if (answer.status === 503 && answer.body['error'] === 'storage_unavailable') {
          unavailable += 1
        } else failures.push(`${server.port}: ${answer.status} ${answer.text}`)
      } catch (error) {
        failures.push(`${server.port}: ${(error as Error).message}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  }
  // Two workers an instance.
  const workers = servers.flatMap((server) => [worker(server), worker(server)])
  return {
    served: () => served,
    stop: async () => {
      running = false
      await Promise.all(workers)
      return { failures, slowestMs, unavailable }
    },
  }
}
