import { SerialConflictError } from '../errors'
import type { VersionRecord } from '../units/unit-record'
import type { InspectedState } from './state-inspector'

/**
 * The checks HCP Terraform makes before it accepts a state (DESIGN section 4): with the same
 * lineage, a lower serial, or the same serial with other bytes, is refused unless forced. A state
 * with another lineage, or JSON that is not a Terraform state, is accepted as it is.
 *
 * @throws SerialConflictError (`serial_conflict`) naming the current serial and lineage.
 */
export function checkSerial(
  current: VersionRecord | null,
  incoming: InspectedState,
  force: boolean,
): void {
  const next = incoming.scan.terraform
  if (force || current === null || next === undefined) return
  if (current.serial === null || current.lineage === null || current.lineage !== next.lineage)
    return
  const state = { serial: current.serial, lineage: current.lineage }
  if (next.serial < current.serial) {
    throw new SerialConflictError(
      `serial ${next.serial} is lower than the current serial ${current.serial} of lineage ${current.lineage}; force the write to replace it`,
      state,
    )
  }
  if (next.serial === current.serial && incoming.sha256 !== current.sha256) {
    throw new SerialConflictError(
      `serial ${next.serial} is already stored with different content; a changed state needs a higher serial, or force the write`,
      state,
    )
  }
}

/**
 * The rule for an imported version (DESIGN section 16): it never goes behind the serial of a
 * state written here. Into an empty unit, or one whose current version is itself imported, the
 * source's history comes as it was, lineage changes and serials starting again included.
 *
 * @throws SerialConflictError (`serial_conflict`) naming the current serial and lineage.
 */
export function checkImportSerial(current: VersionRecord | null, incoming: InspectedState): void {
  if (current === null || current.source === 'import' || current.serial === null) return
  const next = incoming.scan.terraform
  const state = { serial: current.serial, lineage: current.lineage ?? '' }
  if (next === undefined) {
    throw new SerialConflictError(
      `the unit's current state (serial ${current.serial}) was written here; an imported body that is not a Terraform state cannot follow it`,
      state,
    )
  }
  if (next.serial < current.serial) {
    throw new SerialConflictError(
      `serial ${next.serial} would go behind the current serial ${current.serial}, written here; an import only appends`,
      state,
    )
  }
  if (next.serial === current.serial && incoming.sha256 !== current.sha256) {
    throw new SerialConflictError(
      `serial ${next.serial} is already stored with different content; an import only appends`,
      state,
    )
  }
}
