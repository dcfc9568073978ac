import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { useRgw } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)

const README = new URL('../README.md', import.meta.url)
const SECTION = '## Layout in the bucket'
/** The settings the README's first block asks the reader for, which the suite sets itself. */
const SETTINGS = ['BUCKET', 'PREFIX', 'KEY', 'EP']

/** The `sh` blocks of the README's layout section, in order. */
async function shellBlocks(): Promise<string[]> {
  const text = await readFile(README, 'utf8')
  const start = text.indexOf(`\n${SECTION}\n`)
  if (start === -1) throw new Error(`the README has no "${SECTION}" section`)
  const end = text.indexOf('\n## ', start + SECTION.length + 2)
  const section = text.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '')
}

/** A value in single quotes for the shell (the values here hold no single quote). */
const quoted = (value: string) => `'${value}'`

/** 9999999999999 minus the time in milliseconds: the name of a version record, newest first. */
const versionName = (iso: string) => `${9_999_999_999_999 - Date.parse(iso)}.json`
/** A state's key name: the time of the write, compact, and a random part. */
const stateName = (iso: string, random: string) =>
  `${iso.replaceAll('-', '').replaceAll(':', '')}-${random}.tfstate`

/** A Terraform state; non-ASCII and a trailing newline, so a copy must be byte for byte. */
const state = (serial: number, note: string) =>
  `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: '2c1f8a4e-6b3d-4f7e-9a0c-5d8e7f6a1b2c',
      outputs: { note: { value: `${note} — größe ✓`, type: 'string' } },
      resources: [],
    },
    null,
    2,
  )}\n`

interface Version {
  serial: number
  written: string
  random: string
  bytes: string
}

/**
 * The README's AWS CLI commands, run as they are written against a bucket holding the objects of
 * two units laid out as the README says: `team/app` (an earlier epoch and three versions in the
 * current one) and `team/app/prod`, whose keys begin with `team/app` too. The objects are written
 * here with the SDK, so the suite checks the README, not the code that writes the layout.
 */
describe('the README layout section, run with the AWS CLI', () => {
  const rgw = useRgw({ shared: true })
  const prefix = 'cairn/'
  const epoch = 'emx2k9q4p7r'
  const oldEpoch = 'emw0a1b2c3d'
  const versions: Version[] = [
    { serial: 1, written: '2026-03-01T09:15:02.123Z', random: '4f1e9c2a7b3d6e80', bytes: '' },
    { serial: 2, written: '2026-03-02T10:00:00.007Z', random: '0a9b8c7d6e5f4a3b', bytes: '' },
    { serial: 3, written: '2026-03-03T23:59:59.999Z', random: 'c3d2e1f0a9b8c7d6', bytes: '' },
  ].map((version) => ({ ...version, bytes: state(version.serial, `app ${version.serial}`) }))
  const stateKey = (unit: string, unitEpoch: string, version: Version) =>
    `units/${unit}!/${unitEpoch}/states/${stateName(version.written, version.random)}`
  const versionRecord = (version: Version) => ({
    serial: version.serial,
    lineage: '2c1f8a4e-6b3d-4f7e-9a0c-5d8e7f6a1b2c',
    created: version.written,
    object: stateKey('team/app', epoch, version),
  })
  const [first, second, current] = versions as [Version, Version, Version]
  const record = `${JSON.stringify({
    id: 'team/app',
    lock: null,
    tags: { team: 'app' },
    dependencies: [{ from: 'team/network', output: 'vpc_id' }],
    current: versionRecord(current),
  })}\n`
  const prodState = state(7, 'prod')
  const prodKey = stateKey('team/app/prod', 'emz9y8x7w6v', {
    serial: 7,
    written: '2026-03-04T08:00:00.000Z',
    random: 'ffffeeeeddddcccc',
    bytes: prodState,
  })
  const oldState = state(9, 'before the unit was deleted')
  const oldKey = `units/team/app!/${oldEpoch}/states/20250101T000000.000Z-1111222233334444.tfstate`

  let bucket: string
  /** The directory the commands run in; empty until made. */
  let work = ''
  let output: string

  beforeAll(async () => {
    await run('aws', ['--version']).catch((error: unknown) => {
      throw new Error(
        `the AWS CLI is missing: install it with \`apt-get install -y awscli\` (${String(error)})`,
      )
    })
    bucket = await rgw.createBucket()
    const s3 = new S3Client({
      endpoint: rgw.endpoint,
      region: rgw.region,
      credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    })
    const objects: [string, string][] = [
      ['unit-records/team/app!.json', record],
      ...versions.map((version): [string, string] => [
        stateKey('team/app', epoch, version),
        version.bytes,
      ]),
      ...[first, second].map((version): [string, string] => [
        `units/team/app!/${epoch}/versions/${versionName(version.written)}`,
        `${JSON.stringify(versionRecord(version))}\n`,
      ]),
      [
        `units/team/app!/${epoch}/history/${versionName('2026-03-02T11:00:00.000Z')}-9f8e7d6c.json`,
        '{"event":"force_unlock"}\n',
      ],
      [oldKey, oldState],
      [
        'unit-records/team/app/prod!.json',
        `${JSON.stringify({ id: 'team/app/prod', lock: null, tags: {}, dependencies: [], current: { serial: 7, object: prodKey } })}\n`,
      ],
      [prodKey, prodState],
      ['auth/tokens/ct_0123456789abcdef.json', '{"sha256":"00"}\n'],
    ]
    try {
      for (const [key, body] of objects) {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: body }))
      }
    } finally {
      s3.destroy()
    }

    // The reader's settings, then the section's other blocks exactly as the README has them.
    const [settings = '', ...commands] = await shellBlocks()
    const asked = [...settings.matchAll(/^([A-Z_]+)=/gm)].map((match) => match[1])
    expect(asked, 'the settings the README asks for').toEqual(SETTINGS)
    expect(commands.join('\n')).toContain('aws s3 cp')
    work = await mkdtemp(join(tmpdir(), 'cairn-readme-layout-'))
    const script = [
      'set -euo pipefail',
      `BUCKET=${quoted(bucket)}`,
      `PREFIX=${quoted(prefix)}`,
      `KEY=${quoted('team/app!')}`,
      `EP=${quoted(`--endpoint-url=${rgw.endpoint}`)}`,
      ...commands,
    ].join('\n')
    // Nothing from the developer's own AWS configuration: the test kit's user, through the
    // environment.
    const ran = await run('bash', ['-c', script], {
      cwd: work,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: work,
        AWS_CONFIG_FILE: join(work, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-credentials'),
        AWS_ACCESS_KEY_ID: rgw.accessKeyId,
        AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
        AWS_DEFAULT_REGION: rgw.region,
        AWS_EC2_METADATA_DISABLED: 'true',
      },
      timeout: 120_000,
    })
    output = ran.stdout
  }, 180_000)
  afterAll(async () => {
    if (work !== '') await rm(work, { recursive: true, force: true })
  })

  const file = (path: string) => readFile(join(work, path), 'utf8')

  it('lists every unit by the key of its record', () => {
    // The listing's lines are bare keys; `aws s3 cp` prints its own lines (`download: ...`).
    const keys = output.split('\n').filter((line) => line.startsWith(`${prefix}unit-records/`))
    expect(keys).toEqual([
      `${prefix}unit-records/team/app!.json`,
      `${prefix}unit-records/team/app/prod!.json`,
    ])
  })

  it("copies out a unit's record and its current state byte for byte", async () => {
    expect(await file('record.json')).toBe(record)
    expect(await file('current.tfstate')).toBe(current.bytes)
  })

  it("lists the earlier versions' records newest first", () => {
    const listed = output
      .split('\n')
      // `aws s3 ls` lines: date, time, size, name.
      .map((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +\d+ (\d{13}\.json)$/.exec(line)?.[1])
      .filter((name) => name !== undefined)
    expect(listed).toEqual([versionName(second.written), versionName(first.written)])
  })

  it("copies out every version of the current epoch and no other unit's", async () => {
    const names = versions.map((version) => stateName(version.written, version.random))
    expect((await readdir(join(work, 'states'))).sort()).toEqual(names)
    for (const version of versions) {
      const name = stateName(version.written, version.random)
      expect(await file(join('states', name))).toBe(version.bytes)
    }
  })

  it('copies out an earlier version by its record', async () => {
    expect(await file('previous.tfstate')).toBe(second.bytes)
  })

  it("backs up the unit's objects of every epoch, and only the unit's", async () => {
    const unitDir = join('backup', 'units', 'team', 'app!')
    expect((await readdir(join(work, unitDir))).sort()).toEqual([epoch, oldEpoch].sort())
    expect(await file(join(unitDir, oldKey.slice('units/team/app!/'.length)))).toBe(oldState)
    const currentKey = stateKey('team/app', epoch, current)
    expect(await file(join(unitDir, currentKey.slice('units/team/app!/'.length)))).toBe(
      current.bytes,
    )
    expect(await file(join('backup', 'unit-records', 'team', 'app!.json'))).toBe(record)
    // team/app/prod's keys begin with team/app too; the `!` keeps them out.
    await expect(readdir(join(work, 'backup', 'units', 'team', 'app'))).rejects.toThrow()
  })
})
