import { parseArgs } from 'node:util'
import { resultsDir } from './paths'

/**
 * One row per flag: its kind, default, bounds and help, from which the parser, the validation and
 * `--help` are all derived.
 */
export type FlagSpec =
  | {
      readonly kind: 'whole' | 'number'
      readonly default: number
      readonly min: number
      readonly max: number
      readonly help: string
    }
  | {
      /** Whole numbers separated by commas: `--units 1000,10000`. */
      readonly kind: 'wholes'
      readonly default: readonly number[]
      readonly min: number
      readonly max: number
      readonly help: string
    }
  | {
      /** A comma-separated subset of `choices`: `--parts upload,scan`. */
      readonly kind: 'set'
      readonly default: readonly string[]
      readonly choices: readonly string[]
      readonly help: string
    }
  | { readonly kind: 'boolean'; readonly help: string }

export type FlagSpecs = Readonly<Record<string, FlagSpec>>

export type FlagValue = number | boolean | readonly number[] | readonly string[]

/** The parsed values of `S`, by flag name. */
export type FlagValues<S extends FlagSpecs> = {
  readonly [K in keyof S]: S[K] extends { kind: 'boolean' }
    ? boolean
    : S[K] extends { kind: 'wholes' }
      ? readonly number[]
      : S[K] extends { kind: 'set' }
        ? readonly string[]
        : number
}

/** The flags every bench takes, beside its own. */
export interface CommonFlags {
  readonly help: boolean
  /** Skip the build before the run (the launcher reads it; the bench only accepts it). */
  readonly noBuild: boolean
  /** The bench's quick preset: small sizes and few rounds (flags given beside it win). */
  readonly quick: boolean
  /** Parse and check the flags, print what would run, and stop. */
  readonly dryRun: boolean
  /** Where to write the results file, or undefined for none. */
  readonly resultsDir: string | undefined
}

export const COMMON_HELP = `  --quick             small sizes and few rounds, to try it (flags given beside it win)
  --results           also write the report to bench/results/<date>-<commit>-<bench>.md
  --results-dir DIR   write that file into DIR instead
  --dry-run           check the flags, print what would run, and stop
  --no-build          use the built server (apps/server/dist) as it is instead of building first
  -h, --help          print this
`

export type Parsed<S extends FlagSpecs> =
  | {
      readonly ok: true
      readonly values: FlagValues<S>
      readonly common: CommonFlags
      /** The flags given on the command line, by name. */
      readonly given: ReadonlySet<string>
    }
  | { readonly ok: false; readonly message: string }

function describeBounds(name: string, spec: FlagSpec): string {
  switch (spec.kind) {
    case 'whole':
      return `--${name} must be a whole number from ${spec.min} to ${spec.max}`
    case 'number':
      return `--${name} must be a number from ${spec.min} to ${spec.max}`
    case 'wholes':
      return `--${name} takes whole numbers from ${spec.min} to ${spec.max}, separated by commas`
    case 'set':
      return `--${name} takes one or more of ${spec.choices.join(', ')}, separated by commas`
    case 'boolean':
      return `--${name} takes no value`
  }
}

/** Reads one flag's text as its kind; undefined when it does not fit. */
function readValue(spec: FlagSpec, text: string): FlagValue | undefined {
  const inRange = (n: number, whole: boolean) =>
    text.trim() !== '' &&
    Number.isFinite(n) &&
    (!whole || Number.isInteger(n)) &&
    spec.kind !== 'boolean' &&
    spec.kind !== 'set' &&
    n >= spec.min &&
    n <= spec.max
  switch (spec.kind) {
    case 'whole':
    case 'number': {
      const n = Number(text)
      return inRange(n, spec.kind === 'whole') ? n : undefined
    }
    case 'wholes': {
      const parts = text.split(',').map((part) => part.trim())
      const numbers = parts.map(Number)
      const fits = parts.every(
        (part, index) => part !== '' && Number.isInteger(numbers[index]) && inRangeOf(spec, part),
      )
      return fits ? numbers : undefined
    }
    case 'set': {
      const chosen = text.split(',').filter((part) => part !== '')
      const fits = chosen.length > 0 && chosen.every((part) => spec.choices.includes(part))
      return fits ? [...new Set(chosen)] : undefined
    }
    case 'boolean':
      return undefined
  }
}

function inRangeOf(spec: { min: number; max: number }, text: string): boolean {
  const n = Number(text)
  return n >= spec.min && n <= spec.max
}

function defaultOf(spec: FlagSpec): FlagValue {
  return spec.kind === 'boolean' ? false : spec.default
}

/**
 * Parses `argv` against `specs` and the common flags: defaults first, then the `quick` preset when
 * `--quick` is given, then the flags given. A flag that is unknown, repeated into nonsense or out of
 * its bounds is an error value with a message naming it, never a throw.
 */
export function parseFlags<S extends FlagSpecs>(
  specs: S,
  argv: readonly string[],
  quick?: Readonly<Partial<Record<keyof S, FlagValue>>>,
): Parsed<S> {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    'no-build': { type: 'boolean' },
    quick: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    results: { type: 'boolean' },
    'results-dir': { type: 'string' },
  }
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.kind === 'boolean' ? 'boolean' : 'string' }
  }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false })
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
  const given = parsed.values
  const flag = (name: string): string | boolean | undefined => {
    const value = given[name]
    // parseArgs gives an array only for `multiple` options, which none is.
    return Array.isArray(value) ? undefined : value
  }
  const common: CommonFlags = {
    help: flag('help') === true,
    noBuild: flag('no-build') === true,
    quick: flag('quick') === true,
    dryRun: flag('dry-run') === true,
    resultsDir: resultsDirOf(flag('results'), flag('results-dir')),
  }
  const values: Record<string, FlagValue> = {}
  const presets = (quick ?? {}) as Readonly<Record<string, FlagValue | undefined>>
  for (const [name, spec] of Object.entries(specs)) {
    values[name] = (common.quick ? presets[name] : undefined) ?? defaultOf(spec)
    const text = flag(name)
    if (text === undefined) continue
    if (typeof text === 'boolean') {
      values[name] = text
      continue
    }
    const value = readValue(spec, text)
    if (value === undefined)
      return { ok: false, message: `${describeBounds(name, spec)}, not ${text}` }
    values[name] = value
  }
  const names = new Set(Object.keys(given).filter((name) => name in specs))
  // Built from `specs` above, name by name: the values have the shape FlagValues<S> describes.
  return { ok: true, values: values as FlagValues<S>, common, given: names }
}

function resultsDirOf(
  results: string | boolean | undefined,
  dir: string | boolean | undefined,
): string | undefined {
  if (typeof dir === 'string') return dir
  return results === true ? resultsDir : undefined
}

/** The lines of `--help` for `specs`: each flag, its help and its default. */
export function flagsHelp(specs: FlagSpecs, quick: Readonly<Record<string, unknown>> = {}): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const left = spec.kind === 'boolean' ? `--${name}` : `--${name} ${metavar(spec)}`
    const preset = quick[name]
    const defaults =
      spec.kind === 'boolean'
        ? ''
        : ` (default ${showValue(spec.default)}${preset === undefined ? '' : `; --quick ${showValue(preset)}`})`
    return { left, right: `${spec.help}${defaults}` }
  })
  const width = Math.max(18, ...rows.map((row) => row.left.length)) + 2
  return rows.map((row) => `  ${row.left.padEnd(width)}${row.right}\n`).join('')
}

function metavar(spec: FlagSpec): string {
  return spec.kind === 'wholes' || spec.kind === 'set' ? 'LIST' : 'N'
}

/** A flag value as a user types it. */
export function showValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',')
  return String(value)
}
