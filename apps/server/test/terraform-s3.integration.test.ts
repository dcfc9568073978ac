import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  httpsRequest,
  useTestCa,
  TerraformWorkspace,
  type TestCa,
  useServer,
  waitFor,
  type SuiteServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_MAIN, CliSession } from './support/cairn-cli'
import { RecordingProxy } from './support/recording-proxy'

const UNIT = 'team/app'
const KEY = `${UNIT}/terraform.tfstate`
/** Where Terraform's s3 backend cuts a state into parts, and reads it back in ranges. */
const PART_BYTES = 5 * 1024 * 1024

/**
 * The backend block as docs/terraform-s3.md shows it. The profile's `region` does not do: Terraform's s3
 * backend checks for a region (the block, AWS_REGION or AWS_DEFAULT_REGION) before it reads any
 * profile, and fails init with "Missing region value".
 */
function backendBlock(url: string): string {
  return `terraform {
  backend "s3" {
    bucket                      = "tfstate"
    key                         = "${KEY}"
    region                      = "auto"
    endpoints                   = { s3 = "${url}/s3" }
    use_path_style              = true
    use_lockfile                = true
    skip_credentials_validation = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
  }
}
`
}

/** Two resources and an output, on Cairn's S3 API. */
function configuration(url: string, input: string): string {
  return `${backendBlock(url)}
resource "terraform_data" "network" {
  input = "${input}"
}

resource "terraform_data" "app" {
  input = terraform_data.network.output
}

output "network" {
  value = terraform_data.network.output
}
`
}

/**
 * A state of more than 5 MiB, which Terraform uploads in parts and reads back in ranges: an
 * output of 1024 blocks of 6 KiB, each starting with its number, so bytes out of place show.
 */
function bigConfiguration(url: string): string {
  return `${backendBlock(url)}
output "big" {
  value = join("", [for i in range(1024) : format("%-6144s", "block \${i}")])
}
`
}

/** Terraform's error text with its box frame and line wrapping folded away. */
const folded = (text: string) => text.replace(/[│\s]+/g, ' ')

interface UnitBody {
  id: string
  serial: number | null
  lineage: string | null
  size: number | null
  version_count: number
  locked: boolean
  lock: { ID: string; Who: string } | null
}

interface VersionsBody {
  versions: { serial: number; size: number; source: string; author: string }[]
}

interface HistoryBody {
  events: { type: string; source?: string; lock?: { ID: string } }[]
}

interface V1Answer {
  status: number
  text: string
  json(): unknown
}

/**
 * Everything one Terraform user on the s3 backend needs: a CLI logged in to the server with the
 * admin token (its own HOME), an AWS config whose profile runs `cairn creds --json` as its
 * credential_process, and /v1 with the admin token to see what the server holds.
 */
function useS3Client(server: SuiteServer, tls: () => TestCa | undefined) {
  let dir: string
  let cli: CliSession
  let env: Record<string, string>

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-s3-aws-'))
    cli = await CliSession.create()
    const ca = tls()
    const caFlag = ca === undefined ? [] : ['--ca-file', ca.caPath]
    const login = await cli.run(
      ['login', '--server', server.url, '--token-stdin', ...caFlag],
      server.token,
    )
    expect(login.code, login.stderr).toBe(0)
    const command = [process.execPath, CLI_MAIN, 'creds', '--json', '--server', server.url]
    const configFile = join(dir, 'config')
    await writeFile(
      configFile,
      `[profile cairn]\nregion = auto\ncredential_process = ${[...command, ...caFlag].join(' ')}\n`,
    )
    env = {
      // The credential process runs with Terraform's environment: the CLI finds its login here.
      HOME: cli.home,
      AWS_CONFIG_FILE: configFile,
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
      AWS_PROFILE: 'cairn',
      AWS_SDK_LOAD_CONFIG: '1',
      // TerraformWorkspace passes none of the machine's variables; these say so for the AWS ones.
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_SESSION_TOKEN: '',
      AWS_CA_BUNDLE: ca?.caPath ?? '',
      ...(ca === undefined ? {} : { SSL_CERT_FILE: ca.caPath }),
    }
  })
  afterAll(async () => {
    await cli.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const v1 = async (
    path: string,
    init: { method?: string; body?: string } = {},
  ): Promise<V1Answer> => {
    const headers = { Authorization: `Bearer ${server.token}` }
    const ca = tls()
    let status: number
    let text: string
    if (ca === undefined) {
      const response = await fetch(`${server.url}/v1${path}`, { ...init, headers })
      status = response.status
      text = await response.text()
    } else {
      const answer = await httpsRequest(`${server.url}/v1${path}`, ca.ca, { ...init, headers })
      status = answer.status
      text = answer.body
    }
    return { status, text, json: () => JSON.parse(text) as unknown }
  }

  return {
    workspace: () => TerraformWorkspace.create(env),
    v1,
    unit: async (id = UNIT) => (await v1(`/units/${id}`)).json() as UnitBody,
    versions: async (id = UNIT) => (await v1(`/units/${id}/versions`)).json() as VersionsBody,
    lockThroughV1: async (who: string) => {
      const answer = await v1(`/units/${UNIT}/lock`, {
        method: 'POST',
        body: JSON.stringify({ Who: who, Operation: 'maintenance' }),
      })
      expect(answer.status, answer.text).toBe(200)
      return (answer.json() as { ID: string }).ID
    },
    unlockThroughV1: (lockId: string) =>
      v1(`/units/${UNIT}/unlock`, { method: 'DELETE', body: JSON.stringify({ ID: lockId }) }),
  }
}

describe("Terraform's s3 backend over plain http, with cairn creds as credential_process", () => {
  const server = useServer({ auth: true })
  const client = useS3Client(server, () => undefined)
  let tf: TerraformWorkspace
  beforeAll(async () => {
    tf = await client.workspace()
    await tf.write('main.tf', configuration(server.url, 'v1'))
  })
  afterAll(async () => {
    await tf.dispose()
  })

  it('initialises and applies, storing the state as a version of unit team/app from s3', async () => {
    const init = await tf.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toContain('Successfully configured the backend "s3"!')
    const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('Apply complete! Resources: 2 added')

    const stored = await client.unit()
    expect(stored).toMatchObject({ id: UNIT, version_count: 1, locked: false, lock: null })
    expect((await client.versions()).versions).toMatchObject([
      { source: 's3', author: 'local-admin' },
    ])
    const pulled = await tf.run(['state', 'pull'])
    expect(pulled.code, pulled.stderr).toBe(0)
    const downloaded = await client.v1(`/units/${UNIT}/download`)
    expect(downloaded.status).toBe(200)
    expect(JSON.parse(downloaded.text)).toEqual(JSON.parse(pulled.stdout))
    expect(stored.serial).toBe((JSON.parse(downloaded.text) as { serial: number }).serial)
    // Terraform took its own lock through the .tflock object, and released it.
    const lockPath = `"path":"/s3/tfstate/${KEY}.tflock"`
    expect(server.output()).toContain(`"method":"PUT",${lockPath},"status":200`)
    expect(server.output()).toContain(`"method":"DELETE",${lockPath},"status":204`)
  })

  it('adds a version with a higher serial on a second apply, and leaves the unit unlocked', async () => {
    const before = await client.unit()
    await tf.write('main.tf', configuration(server.url, 'v2'))
    const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    const after = await client.unit()
    expect(after).toMatchObject({ version_count: before.version_count + 1, locked: false })
    expect(after.serial).toBeGreaterThan(before.serial ?? 0)
    expect(after.lineage).toBe(before.lineage)
    expect((await tf.run(['output', '-raw', 'network'])).stdout).toBe('v2')
    expect((await client.versions()).versions.map((version) => version.source)).toEqual([
      's3',
      's3',
    ])
  })

  it('creates, lists and selects workspaces, a workspace being unit env:/<name>/team/app', async () => {
    const created = await tf.run(['workspace', 'new', 'dev'])
    expect(created.code, created.stderr).toBe(0)
    const list = await tf.run(['workspace', 'list'])
    expect(list.stdout).toMatch(/^\s+default$/m)
    expect(list.stdout).toMatch(/^\* dev$/m)
    expect((await tf.run(['workspace', 'select', 'dev'])).code).toBe(0)
    const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('Resources: 2 added')

    const units = (await client.v1('/units?prefix=env:')).json() as { units: { id: string }[] }
    expect(units.units.map((unit) => unit.id)).toEqual(['env:/dev/team/app'])
    const dev = await client.unit('env:/dev/team/app')
    expect(dev).toMatchObject({ locked: false })
    // `workspace new` writes an empty state, the apply its resources.
    expect(dev.version_count).toBe(2)
    expect((await client.versions('env:/dev/team/app')).versions[0]?.source).toBe('s3')

    const selected = await tf.run(['workspace', 'select', 'default'])
    expect(selected.code, selected.stderr).toBe(0)
    expect((await tf.run(['workspace', 'show'])).stdout.trim()).toBe('default')
    expect((await tf.run(['output', '-raw', 'network'])).stdout).toBe('v2')
    expect((await client.unit()).version_count).toBe(2)
  })

  it('fails apply -lock-timeout=1s while /v1 holds the lock, naming the holder, and writes nothing', async () => {
    const lockId = await client.lockThroughV1('ops@laptop')
    try {
      const before = await client.unit()
      await tf.write('main.tf', configuration(server.url, 'v3'))
      const apply = await tf.run(['apply', '-auto-approve', '-input=false', '-lock-timeout=1s'])
      expect(apply.code).not.toBe(0)
      const message = folded(apply.stderr)
      expect(message).toContain('Error acquiring the state lock')
      expect(message).toContain('PreconditionFailed')
      expect(message).toContain(`ID: ${lockId}`)
      expect(message).toContain('Who: ops@laptop')
      const after = await client.unit()
      expect(after.version_count).toBe(before.version_count)
      expect(after.lock?.ID).toBe(lockId)
    } finally {
      await client.unlockThroughV1(lockId)
    }
  })

  it('waits out a lock released within -lock-timeout, then applies', async () => {
    const lockId = await client.lockThroughV1('ops@laptop')
    const before = await client.unit()
    const refusals = () => server.output().split('"status":412').length
    // Terraform reads the lock it was refused (to name its holder) before it waits: a lock
    // released between the two leaves it nothing to read, and it gives up, as against S3.
    const lockReads = () =>
      server.output().split(/"method":"GET","path":"[^"]*\.tflock","status":200/).length
    const refusedBefore = refusals()
    const readBefore = lockReads()
    await tf.write('main.tf', configuration(server.url, 'v4'))
    const running = tf.start(['apply', '-auto-approve', '-input=false', '-lock-timeout=30s'])
    try {
      // Release the lock once Terraform was refused its .tflock and has read the holder's.
      await waitFor(
        'Terraform to be refused the lock once, and to read who holds it',
        () => refusals() > refusedBefore && lockReads() > readBefore,
        30_000,
      )
      expect((await client.unit()).lock?.ID).toBe(lockId)
      expect((await client.unlockThroughV1(lockId)).status).toBe(200)
      const apply = await running.done
      expect(apply.code, apply.stderr).toBe(0)
      expect(apply.stdout).toContain('Apply complete!')
    } finally {
      running.kill()
    }
    const after = await client.unit()
    expect(after).toMatchObject({ version_count: before.version_count + 1, locked: false })
    expect((await tf.run(['output', '-raw', 'network'])).stdout).toBe('v4')
  })

  it('force-unlocks a lock taken through /v1, and the unit records it', async () => {
    const lockId = await client.lockThroughV1('crashed-runner')
    const unlock = await tf.run(['force-unlock', '-force', lockId])
    expect(unlock.code, unlock.stderr).toBe(0)
    expect(unlock.stdout).toContain('Terraform state has been successfully unlocked!')
    expect(await client.unit()).toMatchObject({ locked: false, lock: null })
    const history = (await client.v1(`/units/${UNIT}/history`)).json() as HistoryBody
    expect(history.events[0]).toMatchObject({
      type: 'force_unlock',
      source: 's3',
      lock: { ID: lockId },
    })
  })

  it('refuses force-unlock with an ID that is not the lock, keeping the lock', async () => {
    const lockId = await client.lockThroughV1('ops@laptop')
    try {
      const unlock = await tf.run(['force-unlock', '-force', 'not-the-lock'])
      expect(unlock.code).not.toBe(0)
      expect(folded(unlock.stderr)).toContain(`does not match the existing lock ID '${lockId}'`)
      expect((await client.unit()).lock?.ID).toBe(lockId)
    } finally {
      await client.unlockThroughV1(lockId)
    }
  })

  it('fails apply while team/* is frozen, with the reason in its output, and applies after the unfreeze', async () => {
    const before = await client.unit()
    const created = await client.v1('/freezes', {
      method: 'POST',
      body: JSON.stringify({ prefix: 'team/*', reason: 'release freeze RF-7' }),
    })
    expect(created.status, created.text).toBe(201)
    const { id } = created.json() as { id: string }
    try {
      const frozen = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(frozen.code).not.toBe(0)
      expect(folded(frozen.stderr)).toContain('release freeze RF-7')
      const during = await client.unit()
      expect(during.version_count).toBe(before.version_count)
      expect(during.locked).toBe(false)
    } finally {
      expect((await client.v1(`/freezes/${id}`, { method: 'DELETE' })).status).toBe(204)
    }
    const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    expect((await client.unit()).locked).toBe(false)
  })

  describe('with a state over 5 MiB', () => {
    const big = 'big/app'
    let large: TerraformWorkspace
    beforeAll(async () => {
      large = await client.workspace()
      await large.write(
        'main.tf',
        bigConfiguration(server.url).replace(KEY, `${big}/terraform.tfstate`),
      )
    })
    afterAll(async () => {
      await large.dispose()
    })

    it('uploads it in parts and reads it back in ranges, byte for byte', async () => {
      expect((await large.run(['init', '-input=false'])).code).toBe(0)
      const apply = await large.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)

      const [version] = (await client.versions(big)).versions
      expect(version).toMatchObject({ source: 's3' })
      expect(version?.size).toBeGreaterThan(PART_BYTES)
      // The upload went through the multipart API (POST ?uploads, part PUTs, POST ?uploadId).
      const statePath = `"path":"/s3/tfstate/${big}/terraform.tfstate"`
      expect(server.output()).toContain(`"method":"POST",${statePath},"status":200`)

      const output = await large.run(['output', '-raw', 'big'])
      expect(output.code, output.stderr).toBe(0)
      expect(output.stdout).toHaveLength(1024 * 6144)
      expect(output.stdout.slice(1023 * 6144, 1023 * 6144 + 10)).toBe('block 1023')
      const pulled = await large.run(['state', 'pull'])
      expect(pulled.code, pulled.stderr).toBe(0)
      // Read back in 5 MiB ranges.
      expect(server.output()).toContain(`"method":"GET",${statePath},"status":206`)
      const downloaded = await client.v1(`/units/${big}/download`)
      expect(downloaded.text).toHaveLength(version?.size ?? 0)
      expect(JSON.parse(downloaded.text)).toEqual(JSON.parse(pulled.stdout))
      expect((await client.unit(big)).locked).toBe(false)
    })
  })

  describe('through a proxy that keeps what Terraform sends', () => {
    const unit = 'replay/app'
    let proxy: RecordingProxy
    let recorded: TerraformWorkspace
    beforeAll(async () => {
      proxy = await RecordingProxy.start(server.url)
      recorded = await client.workspace()
      await recorded.write(
        'main.tf',
        configuration(proxy.url, 'v1').replace(KEY, `${unit}/terraform.tfstate`),
      )
    })
    afterAll(async () => {
      await recorded.dispose()
      await proxy.close()
    })

    it("refuses Terraform's DELETE of its lock file sent again, keeping a later lock of the same principal", async () => {
      expect((await recorded.run(['init', '-input=false'])).code).toBe(0)
      const apply = await recorded.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      const deletes = proxy.recorded.filter(
        (request) => request.method === 'DELETE' && request.url.includes('.tflock'),
      )
      const release = deletes.at(-1)
      if (release === undefined) throw new Error('Terraform sent no DELETE of its .tflock')
      // Terraform 1.11 deletes its lock file with no condition: it compared the IDs itself.
      expect(release.headers['if-match']).toBeUndefined()
      const signed = String(release.headers['x-amz-date'])
      const signedAt = Date.parse(
        signed.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
      )
      // X-Amz-Date counts whole seconds: the later lock is taken in a later one.
      await waitFor('the next second', () => Date.now() >= signedAt + 1000, 5000)
      const taken = await client.v1(`/units/${unit}/lock`, {
        method: 'POST',
        body: JSON.stringify({ Who: 'ops@laptop', Operation: 'maintenance' }),
      })
      expect(taken.status, taken.text).toBe(200)
      const lockId = (taken.json() as { ID: string }).ID

      const replayed = await proxy.replay(release)
      expect(replayed.status, replayed.body).toBe(412)
      expect(replayed.body).toContain('<Code>PreconditionFailed</Code>')
      expect((await client.unit(unit)).lock?.ID).toBe(lockId)
      const before = (await client.v1(`/units/${unit}/history`)).json() as HistoryBody
      expect(before.events).toEqual([])

      // Terraform's own force-unlock, signed now, releases it.
      const unlock = await recorded.run(['force-unlock', '-force', lockId])
      expect(unlock.code, unlock.stderr).toBe(0)
      expect(await client.unit(unit)).toMatchObject({ locked: false, lock: null })
      const after = (await client.v1(`/units/${unit}/history`)).json() as HistoryBody
      expect(after.events).toMatchObject([{ type: 'force_unlock', lock: { ID: lockId } }])
    })
  })
})

describe("Terraform's s3 backend over https with a test CA (aws-chunked bodies)", () => {
  const tls = useTestCa()
  const server = useServer(() => ({
    auth: true,
    args: tls.serverArgs,
  }))
  const client = useS3Client(server, () => tls)
  let tf: TerraformWorkspace
  beforeAll(async () => {
    tf = await client.workspace()
  })
  afterAll(async () => {
    await tf.dispose()
  })

  it('initialises and applies twice, storing the decoded JSON state each time', async () => {
    expect(server.url).toMatch(/^https:/)
    await tf.write('main.tf', configuration(server.url, 'v1'))
    const init = await tf.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
    const first = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(first.code, first.stderr).toBe(0)

    await tf.write('main.tf', configuration(server.url, 'v2'))
    const second = await tf.run(['apply', '-auto-approve', '-input=false'], {
      env: { TF_LOG: 'debug' },
    })
    expect(second.code, second.stderr).toBe(0)
    // What makes this case: Terraform sent its state aws-chunked, with a trailing checksum.
    expect(second.stderr).toContain('STREAMING-UNSIGNED-PAYLOAD-TRAILER')
    expect(second.stderr).toContain('x_amz_trailer=x-amz-checksum-sha256')
    expect((await tf.run(['output', '-raw', 'network'])).stdout).toBe('v2')

    const stored = await client.unit()
    expect(stored).toMatchObject({ version_count: 2, locked: false })
    const downloaded = await client.v1(`/units/${UNIT}/download`)
    const state = JSON.parse(downloaded.text) as { serial: number; outputs: unknown }
    expect(state.serial).toBe(stored.serial)
    expect(state.outputs).toEqual({ network: { value: 'v2', type: 'string' } })
    expect(JSON.parse((await tf.run(['state', 'pull'])).stdout)).toEqual(state)
    expect((await client.versions()).versions.map((version) => version.source)).toEqual([
      's3',
      's3',
    ])
  })
})
