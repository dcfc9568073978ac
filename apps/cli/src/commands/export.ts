import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { defineCommand } from 'citty'
import { exportArchive, exportToS3 } from '@cairn/migrate'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { bytes, count } from '../output/output'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'export',
    description:
      'Write every unit and every version as one archive (to stdout, or --out), or into a versioned S3 bucket (--to s3://bucket/prefix)',
  },
  args: {
    ...common,
    prefix: { type: 'string', description: 'only the units whose IDs start with this' },
    out: {
      type: 'string',
      alias: 'o',
      description: 'write the archive to this file instead of stdout',
    },
    to: {
      type: 'string',
      description:
        "write each unit's versions, oldest first, into a versioned bucket: s3://<bucket>[/<prefix>]",
    },
    endpoint: {
      type: 'string',
      description: 'an S3-compatible endpoint for --to (Ceph RGW, MinIO)',
    },
    region: { type: 'string', description: 'the region of the --to bucket (default: AWS_REGION)' },
  },
  async run({ args }) {
    const context = await openContext(args)
    const prefix = args.prefix ?? ''
    const tty = process.stderr.isTTY && !context.out.json
    const onProgress = tty
      ? (step: { unit: string; done: number; total: number; bytes: number }) =>
          process.stderr.write(`\r${step.done}/${step.total} units, ${bytes(step.bytes)}\u001b[K`)
      : undefined
    const options = { prefix, ...(onProgress === undefined ? {} : { onProgress }) }
    if (args.to !== undefined) {
      const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(args.to)
      if (match === null)
        throw new UsageError(`--to ${args.to}: name a bucket: s3://<bucket>[/<prefix>]`)
      let report
      try {
        report = await exportToS3(
          context.client,
          {
            bucket: match[1] ?? '',
            prefix: match[2] ?? '',
            ...(args.endpoint === undefined ? {} : { endpoint: args.endpoint }),
            ...(args.region === undefined ? {} : { region: args.region }),
          },
          options,
        )
      } catch (error) {
        throw new CLIError(error instanceof Error ? error.message : String(error))
      } finally {
        if (tty) process.stderr.write('\r\u001b[K')
      }
      context.out.result(
        report,
        () =>
          `Wrote ${count(report.versions, 'version')} (${bytes(report.bytes)}) of ${count(report.units, 'unit')} to ${args.to}; ${report.skipped} ${report.skipped === 1 ? 'was' : 'were'} there already.`,
      )
      return
    }
    if (args.out === undefined || args.out === '-') {
      if (process.stdout.isTTY) {
        throw new UsageError(
          'the archive is binary: redirect it (cairn export > cairn-export.tar) or name a file with --out',
        )
      }
      await pipeline(Readable.from(exportArchive(context.client, options)), process.stdout, {
        end: false,
      })
      if (tty) process.stderr.write('\r\u001b[K')
      return
    }
    // Written beside the target and renamed, so an interrupted export leaves no half archive.
    const partial = `${args.out}.partial`
    try {
      await pipeline(
        Readable.from(exportArchive(context.client, options)),
        createWriteStream(partial, { mode: 0o600 }),
      )
      await rename(partial, args.out)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    } finally {
      if (tty) process.stderr.write('\r\u001b[K')
    }
    context.out.note(`Exported to ${args.out}.`)
  },
})
