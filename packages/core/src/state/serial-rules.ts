import { SerialConflictError } from '../errors'
import type { VersionRecord } from '../units/unit-record'
import { stateHeader } from './state-header'
import type { InspectedState } from './state-inspector'

/**
 * The checks HCP Terraform makes before it accepts a state (DESIGN section 4): with the same
 * lineage, a lower serial, or the same serial with other bytes, is refused unless forced. A state
 * with another lineage, or JSON that is not a Terraform state, is accepted as it is. A state OpenTofu
 * encrypted on the client follows the rules by the serial and lineage it keeps in plain text.
 *
 * @throws SerialConflictError (`serial_conflict`) naming the current serial and lineage.
 */
export function checkSerial(
  current: VersionRecord | null,
  incoming: InspectedState,
  force: boolean,
): void {
  const next = stateHeader(incoming.scan)
  if (force || current === null || next === undefined) return
  if (current.serial === null || current.lineage === null || current.lineage !== next.lineage)
    return
  refuseGoingBack(current.serial, current.lineage, current.sha256, next.serial, incoming.sha256, {
    behind: `is lower than the current serial ${current.serial} of lineage ${current.lineage}; force the write to replace it`,
    again: 'a changed state needs a higher serial, or force the write',
  })
}

/**
 * Refuses a state whose serial is behind the current one, or equal to it with other bytes: the
 * two checks both rules make, each with its own remedy.
 */
function refuseGoingBack(
  serial: number,
  lineage: string,
  sha256: string,
  nextSerial: number,
  nextSha256: string,
  say: { behind: string; again: string },
): void {
  const state = { serial, lineage }
  if (nextSerial < serial)
    throw new SerialConflictError(`serial ${nextSerial} ${say.behind}`, state)
  if (nextSerial === serial && nextSha256 !== sha256) {
    throw new SerialConflictError(
      `serial ${nextSerial} is already stored with different content; ${say.again}`,
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
  const next = stateHeader(incoming.scan)
  const lineage = current.lineage ?? ''
  if (next === undefined) {
    throw new SerialConflictError(
      `the unit's current state (serial ${current.serial}) was written here; an imported body that is not a Terraform state cannot follow it`,
      { serial: current.serial, lineage },
    )
  }
  refuseGoingBack(current.serial, lineage, current.sha256, next.serial, incoming.sha256, {
    behind: `would go behind the current serial ${current.serial}, written here; an import only appends`,
    again: 'an import only appends',
  })
}
