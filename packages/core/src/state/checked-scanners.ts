import { StateScanError, type ChunkScanner, type ScannerSource } from '@cairn/state-scan'
import { InvalidStateError } from '../errors'

/**
 * The scan's refusal of a body as core's error: `invalid_state`, a 400 on every surface. Any
 * other failure (a scan worker that died) is left as it is.
 */
export function asInvalidState(error: unknown): unknown {
  return error instanceof StateScanError ? new InvalidStateError(error.reason) : error
}

/**
 * The scanners of `source`, refusing a body with core's `InvalidStateError` rather than the
 * scan's own error: every scan core starts (a write, a diff's, an index's) goes through this.
 */
export function checkedScanners(source: ScannerSource): ScannerSource {
  return (sizeHint, options, onEntries) => checked(source(sizeHint, options, onEntries))
}

function checked(scanner: ChunkScanner): ChunkScanner {
  const refused = (error: unknown): never => {
    throw asInvalidState(error)
  }
  return {
    write(chunk) {
      try {
        return scanner.write(chunk)?.catch(refused)
      } catch (error) {
        return refused(error)
      }
    },
    end() {
      try {
        const scan = scanner.end()
        return scan instanceof Promise ? scan.catch(refused) : scan
      } catch (error) {
        return refused(error)
      }
    },
    abandon() {
      scanner.abandon?.()
    },
  }
}
