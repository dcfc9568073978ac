import type { FlagSpecs, FlagValue, FlagValues } from './flags'
import type { BenchReport } from './report'

/** A bench as its file declares it: what it measures, its flags, and its run. */
export interface BenchDefinition<S extends FlagSpecs> {
  /** The name on the command line: `node bench/dist/main.js <name>`. */
  readonly name: string
  /** Its script in the root package.json: `bench:index`. */
  readonly script: string
  /** What it measures, and against which baseline of the same run, in a line or two. */
  readonly summary: string
  readonly flags: S
  /** The values `--quick` gives (and `bench:all` runs with). */
  readonly quick: Partial<FlagValues<S>>
  /** Whether `bench:all` runs it; a bench that needs a component the machine may lack does not. */
  readonly inAll: boolean
  /** A check across flags; a message makes it a bad flag (exit 2). */
  readonly check?: (values: FlagValues<S>) => string | undefined
  readonly run: (values: FlagValues<S>) => Promise<BenchReport>
}

export type AnyValues = Readonly<Record<string, FlagValue>>

/** A bench in the registry, its flag values no longer typed by its own flags. */
export interface Bench {
  readonly name: string
  readonly script: string
  readonly summary: string
  readonly flags: FlagSpecs
  readonly quick: AnyValues
  readonly inAll: boolean
  check(values: AnyValues): string | undefined
  run(values: AnyValues): Promise<BenchReport>
}

/**
 * Declares a bench for the registry. The runner parses a bench's values from its own `flags`, so
 * they have the shape `FlagValues<S>` describes when they come back to `check` and `run`.
 */
export function defineBench<const S extends FlagSpecs>(definition: BenchDefinition<S>): Bench {
  return {
    name: definition.name,
    script: definition.script,
    summary: definition.summary,
    flags: definition.flags,
    quick: definition.quick as AnyValues,
    inAll: definition.inAll,
    check: (values) => definition.check?.(values as FlagValues<S>),
    run: (values) => definition.run(values as FlagValues<S>),
  }
}
