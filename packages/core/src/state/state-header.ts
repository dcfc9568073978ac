import type { ScannedState } from '@cairn/state-scan'

/**
 * The serial and lineage a body declares, whoever can read the rest: a Terraform state's header,
 * or the plain serial and lineage OpenTofu keeps beside a state it encrypted on the client.
 * Undefined for other JSON (and for an encrypted state without both).
 */
export function stateHeader(scan: ScannedState): { serial: number; lineage: string } | undefined {
  if (scan.terraform !== undefined) return scan.terraform
  const sealed = scan.clientEncrypted
  if (sealed?.serial === undefined || sealed.lineage === undefined) return undefined
  return { serial: sealed.serial, lineage: sealed.lineage }
}
