// Moving in and out (docs/migration.md): `cairn import` of a versioned bucket on Ceph RGW (units ×
// versions of a given size) against the same versions read straight from the bucket with the AWS
// SDK in the same run; and `cairn export` of many units to one archive against `tar` of the
// server's own data directory. Both with the CLI's peak resident memory. See bench/README.md.
import { execFile } from 'node:child_process'
import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import { runCli, type CliRun } from '../harness/cli'
import { makeTemporaryDir } from '../harness/cleanup'
import type { FlagValues } from '../harness/flags'
import { fmtMiB, fmtRatio, fmtSeconds } from '../harness/format'
import { pool, request } from '../harness/http'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import { openServerArgs, startServer } from '../harness/server-process'
import { startCeph } from './s3/ceph'
import { s3Client } from './s3/s3-direct'

const BUCKET = 'migration'
const MiB = 1024 * 1024

const flags = {
  units: {
    kind: 'whole',
    default: 100,
    min: 1,
    max: 10_000,
    help: 'units in the bucket to import',
  },
  versions: { kind: 'whole', default: 20, min: 1, max: 1000, help: 'versions of each unit' },
  mib: { kind: 'whole', default: 1, min: 1, max: 512, help: 'MiB of each version' },
  'export-units': {
    kind: 'whole',
    default: 10_000,
    min: 1,
    max: 100_000,
    help: 'units (one small version each) on the server to export',
  },
} as const

type Values = FlagValues<typeof flags>

/** A Terraform state of about `bytes`: one resource whose attribute holds the padding. */
function state(unit: number, serial: number, bytes: number): string {
  const head = {
    version: 4,
    terraform_version: '1.9.0',
    serial,
    lineage: `bench-${unit}`,
    outputs: {},
  }
  const shell = JSON.stringify({
    ...head,
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'pad',
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [{ attributes: { input: '' } }],
      },
    ],
  })
  return shell.replace('"input":""', `"input":"${'x'.repeat(Math.max(0, bytes - shell.length))}"`)
}

type Timed = Pick<CliRun, 'ms' | 'peak'>

async function seedBucket(s3: S3Client, values: Values): Promise<number> {
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }))
  await s3.send(
    new PutBucketVersioningCommand({
      Bucket: BUCKET,
      VersioningConfiguration: { Status: 'Enabled' },
    }),
  )
  let bytes = 0
  await pool(values.units, 4, async (unit) => {
    for (let serial = 1; serial <= values.versions; serial += 1) {
      const body = state(unit, serial, values.mib * MiB)
      bytes += body.length
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `u${String(unit).padStart(5, '0')}/terraform.tfstate`,
          Body: body,
        }),
      )
    }
  })
  return bytes
}

/** The floor of the import: every version read straight from the bucket, four units at a time. */
async function readDirectly(s3: S3Client): Promise<number> {
  const started = performance.now()
  const versions: { Key: string; VersionId: string }[] = []
  const at = (index: number) => versions[index] ?? { Key: '', VersionId: '' }
  let keyMarker: string | undefined
  let versionMarker: string | undefined
  for (;;) {
    const page = await s3.send(
      new ListObjectVersionsCommand({
        Bucket: BUCKET,
        KeyMarker: keyMarker,
        VersionIdMarker: versionMarker,
      }),
    )
    for (const version of page.Versions ?? [])
      versions.push({ Key: version.Key ?? '', VersionId: version.VersionId ?? '' })
    if (page.IsTruncated !== true) break
    keyMarker = page.NextKeyMarker
    versionMarker = page.NextVersionIdMarker
  }
  let read = 0
  await pool(versions.length, 4, async (index) => {
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, ...at(index) }))
    for await (const chunk of object.Body as AsyncIterable<Uint8Array>) read += chunk.byteLength
  })
  if (read === 0) throw new BenchError('the bucket held no bytes to read')
  return performance.now() - started
}

/**
 * The floor of moving the bytes in: every version read from the bucket and written to a server
 * as a plain upload (the `http` backend's POST), oldest first per unit, four units at a time.
 */
async function copyPlainly(s3: S3Client, origin: string, values: Values): Promise<number> {
  const started = performance.now()
  await pool(values.units, 4, async (unit) => {
    const key = `u${String(unit).padStart(5, '0')}/terraform.tfstate`
    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: key }))
    const versions = [...(listed.Versions ?? [])].sort(
      (a, b) => (a.LastModified?.getTime() ?? 0) - (b.LastModified?.getTime() ?? 0),
    )
    for (const version of versions) {
      const object = await s3.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: key, VersionId: version.VersionId }),
      )
      const answer = await fetch(`${origin}/v1/backend/copy/u${unit}`, {
        method: 'POST',
        body: object.Body as AsyncIterable<Uint8Array> as unknown as ReadableStream,
        duplex: 'half',
      })
      if (!answer.ok)
        throw new BenchError(`the plain copy answered ${answer.status}: ${await answer.text()}`)
    }
  })
  return performance.now() - started
}

export const migration = defineBench({
  name: 'migration',
  script: 'bench:migrate',
  summary:
    'cairn import of a versioned bucket on Ceph RGW against reading the same versions straight from it; cairn export of many units against tar of the data directory; the CLI\u2019s peak memory for both.',
  flags,
  quick: { units: 5, versions: 3, 'export-units': 200 },
  inAll: false,
  run: async (values) => {
    // The SDK's eight-line notice that its 2027 releases need Node 22, silenced as the server does.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'
    const dir = await makeTemporaryDir('cairn-bench-migration-')
    progress('starting Ceph RGW')
    const rgw = await startCeph({
      memoryBytes:
        Math.max(1, Math.ceil((values.units * values.versions * values.mib * 1.3) / 1024)) *
        1024 ** 3,
    })
    const s3 = s3Client(rgw)
    const env = {
      AWS_ACCESS_KEY_ID: rgw.accessKeyId,
      AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      AWS_REGION: rgw.region,
    }
    try {
      progress(
        `writing ${values.units} units × ${values.versions} versions of ${values.mib} MiB to the bucket`,
      )
      const bytes = await seedBucket(s3, values)
      progress('reading every version straight from the bucket (the baseline)')
      const directMs = await readDirectly(s3)
      const importer = await startServer('import target', openServerArgs(join(dir, 'import')))
      let imported: CliRun
      let copyMs: number
      try {
        progress(
          'reading every version and uploading it plainly (the floor of moving the bytes in)',
        )
        copyMs = await copyPlainly(s3, importer.origin, values)
        progress('cairn import')
        imported = await runCli(
          [
            'import',
            `s3://${BUCKET}`,
            '--endpoint',
            rgw.endpoint,
            '--server',
            importer.origin,
            '--json',
          ],
          env,
        )
        const summary = JSON.parse(imported.stdout) as {
          units: { imported: number; failure?: string }[]
        }
        const count = summary.units.reduce((sum, unit) => sum + unit.imported, 0)
        if (count !== values.units * values.versions)
          throw new BenchError(
            `the import brought ${count} versions, not ${values.units * values.versions}`,
          )
      } finally {
        await importer.stop()
      }

      const exportDir = join(dir, 'export')
      const exporter = await startServer('export source', openServerArgs(exportDir))
      let exported: Timed
      let archiveBytes: number
      try {
        progress(`writing ${values['export-units']} units to export`)
        await pool(values['export-units'], 16, async (unit) => {
          await request(exporter, 'POST', `/v1/backend/exp/u${String(unit).padStart(6, '0')}`, {
            body: state(unit, 1, 1024),
            expect: 200,
          })
        })
        progress('cairn export')
        const archive = join(dir, 'export.tar')
        exported = await runCli(['export', '--out', archive, '--server', exporter.origin])
        archiveBytes = (await stat(archive)).size
        await rm(archive)
      } finally {
        await exporter.stop()
      }
      progress('tar of the data directory (the baseline)')
      const tarStarted = performance.now()
      await promisify(execFile)('tar', ['-cf', join(dir, 'data.tar'), '-C', exportDir, '.'])
      const tarMs = performance.now() - tarStarted
      return report(values, { bytes, directMs, copyMs, imported, exported, archiveBytes, tarMs })
    } finally {
      await rgw.stop()
    }
  },
})

function report(
  values: Values,
  run: {
    bytes: number
    directMs: number
    copyMs: number
    imported: Timed
    exported: Timed
    archiveBytes: number
    tarMs: number
  },
): BenchReport {
  const versions = values.units * values.versions
  const figures: Figure[] = [
    {
      figure: `import, ${values.units} units × ${values.versions} versions of ${values.mib} MiB from RGW`,
      cairn: fmtSeconds(run.imported.ms),
      baseline: fmtSeconds(run.copyMs),
      ratio: fmtRatio(run.imported.ms / run.copyMs),
    },
    {
      figure: `export, ${values['export-units']} units`,
      cairn: fmtSeconds(run.exported.ms),
      baseline: fmtSeconds(run.tarMs),
      ratio: fmtRatio(run.exported.ms / run.tarMs),
    },
  ]
  return {
    title:
      'Cairn migration benchmark: cairn import from a versioned bucket, cairn export to an archive',
    facts: [
      `import: ${versions} versions, ${fmtMiB(run.bytes)} MiB, from one Ceph RGW gateway into a server on fs`,
      `export: ${values['export-units']} units of one 1 KiB version each, an archive of ${fmtMiB(run.archiveBytes)} MiB`,
    ],
    tables: [
      {
        columns: ['run', 'time', 'baseline', 'ratio', 'floor', 'ratio to floor', 'CLI peak RSS'],
        rows: [
          [
            'import',
            fmtSeconds(run.imported.ms),
            fmtSeconds(run.copyMs),
            fmtRatio(run.imported.ms / run.copyMs),
            fmtSeconds(run.directMs),
            fmtRatio(run.imported.ms / run.directMs),
            `${fmtMiB(run.imported.peak)} MiB`,
          ],
          [
            'export',
            fmtSeconds(run.exported.ms),
            fmtSeconds(run.tarMs),
            fmtRatio(run.exported.ms / run.tarMs),
            '-',
            '-',
            `${fmtMiB(run.exported.peak)} MiB`,
          ],
        ],
      },
    ],
    notes: [
      'import baseline: every version read from the bucket and uploaded to the same server as a plain http-backend POST, oldest first per unit, four units at a time (as the importer copies four units at a time): moving the same bytes in without keeping where they came from. Floor: the versions only read from the bucket with the AWS SDK, four at a time.',
      'export baseline: tar of the server\u2019s data directory, the bytes an export must at least read and write.',
      'CLI peak RSS: the importer\u2019s and exporter\u2019s maximum resident set (GNU time %M); the goal is under 200 MiB whatever the count.',
    ],
    figures,
  }
}
