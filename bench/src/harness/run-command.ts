import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { BenchError } from './bench-error'
import type { AnyValues, Bench } from './bench-definition'
import { cleanUp, installCleanup, isInterrupted } from './cleanup'
import { COMMON_HELP, flagsHelp, parseFlags, showValue } from './flags'
import type { CommonFlags } from './flags'
import { machineFacts } from './machine'
import { root } from './paths'
import { figuresTable, renderReport, renderResultsFile } from './report'
import { renderTable } from './table'
import type { Figure } from './report'

/** Where a run's output goes; the process's streams, or a test's buffers. */
export interface Output {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

const processOutput: Output = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

/** The exit statuses of every bench: 0 whatever the figures, 1 on a failure, 2 on bad flags. */
export const EXIT = { ok: 0, failed: 1, badFlags: 2 } as const

/** How the command was typed, for the results file: the npm script when it came through one. */
export function commandLine(name: string, argv: readonly string[], script?: string): string {
  const args = argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ')
  if (script !== undefined && process.env['npm_lifecycle_event'] === script) {
    return `npm run ${script}${args === '' ? '' : ` -- ${args}`}`
  }
  return `node bench/dist/main.js ${name}${args === '' ? '' : ` ${args}`}`
}

export function usage(bench: Bench): string {
  return (
    `usage: npm run ${bench.script} [-- options]   (or node bench/dist/main.js ${bench.name} [options])\n\n` +
    `${bench.summary}\n\n` +
    flagsHelp(bench.flags, bench.quick) +
    COMMON_HELP
  )
}

export function mainUsage(registry: readonly Bench[]): string {
  const width = Math.max(...registry.map((bench) => bench.script.length)) + 2
  return (
    'usage: npm run <script> [-- options]   (or node bench/dist/main.js <bench> [options])\n\n' +
    registry
      .map((bench) => `  ${bench.script.padEnd(width)}${bench.name}: ${firstSentence(bench)}\n`)
      .join('') +
    `  ${'bench:all'.padEnd(width)}all: every bench above${registry.some((bench) => !bench.inAll) ? ' that needs nothing the machine may lack' : ''}, each --quick, and one table of their figures\n\n` +
    'Each takes --help.\n'
  )
}

function firstSentence(bench: Bench): string {
  const end = bench.summary.indexOf('. ')
  return end < 0 ? bench.summary : bench.summary.slice(0, end + 1)
}

function dateOf(now: Date): string {
  return now.toISOString().slice(0, 10)
}

/** Writes a results file into `dir`, never over another: `-2`, `-3` after a name already taken. */
async function writeResults(dir: string, base: string, text: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  let path = join(dir, `${base}.md`)
  for (let n = 2; existsSync(path); n += 1) path = join(dir, `${base}-${n}.md`)
  await writeFile(path, text)
  return path
}

function shown(path: string): string {
  return path.startsWith(`${root}/`) ? relative(root, path) : path
}

function plan(bench: Bench, values: AnyValues): string {
  const flags = Object.entries(values)
    .filter(([, value]) => value !== false)
    .map(([name, value]) => (value === true ? `--${name}` : `--${name} ${showValue(value)}`))
    .join(' ')
  return `${bench.script}: would run ${bench.name} with ${flags}\n`
}

interface Parsed {
  readonly values: AnyValues
  readonly common: CommonFlags
}

/** Parses a bench's flags; the exit status when the run ends there (help, bad flags). */
function parseBench(bench: Bench, argv: readonly string[], out: Output): Parsed | number {
  const parsed = parseFlags(bench.flags, argv, bench.quick)
  if (!parsed.ok) {
    out.stderr(`bench: ${parsed.message}\n\n${usage(bench)}`)
    return EXIT.badFlags
  }
  if (parsed.common.help) {
    out.stdout(usage(bench))
    return EXIT.ok
  }
  const problem = bench.check(parsed.values)
  if (problem !== undefined) {
    out.stderr(`bench: ${problem}\n`)
    return EXIT.badFlags
  }
  return { values: parsed.values, common: parsed.common }
}

function describeFailure(error: unknown): string {
  if (error instanceof BenchError) return error.message
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}

/**
 * Runs `node bench/dist/main.js <bench> [flags]`: parses the flags (exit 2 when they are bad),
 * runs the bench, prints its report, writes the results file when asked, and releases every child
 * process and temporary directory on every way out. Answers the exit status.
 */
export async function runCommand(
  registry: readonly Bench[],
  argv: readonly string[],
  out: Output = processOutput,
): Promise<number> {
  const [name, ...rest] = argv
  if (name === 'all') return runAll(registry, rest, out)
  const bench = registry.find((entry) => entry.name === name)
  if (bench === undefined) {
    const known = name === undefined || name === '--help' || name === '-h'
    ;(known ? out.stdout : out.stderr)(
      `${known ? '' : `bench: no bench named ${name}\n\n`}${mainUsage(registry)}`,
    )
    return known ? EXIT.ok : EXIT.badFlags
  }
  const parsed = parseBench(bench, rest, out)
  if (typeof parsed === 'number') return parsed
  if (parsed.common.dryRun) {
    out.stdout(plan(bench, parsed.values))
    return EXIT.ok
  }
  installCleanup()
  try {
    const machine = machineFacts()
    const report = await bench.run(parsed.values)
    const printed = renderReport(bench.name, report, machine)
    out.stdout(`\n${printed}`)
    if (parsed.common.resultsDir !== undefined) {
      const path = await writeResults(
        parsed.common.resultsDir,
        `${dateOf(new Date())}-${machine.shortCommit}-${bench.name}`,
        renderResultsFile({
          name: bench.name,
          command: commandLine(bench.name, rest, bench.script),
          machine,
          date: dateOf(new Date()),
          printed,
        }),
      )
      out.stderr(`bench: results in ${shown(path)}\n`)
    }
    return EXIT.ok
  } catch (error) {
    if (!isInterrupted()) out.stderr(`bench: ${describeFailure(error)}\n`)
    return EXIT.failed
  } finally {
    await cleanUp()
  }
}

/** `bench:all`'s own flag. */
const ALL_FLAGS = {
  full: {
    kind: 'boolean',
    help: 'every bench, those that need Ceph RGW, Terraform or PostgreSQL too, each at its full size',
  },
} as const

const ALL_HELP = `usage: npm run bench:all [-- options]   (or node bench/dist/main.js all [options])

Runs every bench that needs nothing the machine may lack, each with --quick, one after another,
prints each report and then one table of their headline figures. A bench that fails is named in
the table and makes the exit status 1; the others still run.

  --full              ${ALL_FLAGS.full.help} (hours)
${COMMON_HELP}`

/** A bench's quick preset over its defaults, as `--quick` gives them; its defaults when `full`. */
function allValues(bench: Bench, full: boolean): AnyValues {
  const parsed = parseFlags(bench.flags, full ? [] : ['--quick'], bench.quick)
  if (!parsed.ok)
    throw new Error(`${bench.name}: its quick preset does not parse: ${parsed.message}`)
  return parsed.values
}

/** The row of a bench that failed in `bench:all`. */
function failedFigure(error: unknown): Figure {
  const reason = error instanceof BenchError ? (error.message.split('\n')[0] ?? '') : 'crashed'
  return { figure: `failed: ${reason.slice(0, 80)}`, cairn: '-', baseline: '-', ratio: '-' }
}

/**
 * `bench:all`: every bench of the registry marked `inAll`, each with its quick preset, then the
 * table of every headline figure. The common flags apply to the whole run.
 */
async function runAll(
  registry: readonly Bench[],
  argv: readonly string[],
  out: Output,
): Promise<number> {
  const parsed = parseFlags(ALL_FLAGS, argv)
  if (!parsed.ok) {
    out.stderr(`bench: ${parsed.message}\n\n${ALL_HELP}`)
    return EXIT.badFlags
  }
  if (parsed.common.help) {
    out.stdout(ALL_HELP)
    return EXIT.ok
  }
  const { full } = parsed.values
  const benches = full ? registry : registry.filter((bench) => bench.inAll)
  const runs = benches.map((bench) => ({ bench, values: allValues(bench, full) }))
  const how = full ? 'at full size' : '--quick'
  if (parsed.common.dryRun) {
    for (const { bench, values } of runs) out.stdout(plan(bench, values))
    return EXIT.ok
  }
  installCleanup()
  const machine = machineFacts()
  const printed: string[] = []
  const rows: { bench: string; figure: Figure }[] = []
  let status: number = EXIT.ok
  try {
    for (const { bench, values } of runs) {
      out.stderr(`bench: ${bench.script} ${how}\n`)
      try {
        const report = await bench.run(values)
        const text = renderReport(bench.name, report, machine)
        out.stdout(`\n${text}`)
        printed.push(text)
        rows.push(...report.figures.map((figure) => ({ bench: bench.name, figure })))
      } catch (error) {
        if (isInterrupted()) return EXIT.failed
        status = EXIT.failed
        out.stderr(`bench: ${bench.name}: ${describeFailure(error)}\n`)
        rows.push({ bench: bench.name, figure: failedFigure(error) })
      } finally {
        await cleanUp()
      }
    }
  } catch (error) {
    out.stderr(`bench: ${describeFailure(error)}\n`)
    return EXIT.failed
  }
  const summary = figuresTable(rows)
  const table = renderTable(summary).join('\n')
  out.stdout(`\nall benches, ${how}\n${table}\n`)
  if (parsed.common.resultsDir !== undefined) {
    const path = await writeResults(
      parsed.common.resultsDir,
      `${dateOf(new Date())}-${machine.shortCommit}-all`,
      renderResultsFile({
        name: 'all',
        command: commandLine('all', argv, 'bench:all'),
        machine,
        date: dateOf(new Date()),
        printed: printed.join('\n'),
        summary,
      }),
    )
    out.stderr(`bench: results in ${shown(path)}\n`)
  }
  return status
}
