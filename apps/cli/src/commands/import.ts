import { defineCommand } from 'citty'
import {
  importSource,
  Mapping,
  MappingConflictError,
  MappingError,
  SourceError,
  sourceOf,
  SourceUrlError,
  type ImportSummary,
  type UnitReport,
} from '@cairn/migrate'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { bytes, count, table } from '../output/output'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'import',
    description:
      'Bring states into Cairn with their whole history, from HCP Terraform, TFE or OTF, a versioned S3 bucket, GitLab, a directory or a Cairn export',
  },
  args: {
    source: {
      type: 'positional',
      required: true,
      description:
        'tfe+https://<host>/<org>[/<workspace>], s3://<bucket>[/<prefix>], gitlab+https://<host>/<project>[#<state>], a directory, or an export .tar',
    },
    ...common,
    'dry-run': {
      type: 'boolean',
      description:
        'print what would be imported (versions, serial gaps, lineage changes, bytes, target) and write nothing',
    },
    map: { type: 'string', description: 'a mapping file (JSON rules from source names to units)' },
    prefix: { type: 'string', description: 'put this before every unit ID (such as old/)' },
    token: {
      type: 'string',
      description: "the source's token (default: TFE_TOKEN, TF_TOKEN_<host>, GITLAB_TOKEN)",
    },
    endpoint: {
      type: 'string',
      description: 'an S3-compatible endpoint for s3:// (Ceph RGW, MinIO)',
    },
    region: { type: 'string', description: 'the region of an s3:// source (default: AWS_REGION)' },
    'lock-source': {
      type: 'boolean',
      description: "hold each TFE workspace's lock while it is copied",
    },
  },
  async run({ args }) {
    let source
    let mapping
    try {
      source = sourceOf(args.source, {
        ...(args.token === undefined ? {} : { token: args.token }),
        ...(args.endpoint === undefined ? {} : { endpoint: args.endpoint }),
        ...(args.region === undefined ? {} : { region: args.region }),
      })
      mapping = args.map === undefined ? undefined : await Mapping.read(args.map)
    } catch (error) {
      if (error instanceof SourceUrlError || error instanceof MappingError)
        throw new UsageError(error.message)
      throw error
    }
    if (args['lock-source'] === true && !source.locks) {
      throw new UsageError(
        `${source.description} has no locks to hold: --lock-source is for TFE sources`,
      )
    }
    const context = await openContext(args)
    const dryRun = args['dry-run'] === true
    const tty = process.stderr.isTTY && !context.out.json
    let summary: ImportSummary
    try {
      summary = await importSource(context.client, source, {
        dryRun,
        lockSource: args['lock-source'] === true,
        ...(mapping === undefined ? {} : { mapping }),
        ...(args.prefix === undefined ? {} : { prefix: args.prefix }),
        ...(tty
          ? {
              onProgress: (step) =>
                process.stderr.write(
                  `\r${step.target}: ${step.done}/${step.total} versions, ${bytes(step.bytes)}\u001b[K`,
                ),
            }
          : {}),
      })
    } catch (error) {
      if (error instanceof MappingConflictError || error instanceof SourceError)
        throw new CLIError(error.message)
      throw error
    } finally {
      if (tty) process.stderr.write('\r\u001b[K')
    }
    context.out.result(summary, () => (dryRun ? dryRunText(summary) : summaryText(summary)))
    const failed = summary.units.filter((unit) => unit.failure !== undefined)
    if (failed.length > 0) {
      throw new CLIError(
        `${failed.length} of ${count(summary.units.length, 'unit')} did not import whole; run the same command again to resume`,
      )
    }
  },
})

function dryRunText(summary: ImportSummary): string {
  const rows = summary.units.map((unit) => [
    unit.name,
    unit.target,
    String(unit.versions),
    serialText(unit),
    unit.gaps.length === 0 ? '-' : gapText(unit.gaps),
    String(unit.lineageChanges),
    bytes(unit.bytes),
    unit.failure === undefined
      ? `${unit.alreadyImported} already imported${unit.notJson > 0 ? `, ${unit.notJson} not JSON` : ''}`
      : `failed: ${unit.failure}`,
  ])
  const total = summary.units.reduce((sum, unit) => sum + unit.versions, 0)
  return `${table(['SOURCE', 'UNIT', 'VERSIONS', 'SERIALS', 'GAPS', 'LINEAGE CHANGES', 'BYTES', 'NOTE'], rows)}\nDry run of ${summary.source}: ${count(summary.units.length, 'unit')}, ${count(total, 'version')}; nothing was written.`
}

function summaryText(summary: ImportSummary): string {
  const units = summary.units
  const imported = units.reduce((sum, unit) => sum + unit.imported, 0)
  const importedBytes = units.reduce((sum, unit) => sum + unit.importedBytes, 0)
  const skipped = units.reduce((sum, unit) => sum + unit.alreadyImported, 0)
  const lines = [
    `Imported ${count(imported, 'version')} (${bytes(importedBytes)}) into ${count(units.length, 'unit')} from ${summary.source}; ${skipped} ${skipped === 1 ? 'was' : 'were'} there already.`,
  ]
  for (const unit of units) {
    if (unit.notJson > 0)
      lines.push(
        `  ${unit.target}: ${count(unit.notJson, 'version')} not JSON; kept as the source kept ${unit.notJson === 1 ? 'it' : 'them'}`,
      )
    if (unit.failure !== undefined) lines.push(`  ${unit.target}: failed: ${unit.failure}`)
  }
  return lines.join('\n')
}

function serialText(unit: UnitReport): string {
  const known = unit.serials.filter((serial): serial is number => serial !== null)
  if (known.length === 0) return '-'
  return `${known[0]}..${known.at(-1)}`
}

function gapText(gaps: number[]): string {
  return gaps.length > 5
    ? `${gaps.slice(0, 5).join(', ')} and ${gaps.length - 5} more`
    : gaps.join(', ')
}
