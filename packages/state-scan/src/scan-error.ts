/**
 * A body the scan refuses: it is not JSON, or it claims to be a Terraform state and breaks the
 * header's rules. `reason` says what and where (`not JSON: ... at byte 17`); core turns it into its
 * `InvalidStateError` (`invalid_state`, a 400), so this package needs nothing of core.
 */
export class StateScanError extends Error {
  readonly reason: string

  constructor(reason: string) {
    super(reason)
    this.name = 'StateScanError'
    this.reason = reason
  }
}
