import type { PostingsData } from '@cairn/state-index'
import type { SourceScan, SourceScanOptions } from '@cairn/state-scan'

/**
 * From the server to a scan worker. Chunks travel through the shared ring given at start. Each
 * body is a job with its own number; the first message of a new job starts a new body, scanned
 * for what its `options` ask (the resource index, details for a diff).
 */
export type ToWorker =
  /** `length` bytes of the body are in the ring at `offset`. */
  | ({ type: 'chunk'; job: number; offset: number; length: number } & JobStart)
  | ({ type: 'end'; job: number } & JobStart)
  /** The server gave up on the body (its client went away): drop it and what its scan holds. */
  | { type: 'drop'; job: number }

/**
 * What the first message of a job says besides: what the scan should learn, and whether the
 * index's entries come back as they are made (`entries` messages) rather than with `done`.
 */
export interface JobStart {
  options?: SourceScanOptions
  streamEntries?: boolean
}

/**
 * From a scan worker to the server, naming the job, so that replies about a body the server has
 * given up on are told apart from the next body's.
 */
export type FromWorker =
  /** A chunk of `size` bytes has been scanned; its room in the ring is free again. */
  | { type: 'ack'; job: number; size: number }
  /** The body is not JSON (or breaks the Terraform header rules); its further chunks are ignored. */
  | { type: 'error'; job: number; reason: string }
  /** A block of the index's entries, after those before it (moved, not copied). */
  | { type: 'entries'; job: number; block: Uint8Array }
  | { type: 'done'; job: number; scan: SourceScan }

/** From the server to a postings worker: a unit's stored index, to make its postings of. */
export interface ToPostingsWorker {
  id: number
  bytes: Uint8Array
}

/** From a postings worker: the postings, or that the bytes are no index, or why it failed. */
export type FromPostingsWorker =
  | { id: number; postings: PostingsData }
  | { id: number; unreadable: true }
  | { id: number; failed: string }
