import * as v from 'valibot'
import { InvalidStateError } from '../errors'
import { ownRecord } from '../validation'
import type { Version } from '@cairn/contract'

/** One top-level output of a Terraform state (format 4): its value, cty type and sensitivity. */
export interface StateOutput {
  value: unknown
  type: unknown
  sensitive: boolean
}

/** A version's outputs, by name. */
export interface StateOutputs {
  version: Version
  outputs: Record<string, StateOutput>
}

/**
 * An empty map keyed by output name. Output names are Terraform identifiers, so `__proto__`,
 * `constructor` and `toString` are valid ones: a map without a prototype stores `__proto__` as an
 * ordinary key instead of replacing the prototype, and inherits nothing a name could find.
 */
export function outputMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>
}

/**
 * The entry for output `name`, only when the map has it as its own property: a plain object
 * literal or a parsed record still has a prototype, whose members are no output of the state.
 */
export function outputNamed<T>(map: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined
}

/** Digests by output name, as records store them, every output name kept (see `ownRecord`). */
export const OutputDigestsSchema = ownRecord(
  v.string(),
  'output digests must be an object of strings',
)

/**
 * Reads the raw `outputs` object the scanner kept. `sensitive` is omitted by Terraform when false.
 *
 * @throws InvalidStateError when `outputs` is not an object of outputs
 */
export function parseOutputs(raw: Uint8Array): Record<string, StateOutput> {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(raw))
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidStateError('"outputs" must be an object')
  }
  const outputs = outputMap<StateOutput>()
  for (const [name, output] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof output !== 'object' || output === null) continue
    const entry = output as { value?: unknown; type?: unknown; sensitive?: unknown }
    outputs[name] = {
      value: entry.value ?? null,
      type: entry.type ?? null,
      sensitive: entry.sensitive === true,
    }
  }
  return outputs
}
