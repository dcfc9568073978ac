import { StateScanner, type ScannedState, type ScanOptions } from './state-scanner'

/**
 * Checks a state body chunk by chunk, where the checking may happen elsewhere (another thread).
 * `StateScanner` is the inline one; a server may supply one that runs on a worker thread.
 */
export interface ChunkScanner {
  /**
   * Takes the next chunk. May return a promise that settles when the scanner is ready for more
   * (backpressure). Throws, or rejects, with `InvalidStateError` once the body is known bad.
   */
  write(chunk: Uint8Array): void | Promise<void>
  /** The findings once every chunk is in. @throws InvalidStateError */
  end(): ScannedState | Promise<ScannedState>
  /** Gives up on a body that will not be finished, freeing what the scanner holds. */
  abandon?(): void
}

/**
 * Chooses a scanner for a body; `sizeHint` is its declared length, when the client sent one, and
 * `options` what the scan should learn besides (the resource index). The default scans inline.
 */
export type ScannerSource = (sizeHint: number | undefined, options?: ScanOptions) => ChunkScanner

export const inlineScanners: ScannerSource = (_sizeHint, options) => new StateScanner(options)
