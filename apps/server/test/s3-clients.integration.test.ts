// Real S3 clients against the real server process (DESIGN section 11): the AWS CLI with
// `cairn creds --json` as its credential_process, and the AWS SDK with its default checksum
// settings, including every way a request is refused, which must change nothing.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { awsCliBinary, useServer, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_MAIN, CliSession } from './support/cairn-cli'
import { sha256Hex, type UnitBody, type VersionBody } from './support/http-client'
import {
  afterSigning,
  issueS3Credentials,
  s3Client,
  s3ErrorOf,
  tfState,
  type S3Credentials,
} from './support/s3'

const BUCKET = 'tfstate'

/** `/v1` reads as the admin of a local-mode server. */
function v1(server: { readonly url: string; readonly token: string }) {
  const get = (path: string) =>
    fetch(`${server.url}/v1${path}`, { headers: { Authorization: `Bearer ${server.token}` } })
  return {
    get,
    async unit(id: string): Promise<UnitBody> {
      const reply = await get(`/units/${id}`)
      expect(reply.status).toBe(200)
      return (await reply.json()) as UnitBody
    },
    async versions(id: string): Promise<VersionBody[]> {
      const reply = await get(`/units/${id}/versions`)
      expect(reply.status).toBe(200)
      return ((await reply.json()) as { versions: VersionBody[] }).versions
    },
    async download(id: string): Promise<string> {
      const reply = await get(`/units/${id}/download`)
      expect(reply.status).toBe(200)
      return reply.text()
    },
  }
}

/** What a refused request must leave alone. */
const snapshotOf = ({ sha256, serial, version_count, locked, lock, updated }: UnitBody) => ({
  sha256,
  serial,
  version_count,
  locked,
  lock,
  updated,
})

describe('the AWS CLI, with `cairn creds --json` as its credential_process', () => {
  const server = useServer({ auth: true })
  const api = v1(server)
  let aws: string
  let cli: CliSession
  let files: string

  /** Runs `aws --endpoint-url <server>/s3 <args>` in the CLI session's HOME, with no machine AWS settings. */
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        aws,
        ['--endpoint-url', `${server.url}/s3`, ...args],
        {
          env: {
            PATH: process.env['PATH'] ?? '',
            HOME: cli.home,
            AWS_CONFIG_FILE: join(cli.home, 'aws-config'),
            AWS_SHARED_CREDENTIALS_FILE: join(cli.home, 'aws-credentials'),
            AWS_PROFILE: 'cairn',
            AWS_EC2_METADATA_DISABLED: 'true',
          },
          cwd: files,
          timeout: 60_000,
          maxBuffer: 32 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
          resolve({ code, stdout, stderr })
        },
      )
    })

  beforeAll(async () => {
    aws = await awsCliBinary()
    cli = await CliSession.create()
    files = await mkdtemp(join(tmpdir(), 'cairn-aws-cli-'))
    const login = await cli.run(['login', '--server', server.url, '--token-stdin'], server.token)
    expect(login.code, login.stderr).toBe(0)
    await writeFile(
      join(cli.home, 'aws-config'),
      [
        '[profile cairn]',
        'region = auto',
        `credential_process = ${process.execPath} ${CLI_MAIN} creds --json --server ${server.url}`,
        's3 =',
        '    addressing_style = path',
        '',
      ].join('\n'),
    )
  })
  afterAll(async () => {
    await cli.dispose()
    await rm(files, { recursive: true, force: true })
  })

  const KEY = 'team/cli/terraform.tfstate'
  const first = tfState(1, 'aws-cli')

  it('puts a state with `aws s3 cp` through an endpoint URL with a path (/s3), as unit team/cli', async () => {
    await writeFile(join(files, 'state.json'), first)
    const cp = await run(['s3', 'cp', 'state.json', `s3://${BUCKET}/${KEY}`])
    expect(cp.code, cp.stderr).toBe(0)
    expect(await api.download('team/cli')).toBe(first)
    expect((await api.versions('team/cli')).map((version) => version.source)).toEqual(['s3'])
    // The AWS CLI v1 keeps the endpoint's path: the bucket and key come after /s3.
    expect(server.output()).toContain(`"method":"PUT","path":"/s3/${BUCKET}/${KEY}"`)
  })

  it('lists the key with `aws s3 ls --recursive` and prints the state with `aws s3 cp … -`', async () => {
    const ls = await run(['s3', 'ls', `s3://${BUCKET}/team/`, '--recursive'])
    expect(ls.code, ls.stderr).toBe(0)
    expect(ls.stdout).toMatch(new RegExp(`\\s${first.length} ${KEY}\\n$`))
    const cat = await run(['s3', 'cp', `s3://${BUCKET}/${KEY}`, '-'])
    expect(cat.code, cat.stderr).toBe(0)
    expect(cat.stdout).toBe(first)
  })

  it('uploads a file past the 8 MiB multipart threshold as one version equal to the file', async () => {
    const big = JSON.stringify({ ...JSON.parse(first), serial: 2, pad: 'x'.repeat(9 << 20) })
    await writeFile(join(files, 'big.json'), big)
    const posts = () =>
      server.output().split(`"method":"POST","path":"/s3/${BUCKET}/${KEY}"`).length - 1
    const postsBefore = posts()
    const cp = await run(['s3', 'cp', 'big.json', `s3://${BUCKET}/${KEY}`])
    expect(cp.code, cp.stderr).toBe(0)
    // CreateMultipartUpload and CompleteMultipartUpload: it did go multipart.
    expect(posts() - postsBefore).toBe(2)
    const versions = await api.versions('team/cli')
    expect(versions).toHaveLength(2)
    expect(versions[0]).toMatchObject({ source: 's3', serial: 2, size: big.length })
    expect(await api.download('team/cli')).toBe(big)
  })

  it('answers `aws s3api head-object` with the size and ETag of the current version', async () => {
    const head = await run(['s3api', 'head-object', '--bucket', BUCKET, '--key', KEY])
    expect(head.code, head.stderr).toBe(0)
    const unit = await api.unit('team/cli')
    expect(JSON.parse(head.stdout)).toMatchObject({
      ContentLength: unit.size,
      ETag: `"${unit.sha256 ?? ''}"`,
      ContentType: 'application/json',
    })
  })
})

describe('the AWS SDK against the server process', () => {
  const server = useServer({ auth: true })
  const api = v1(server)
  const KEY = 'sdk/app/terraform.tfstate'
  let credentials: S3Credentials

  beforeAll(async () => {
    credentials = await issueS3Credentials(server.url, server.token)
  })

  const put = (s3: S3Client, body: string) =>
    s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: KEY,
        Body: Readable.from([Buffer.from(body)]),
        ContentLength: body.length,
      }),
    )

  /** `call` answers `expected` and leaves unit sdk/app just as it was. */
  async function expectRefused(expected: string, call: () => Promise<unknown>): Promise<void> {
    const before = snapshotOf(await api.unit('sdk/app'))
    expect(await s3ErrorOf(call())).toBe(expected)
    expect(snapshotOf(await api.unit('sdk/app'))).toEqual(before)
  }
  const next = async () => tfState(((await api.unit('sdk/app')).serial ?? 0) + 1, 'sdk')

  it('puts a stream body (aws-chunked, CRC32 trailer) as a version and gets it back', async () => {
    const s3 = s3Client(server.url, credentials)
    const sent: Record<string, string>[] = []
    afterSigning(s3, 'recordHeaders', (headers) => {
      sent.push({ ...headers })
    })
    const body = tfState(1, 'sdk')
    await put(s3, body)
    // The SDK's default for a stream: aws-chunked with a trailing CRC32.
    expect(sent[0]).toMatchObject({
      'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      'content-encoding': 'aws-chunked',
      'x-amz-trailer': 'x-amz-checksum-crc32',
    })
    const versions = await api.versions('sdk/app')
    expect(versions).toMatchObject([{ source: 's3', serial: 1, sha256: sha256Hex(body) }])
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }))
    expect(await got.Body?.transformToString()).toBe(body)
    expect(got.ETag).toBe(`"${sha256Hex(body)}"`)
  })

  it('refuses a request whose signature was altered after signing: SignatureDoesNotMatch', async () => {
    const s3 = s3Client(server.url, credentials)
    afterSigning(s3, 'flipSignatureDigit', (headers) => {
      headers['authorization'] = (headers['authorization'] ?? '').replace(
        /Signature=([0-9a-f])/,
        (_, digit: string) => `Signature=${digit === '0' ? '1' : '0'}`,
      )
    })
    await expectRefused('403 SignatureDoesNotMatch', async () => put(s3, await next()))
  })

  it('refuses a request signed with another secret: SignatureDoesNotMatch', async () => {
    const secret = credentials.SecretAccessKey
    const other = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
    const s3 = s3Client(server.url, { ...credentials, SecretAccessKey: other })
    await expectRefused('403 SignatureDoesNotMatch', async () => put(s3, await next()))
  })

  it('refuses a request signed 16 minutes ahead of the server: RequestTimeTooSkewed', async () => {
    // With one attempt the SDK has no second try to correct its clock with the server's Date
    // (`disableClockSkewCorrection` would also drop the offset itself).
    const s3 = s3Client(server.url, credentials, { systemClockOffset: 16 * 60 * 1000 })
    await expectRefused('403 RequestTimeTooSkewed', async () => put(s3, await next()))
  })

  it('refuses an opaque API token given as the session token: InvalidToken', async () => {
    const s3 = s3Client(server.url, { ...credentials, SessionToken: server.token })
    await expectRefused('400 InvalidToken', async () => put(s3, await next()))
  })

  it('serves a presigned GET until it expires, then answers 403 AccessDenied', async () => {
    const presigned = async (signingDate: Date) => {
      const s3 = s3Client(server.url, credentials)
      const signer: unknown = await s3.config.signer()
      if (!isPresigner(signer)) throw new Error('the S3 client has no presigning signer')
      const { port } = new URL(server.url)
      const signed = await signer.presign(
        {
          method: 'GET',
          protocol: 'http:',
          hostname: '127.0.0.1',
          port: Number(port),
          path: `/s3/${BUCKET}/${KEY}`,
          query: {},
          // As @aws-sdk/s3-request-presigner does: S3 presigned URLs leave the payload unsigned.
          headers: { host: `127.0.0.1:${port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
        },
        { signingDate, expiresIn: 60 },
      )
      const query = Object.entries(signed.query)
        .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
        .join('&')
      return fetch(`${server.url}${signed.path}?${query}`)
    }
    const fresh = await presigned(new Date())
    expect(fresh.status).toBe(200)
    expect(await fresh.text()).toBe(await api.download('sdk/app'))
    const expired = await presigned(new Date(Date.now() - 2 * 3600_000))
    expect(expired.status).toBe(403)
    expect(await expired.text()).toContain('<Code>AccessDenied</Code>')
  })

  it('echoes a key with control characters in its error escaped, as well-formed XML', async () => {
    // An escape sequence that would clear a terminal, a bell, DEL and the C1 CSI, as a client
    // sends them: percent-encoded in the path.
    const reply = await fetch(`${server.url}/s3/${BUCKET}/%1B%5B2J%07x%7F%C2%9B.tfstate`)
    expect(reply.status).toBe(403)
    const body = await reply.text()
    expect(body).toContain('<Resource>/s3/tfstate/%1B[2J%07x%7F%C2%9B.tfstate</Resource>')
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(body).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/)
  })

  it('refuses the S3 session token on /v1 with 401', async () => {
    const me = (token: string) =>
      fetch(`${server.url}/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } })
    expect((await me(server.token)).status).toBe(200)
    expect((await me(credentials.SessionToken)).status).toBe(401)
  })
})

describe('S3 session credentials past their lifetime', () => {
  const server = useServer({ auth: true, env: { SVC_TOKENS_ACCESS_TTL: '1s' } })
  const api = v1(server)

  it('are refused with 400 ExpiredToken once the session token expires, changing nothing', async () => {
    const credentials = await issueS3Credentials(server.url, server.token)
    const s3 = s3Client(server.url, credentials)
    const key = 'short/app/terraform.tfstate'
    const body = tfState(1, 'short')
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }))
    const before = snapshotOf(await api.unit('short/app'))
    // The token lives 1 s, and the server allows 5 s of clock difference: poll until refused.
    const answer = await waitFor(
      'the session token refused',
      async () => {
        const now = await s3ErrorOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key })))
        return now !== 'succeeded' && now
      },
      20_000,
      250,
    )
    expect(answer).toBe('400 ExpiredToken')
    const again = tfState(2, 'short')
    expect(
      await s3ErrorOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: again }))),
    ).toBe('400 ExpiredToken')
    expect(snapshotOf(await api.unit('short/app'))).toEqual(before)
  }, 30_000)
})

interface PresignableRequest {
  method: string
  protocol: string
  hostname: string
  port: number
  path: string
  query: Record<string, string>
  headers: Record<string, string>
}

/** The SDK's S3 signer (smithy's `SignatureV4`, wrapped for multi-region) can presign. */
interface Presigner {
  presign(
    request: PresignableRequest,
    options: { signingDate: Date; expiresIn: number },
  ): Promise<{ path: string; query: Record<string, string> }>
}

function isPresigner(signer: unknown): signer is Presigner {
  return typeof signer === 'object' && signer !== null && 'presign' in signer
}
