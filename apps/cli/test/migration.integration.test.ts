import { createHash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { connect, createServer as createTcpServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { Readable } from 'node:stream'
import { join } from 'node:path'
import {
  GetObjectCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { createClient, type CairnClient } from '@cairn/sdk'
import { importSource, type MigrationSource, type SourceVersion } from '@cairn/migrate'
import type { Version } from '@cairn/contract'
import { startServer, TerraformWorkspace, useRgw, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

/**
 * `cairn import` and `cairn export` (DESIGN section 16) against real sources where they exist
 * here: directories written by real Terraform with workspaces, Ceph RGW with bucket versioning,
 * another Cairn server's TFE API, and Terraform's `s3` backend reading an export. There is no
 * GitLab here: its source is tested against a small server that follows GitLab's documented API
 * (GraphQL `project.terraformStates`, REST `.../terraform/state/:name/versions/:serial`), named
 * `fakeGitlab` below.
 */

const rgw = useRgw({ shared: true })
let cli: CliUser
const servers: RunningServer[] = []

beforeAll(async () => {
  cli = await CliUser.create()
})
afterAll(async () => {
  await Promise.all(servers.map((server) => server.dispose()))
})

async function server(): Promise<{ running: RunningServer; client: CairnClient }> {
  const running = await startServer()
  servers.push(running)
  return { running, client: createClient({ baseUrl: running.url }) }
}

function cairn(target: RunningServer, args: string[], env: Record<string, string> = {}) {
  return cli.run([...args, '--server', target.url], { env, timeoutMs: 120_000 })
}

const state = (serial: number, lineage: string, name = 'x') =>
  `${JSON.stringify({ version: 4, terraform_version: '1.9.0', serial, lineage, outputs: { name: { value: name, type: 'string' } }, resources: [] }, null, 2)}\n`

async function allVersions(client: CairnClient, unit: string): Promise<Version[]> {
  return (await client.units.versions(unit, { limit: 1000 })).versions.reverse()
}

/** The AWS SDK on the shared RGW, as a test's own client. */
const rgwClient = () =>
  new S3Client({
    region: rgw.region,
    endpoint: rgw.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
  })

/** What the CLI's AWS chain reads to reach the shared RGW. */
const rgwEnv = () => ({
  AWS_ACCESS_KEY_ID: rgw.accessKeyId,
  AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
  AWS_REGION: rgw.region,
})

async function versioning(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(
    new PutBucketVersioningCommand({
      Bucket: bucket,
      VersioningConfiguration: { Status: 'Enabled' },
    }),
  )
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex')

describe('a directory written by Terraform', () => {
  it('comes in with its backups and workspaces, oldest first, and a second run brings nothing', async () => {
    const tf = await TerraformWorkspace.create()
    await tf.write(
      'main.tf',
      'variable "n" {}\nresource "terraform_data" "d" { input = var.n }\noutput "n" { value = var.n }\n',
    )
    expect((await tf.run(['init', '-no-color'])).code).toBe(0)
    for (const n of ['1', '2', '3'])
      expect((await tf.run(['apply', '-auto-approve', '-var', `n=${n}`])).code).toBe(0)
    expect((await tf.run(['workspace', 'new', 'dev'])).code).toBe(0)
    for (const n of ['a', 'b'])
      expect((await tf.run(['apply', '-auto-approve', '-var', `n=${n}`])).code).toBe(0)
    const { running, client } = await server()

    const dry = await cairn(running, ['import', tf.dir, '--prefix', 'local/', '--dry-run'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/Dry run of .*: 2 units, 4 versions; nothing was written\./)
    expect(dry.stdout).toContain('local/')
    expect((await client.units.list()).units).toEqual([])

    const first = await cairn(running, ['import', tf.dir, '--prefix', 'local/'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain('Imported 4 versions')
    const name = tf.dir.split('/').at(-1) ?? ''
    const main = await allVersions(client, `local/${name}`)
    expect(main.map((version) => version.serial)).toEqual([expect.any(Number), expect.any(Number)])
    expect(main.every((version) => version.source === 'import')).toBe(true)
    expect(main[1]?.imported_from).toMatch(/^file:\/\/.*terraform\.tfstate#sha256=/)
    // The current state is the directory's own terraform.tfstate.
    const current = await readFile(join(tf.dir, 'terraform.tfstate'), 'utf8')
    expect(await client.units.downloadText(`local/${name}`)).toBe(current)
    expect((await allVersions(client, `local/${name}/dev`)).length).toBe(2)

    const again = await cairn(running, ['import', tf.dir, '--prefix', 'local/', '--json'])
    expect(again.code, again.stderr).toBe(0)
    const summary = JSON.parse(again.stdout) as {
      units: { imported: number; alreadyImported: number }[]
    }
    expect(summary.units.map((unit) => [unit.imported, unit.alreadyImported])).toEqual([
      [0, 2],
      [0, 2],
    ])
  }, 180_000)
})

describe('a versioned bucket on Ceph RGW', () => {
  it('comes in with every object version; a body that is not JSON is kept as it is, and the summary says so', async () => {
    const bucket = await rgw.createBucket()
    const s3 = rgwClient()
    await versioning(s3, bucket)
    const put = (Key: string, Body: string) =>
      s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body }))
    for (const serial of [1, 2, 3]) await put('team/net/terraform.tfstate', state(serial, 'net'))
    await put('team/net/terraform.tfstate.tflock', '{}')
    await put('env:/dev/team/net/terraform.tfstate', state(1, 'dev'))
    await put('odd.tfstate', 'this is not a state')
    const { running, client } = await server()
    const env = rgwEnv()
    const from = `s3://${bucket}`

    // A mapping that sends two keys to one unit is refused, in the dry run too.
    const mapping = join(await mkdtemp(join(tmpdir(), 'cairn-map-')), 'map.json')
    await writeFile(
      mapping,
      JSON.stringify({ rules: [{ from: '**/terraform.tfstate', to: 'all/one' }] }),
    )
    const refused = await cairn(
      running,
      ['import', from, '--endpoint', rgw.endpoint, '--map', mapping, '--dry-run'],
      env,
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('the mapping sends more than one source state to one unit')
    expect(refused.stderr).toContain('to all/one')

    const done = await cairn(running, ['import', from, '--endpoint', rgw.endpoint], env)
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toContain('Imported 5 versions')
    expect(done.stdout).toContain('odd.tfstate: 1 version not JSON; kept as the source kept it')
    const net = await allVersions(client, 'team/net')
    expect(net.map((version) => version.serial)).toEqual([1, 2, 3])
    expect(net[0]?.imported_from).toMatch(
      new RegExp(`^s3://${bucket}/team/net/terraform\\.tfstate\\?versionId=`),
    )
    expect(net[0]?.original_created).toMatch(/^\d{4}-/)
    expect(await client.units.downloadText('team/net')).toBe(state(3, 'net'))
    expect((await allVersions(client, 'env:/dev/team/net')).length).toBe(1)
    expect(await client.units.downloadText('odd.tfstate')).toBe('this is not a state')
  }, 120_000)
})

/**
 * A TCP proxy in front of an RGW gateway that, after `reads` object reads (GETs with a
 * `versionId`), drops every connection and refuses new ones, as a gateway killed mid-import
 * would, until `revive`. (The shared cluster's own gateways are never killed: other suites use
 * them.)
 */
async function dyingGateway(endpoint: string) {
  const target = new URL(endpoint)
  const sockets = new Set<Socket>()
  let reads = Number.POSITIVE_INFINITY
  let dead = false
  const proxy = createTcpServer((client) => {
    if (dead) {
      client.destroy()
      return
    }
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(client).add(upstream)
    const drop = () => {
      sockets.delete(client)
      sockets.delete(upstream)
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (chunk: Buffer) => {
      if (/^GET [^ ]*versionId=/.test(chunk.subarray(0, 2048).toString('latin1'))) {
        reads -= 1
        if (reads < 0) {
          dead = true
          for (const socket of sockets) socket.destroy()
          sockets.clear()
          return
        }
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => client.write(chunk))
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    dieAfter: (count: number) => {
      reads = count
    },
    revive: () => {
      dead = false
      reads = Number.POSITIVE_INFINITY
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        proxy.close(() => {
          resolve()
        })
      }),
  }
}

describe('a source failing under the import', () => {
  it('a gateway that dies mid-import fails the unit; run again, it completes with nothing doubled', async () => {
    const bucket = await rgw.createBucket()
    const s3 = rgwClient()
    await versioning(s3, bucket)
    for (const serial of [1, 2, 3, 4, 5]) {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'a/terraform.tfstate',
          Body: state(serial, 'a'),
        }),
      )
    }
    const gateway = await dyingGateway(rgw.endpoint)
    const { running, client } = await server()
    const env = rgwEnv()
    try {
      gateway.dieAfter(2)
      const failed = await cairn(
        running,
        ['import', `s3://${bucket}`, '--endpoint', gateway.endpoint],
        env,
      )
      expect(failed.code).toBe(1)
      expect(failed.stdout).toMatch(/a: failed: cannot read s3:\/\/.*a\/terraform\.tfstate version/)
      expect((await allVersions(client, 'a')).map((version) => version.serial)).toEqual([1, 2])
      gateway.revive()
      const again = await cairn(
        running,
        ['import', `s3://${bucket}`, '--endpoint', gateway.endpoint],
        env,
      )
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).toContain('Imported 3 versions')
      expect((await allVersions(client, 'a')).map((version) => version.serial)).toEqual([
        1, 2, 3, 4, 5,
      ])
    } finally {
      await gateway.close()
    }
  }, 120_000)

  it('a version whose bytes are not the MD5 the source declares is refused, and what came before it stays', async () => {
    const { client } = await server()
    const version = (serial: number, md5: string | null): SourceVersion => ({
      id: `test://unit#${serial}`,
      created: null,
      author: null,
      size: null,
      md5,
      serial,
      open: () => Promise.resolve(Readable.from([Buffer.from(state(serial, 'm'))])),
    })
    const md5 = (text: string) => createHash('md5').update(text).digest('hex')
    const source: MigrationSource = {
      description: 'a source declaring MD5s (in process)',
      locks: false,
      units: () =>
        Readable.from([
          {
            name: 'm',
            defaultTarget: 'team/m',
            versions: () =>
              Promise.resolve([
                version(1, md5(state(1, 'm'))),
                version(2, md5('something else')),
                version(3, null),
              ]),
          },
        ]),
    }
    const summary = await importSource(client, source)
    expect(summary.units[0]?.failure).toMatch(/MD5/)
    expect((await allVersions(client, 'team/m')).map((each) => each.serial)).toEqual([1])
  }, 60_000)
})

/**
 * A proxy in front of a Cairn server's TFE API that answers 500 to the state downloads it is
 * told to fail: a source failing mid-import.
 */
async function failingProxy(
  target: string,
): Promise<{ url: string; failNext: (count: number) => void; close: () => Promise<void> }> {
  let failing = 0
  const proxy: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', target)
      if (
        failing > 0 &&
        url.pathname.includes('/state-versions/') &&
        url.pathname.endsWith('/download')
      ) {
        failing -= 1
        response.writeHead(500).end('failing on purpose')
        return
      }
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && name !== 'host') headers.set(name, value)
      }
      const answer = await fetch(url, {
        method: request.method ?? 'GET',
        headers,
        ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
        redirect: 'manual',
      })
      const body = Buffer.from(await answer.arrayBuffer())
      const text = body
        .toString('utf8')
        .replaceAll(target, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)
      response.writeHead(answer.status, {
        'Content-Type': answer.headers.get('content-type') ?? 'application/octet-stream',
      })
      response.end(answer.headers.get('content-type')?.includes('json') === true ? text : body)
    })()
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    failNext: (count) => {
      failing = count
    },
    close: () =>
      new Promise<void>((resolve) => {
        proxy.close(() => {
          resolve()
        })
      }),
  }
}

describe('another Cairn server through its TFE API', () => {
  it('is a source: a download failing mid-import fails that unit, and a second run completes it with nothing doubled', async () => {
    const source = await server()
    await source.client.units.create('team/app')
    await source.client.units.create('team/db')
    for (const serial of [1, 2, 3, 4])
      await source.client.units.upload('team/app', state(serial, 'app'), {})
    await source.client.units.upload('team/db', state(1, 'db'), {})
    const proxy = await failingProxy(source.running.url)
    const target = await server()
    try {
      const from = `tfe+${proxy.url}/acme`
      proxy.failNext(1)
      const failed = await cairn(target.running, ['import', from, '--token', 'unused', '--json'])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('did not import whole; run the same command again to resume')
      const report = JSON.parse(failed.stdout) as {
        units: { target: string; imported: number; failure?: string }[]
      }
      const broken = report.units.find((unit) => unit.failure !== undefined)
      expect(broken?.failure).toContain('answered 500')

      // --lock-source: a workspace someone else holds is not copied; the others are, each under
      // the source's lock, which is released after.
      await source.client.units.lock('team/db', { Who: 'someone@else' })
      const held = await cairn(target.running, [
        'import',
        from,
        '--token',
        'unused',
        '--lock-source',
      ])
      expect(held.code).toBe(1)
      expect(held.stdout).toContain('acme/team/db: failed: cannot lock workspace')
      expect(held.stdout).toContain('(it is locked already)')
      expect((await source.client.units.get('team/app')).locked).toBe(false)
      await source.client.units.unlock('team/db', { force: true })

      const second = await cairn(target.running, [
        'import',
        from,
        '--token',
        'unused',
        '--lock-source',
      ])
      expect(second.code, second.stderr).toBe(0)
      expect((await source.client.units.get('team/db')).locked).toBe(false)
      for (const [unit, count] of [
        ['acme/team/app', 4],
        ['acme/team/db', 1],
      ] as const) {
        const versions = await allVersions(target.client, unit)
        expect(versions.map((version) => version.serial)).toEqual(
          unit === 'acme/team/app' ? [1, 2, 3, 4] : [1],
        )
        expect(new Set(versions.map((version) => version.imported_from)).size).toBe(count)
      }
      const sourceVersions = await allVersions(source.client, 'team/app')
      const imported = await allVersions(target.client, 'acme/team/app')
      expect(imported.map((version) => version.sha256)).toEqual(
        sourceVersions.map((version) => version.sha256),
      )
      expect(imported.map((version) => version.original_created)).toEqual(
        sourceVersions.map((version) => version.timestamp),
      )
    } finally {
      await proxy.close()
    }
  }, 120_000)
})

/**
 * A stand-in for GitLab (there is none here), following its documented API: GraphQL lists a
 * project's states with each one's latest serial; REST answers a version by its serial, 404 for a
 * deleted one. `hold` keeps the answer for one serial back until released.
 */
async function fakeGitlab(states: Record<string, Record<number, string>>, token: string) {
  let held: { serial: number; seen: number; release: () => void } | undefined
  const gitlab = createServer((request, response) => {
    void (async () => {
      if (request.headers.authorization !== `Bearer ${token}`) {
        response.writeHead(401).end('{"message":"401 Unauthorized"}')
        return
      }
      const url = new URL(request.url ?? '/', 'http://gitlab.test')
      if (url.pathname === '/api/graphql') {
        const nodes = Object.entries(states).map(([name, versions]) => ({
          name,
          latestVersion: {
            serial: Math.max(...Object.keys(versions).map(Number)),
            createdAt: '2025-01-02T03:04:05Z',
            createdByUser: { username: 'ops' },
          },
        }))
        response.writeHead(200, { 'Content-Type': 'application/json' })
        response.end(
          JSON.stringify({
            data: {
              project: {
                terraformStates: { nodes, pageInfo: { hasNextPage: false, endCursor: null } },
              },
            },
          }),
        )
        return
      }
      const match =
        /^\/api\/v4\/projects\/group%2Finfra\/terraform\/state\/([^/]+)\/versions\/(\d+)$/.exec(
          url.pathname,
        )
      const body =
        match === null ? undefined : states[decodeURIComponent(match[1] ?? '')]?.[Number(match[2])]
      if (body === undefined) {
        response.writeHead(404).end('{"message":"404 Not Found"}')
        return
      }
      // The first read of a serial is the importer's probe; the second is the copy.
      if (held?.serial === Number(match?.[2]) && ++held.seen === 2) {
        await new Promise<void>((resolve) => {
          const current = held
          if (current !== undefined) current.release = resolve
        })
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(body)
    })()
  })
  await new Promise<void>((resolve) => gitlab.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(gitlab.address() as AddressInfo).port}`,
    hold: (serial: number) => {
      held = { serial, seen: 0, release: () => undefined }
    },
    release: () => {
      const current = held
      held = undefined
      current?.release()
    },
    close: () =>
      new Promise<void>((resolve) => {
        gitlab.close(() => {
          resolve()
        })
      }),
  }
}

describe('GitLab-managed state (a stand-in server following GitLab’s API)', () => {
  it('comes in by probing serials: a deleted version is a gap; kill -9 of the importer mid-unit, then a run again, doubles nothing', async () => {
    const versions = { 1: state(1, 'g'), 2: state(2, 'g'), 4: state(4, 'g'), 5: state(5, 'g') }
    const gitlab = await fakeGitlab({ production: versions }, 'glpat-test')
    const { running, client } = await server()
    const from = `gitlab+${gitlab.url}/group/infra`
    const env = { GITLAB_TOKEN: 'glpat-test' }
    try {
      const dry = await cairn(running, ['import', from, '--dry-run', '--json'], env)
      expect(dry.code, dry.stderr).toBe(0)
      const plan = JSON.parse(dry.stdout) as {
        units: { target: string; versions: number; gaps: number[] }[]
      }
      expect(plan.units).toEqual([
        expect.objectContaining({ target: 'group/infra/production', versions: 4, gaps: [3] }),
      ])

      // The importer is killed while version 4 streams: versions 1 and 2 stay imported.
      gitlab.hold(4)
      const importer = cli.spawn(['import', from, '--server', running.url], { env })
      const exited = new Promise((resolve) => importer.on('exit', resolve))
      await expect
        .poll(
          async () =>
            (await client.units.versions('group/infra/production').catch(() => ({ versions: [] })))
              .versions.length,
          { timeout: 30_000 },
        )
        .toBe(2)
      importer.kill('SIGKILL')
      await exited
      gitlab.release()

      const again = await cairn(running, ['import', from], env)
      expect(again.code, again.stderr).toBe(0)
      const imported = await allVersions(client, 'group/infra/production')
      expect(imported.map((version) => version.serial)).toEqual([1, 2, 4, 5])
      expect(imported.at(-1)).toMatchObject({
        original_author: 'ops',
        original_created: '2025-01-02T03:04:05.000Z',
      })
    } finally {
      gitlab.release()
      await gitlab.close()
    }
  }, 120_000)
})

describe('cairn export', () => {
  it('gives back, imported into an empty server, the same units, versions, tags and dependencies; --to s3 writes a bucket Terraform’s s3 backend reads', async () => {
    const source = await server()
    await source.client.units.create('net/core', { tags: ['team:net'] })
    for (const serial of [1, 2])
      await source.client.units.upload('net/core', state(serial, 'core', `core${serial}`))
    await source.client.units.create('apps/web', { tags: ['team:web', 'tier:front'] })
    await source.client.units.upload('apps/web', state(1, 'web'))
    await source.client.units.setDependencies('apps/web', [{ from: 'net/core', output: 'name' }])
    await source.client.units.create('apps/empty')

    const dir = await mkdtemp(join(tmpdir(), 'cairn-export-'))
    const archive = join(dir, 'cairn-export.tar')
    const exported = await cairn(source.running, ['export', '--out', archive])
    expect(exported.code, exported.stderr).toBe(0)

    const target = await server()
    const imported = await cairn(target.running, ['import', archive])
    expect(imported.code, imported.stderr).toBe(0)
    for (const unit of ['net/core', 'apps/web', 'apps/empty']) {
      const [from, to] = await Promise.all([
        source.client.units.get(unit),
        target.client.units.get(unit),
      ])
      expect(to.tags).toEqual(from.tags)
      const [a, b] = await Promise.all([
        allVersions(source.client, unit),
        allVersions(target.client, unit),
      ])
      expect(b.map((version) => version.sha256)).toEqual(a.map((version) => version.sha256))
    }
    expect((await target.client.units.dependencies('apps/web')).dependencies).toEqual([
      { from: 'net/core', output: 'name' },
    ])
    // A second import of the same archive brings nothing.
    const again = await cairn(target.running, ['import', archive, '--json'])
    const summary = JSON.parse(again.stdout) as { units: { imported: number }[] }
    expect(summary.units.reduce((sum, unit) => sum + unit.imported, 0)).toBe(0)

    // Into a versioned bucket, then read by Terraform's own s3 backend.
    const bucket = await rgw.createBucket()
    const s3 = rgwClient()
    const env = rgwEnv()
    const unversioned = await cairn(
      source.running,
      ['export', '--to', `s3://${bucket}/cairn`, '--endpoint', rgw.endpoint],
      env,
    )
    expect(unversioned.code).toBe(1)
    expect(unversioned.stderr).toContain('does not have versioning enabled')
    await versioning(s3, bucket)
    const toS3 = await cairn(
      source.running,
      ['export', '--to', `s3://${bucket}/cairn`, '--endpoint', rgw.endpoint],
      env,
    )
    expect(toS3.code, toS3.stderr).toBe(0)
    expect(toS3.stdout).toContain('Wrote 3 versions')
    const object = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'cairn/net/core/terraform.tfstate' }),
    )
    expect(sha256(Buffer.from((await object.Body?.transformToByteArray()) ?? []))).toBe(
      sha256(state(2, 'core', 'core2')),
    )
    const tf = await TerraformWorkspace.create(env)
    await tf.write(
      'main.tf',
      `terraform {
  backend "s3" {
    bucket                      = "${bucket}"
    key                         = "cairn/net/core/terraform.tfstate"
    region                      = "${rgw.region}"
    endpoints                   = { s3 = "${rgw.endpoint}" }
    use_path_style              = true
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
    skip_s3_checksum            = true
  }
}
`,
    )
    const init = await tf.run(['init', '-no-color'])
    expect(init.code, init.stderr).toBe(0)
    const pulled = await tf.run(['state', 'pull'])
    expect(pulled.code, pulled.stderr).toBe(0)
    expect(JSON.parse(pulled.stdout)).toMatchObject({ serial: 2, lineage: 'core' })
    const twice = await cairn(
      source.running,
      ['export', '--to', `s3://${bucket}/cairn`, '--endpoint', rgw.endpoint],
      env,
    )
    expect(twice.stdout).toContain('Wrote 0 versions')
  }, 180_000)
})
