import type { StateOutput, UnitId, VersionOutputs } from '@cairn/core'
import { outputId } from '../ids'
import type { Resource } from '../jsonapi/document'

/** A version's outputs as a list, sensitive values null; none when the state has no outputs read. */
export function outputList(unit: UnitId, read: VersionOutputs): Resource[] {
  if (read.outputs === null) return []
  const at = read.version.timestamp
  return Object.entries(read.outputs).map(([name, output]) =>
    outputResource(unit, at, name, output, false),
  )
}

/** An output as TFE shows it; in lists a sensitive value is null, to be read one by one. */
export function outputResource(
  unit: UnitId,
  at: string,
  name: string,
  output: StateOutput,
  revealSensitive: boolean,
): Resource {
  return {
    id: outputId(unit, at, name),
    type: 'state-version-outputs',
    attributes: {
      name,
      sensitive: output.sensitive,
      type: kindOf(output.value),
      value: output.sensitive && !revealSensitive ? null : output.value,
      'detailed-type': output.type,
    },
  }
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (value === null) return 'null'
  return typeof value
}
