import type { InstanceDetail } from './instance-collector'
import { StateScanner, type ScannedState } from './state-scanner'

/**
 * What a scan from a `ScannerSource` learns besides checking the JSON. Plain data, so that the scan
 * may run on another thread.
 */
export interface SourceScanOptions {
  /** Index the state's resources (`ScannedState.resources`). */
  index?: boolean
  /**
   * Keep the raw attributes of the instances named in `wanted` (`SourceScan.details`), up to
   * `limit` bytes of attributes and sensitivity in all: an instance that would pass it is left
   * out. No index is kept.
   */
  detail?: { wanted: ReadonlySet<string>; limit: number }
}

/** What a scan from a `ScannerSource` found: the scan, and the details it was asked to keep. */
export interface SourceScan extends ScannedState {
  details?: InstanceDetail[]
}

/**
 * Checks a state body chunk by chunk, where the checking may happen elsewhere (another thread).
 * `StateScanner` is the inline one; a server may supply one that runs on a worker thread.
 */
export interface ChunkScanner {
  /**
   * Takes the next chunk. May return a promise that settles when the scanner is ready for more
   * (backpressure). Throws, or rejects, with `StateScanError` once the body is known bad.
   */
  write(chunk: Uint8Array): void | Promise<void>
  /** The findings once every chunk is in. @throws StateScanError */
  end(): SourceScan | Promise<SourceScan>
  /** Gives up on a body that will not be finished, freeing what the scanner holds. */
  abandon?(): void
}

/**
 * Chooses a scanner for a body; `sizeHint` is its declared length, when the client sent one, and
 * `options` what the scan should learn besides (the resource index, details for a diff). With
 * `onEntries` and the index, each block of the index's entries goes there as soon as it is
 * made, in order and before `end` answers, and the scan's `resources` hold only the rest. The
 * default scans inline.
 */
export type ScannerSource = (
  sizeHint: number | undefined,
  options?: SourceScanOptions,
  onEntries?: (block: Uint8Array) => void,
) => ChunkScanner

/** A scanner that runs on the caller's thread, and so answers at once. */
export interface InlineScanner extends ChunkScanner {
  write(chunk: Uint8Array): void
  end(): SourceScan
}

/** A scanner on this thread for what `options` ask (`onEntries`: see `ScannerSource`). */
export function scannerFor(
  options: SourceScanOptions = {},
  onEntries?: (block: Uint8Array) => void,
): InlineScanner {
  if (options.detail === undefined) {
    return new StateScanner({
      index: options.index === true,
      ...(onEntries === undefined ? {} : { onEntries }),
    })
  }
  const { wanted, limit } = options.detail
  const details: InstanceDetail[] = []
  let left = limit
  const scanner = new StateScanner({
    detail: {
      wanted: (address) => wanted.has(address),
      onDetail: (detail) => {
        const size = (detail.attributes?.length ?? 0) + (detail.sensitive?.length ?? 0)
        if (size > left) return
        left -= size
        details.push(detail)
      },
    },
  })
  return {
    write: (chunk) => {
      scanner.write(chunk)
    },
    end: () => ({ ...scanner.end(), details }),
  }
}

export const inlineScanners: ScannerSource = (_sizeHint, options, onEntries) =>
  scannerFor(options, onEntries)
