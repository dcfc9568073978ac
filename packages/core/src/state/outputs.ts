import { InvalidStateError } from '../errors'
import type { Version } from '../units/unit-record'

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
 * Reads the raw `outputs` object the scanner kept. `sensitive` is omitted by Terraform when false.
 *
 * @throws InvalidStateError when `outputs` is not an object of outputs
 */
export function parseOutputs(raw: Uint8Array): Record<string, StateOutput> {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(raw))
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidStateError('"outputs" must be an object')
  }
  const outputs: Record<string, StateOutput> = {}
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
