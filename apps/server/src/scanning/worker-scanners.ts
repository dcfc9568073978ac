import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import {
  scannerFor,
  StateScanError,
  type ChunkScanner,
  type ScannerSource,
  type SourceScan,
  type SourceScanOptions,
} from '@cairn/state-scan'
import type { FromWorker, JobStart, ToWorker } from './messages'

/** Bodies declared at least this large are scanned on a worker; smaller ones inline. */
const WORKER_THRESHOLD = 1024 * 1024
/**
 * Each worker's ring: the most of a body that is copied and not yet scanned. When the scan was
 * slower than the upload (with the index, before the byte loop ran as WebAssembly), a ring of
 * 2 MiB made that upload 9 % faster than one of 4 MiB (copying into it costs less), and one that
 * kept pace 5 % slower (`npm run bench:index` then). The scan now keeps pace with or without the index.
 */
const RING_SIZE = 2 * 1024 * 1024
/**
 * Bytes copied into the ring are announced to the worker once this many have gathered (or the
 * ring wraps, the body ends, or the upload waits for room): a message per socket chunk of 64 KiB
 * cost the main thread about a tenth of a 100 MiB upload's time in `postMessage`.
 */
const ANNOUNCE_BYTES = 256 * 1024

/** The worker script, built beside this bundle. */
const WORKER_URL = new URL('./scan-worker.js', import.meta.url)

interface ScanThread {
  worker: Worker
  /** Shared with the worker: chunks are copied in here, so nothing is allocated per chunk. */
  ring: Uint8Array
  /** The number of the last body given to this worker. */
  jobs: number
}

/**
 * Scans large state bodies on worker threads, one body per worker at a time, so that a big upload
 * is checked, hashed and written in parallel. When every worker is busy, or the body is small or
 * of unknown length, it is scanned inline as before.
 */
export class WorkerScanners {
  readonly #size: number
  readonly #idle: ScanThread[] = []
  #count = 0
  #closed = false

  constructor(size = Math.max(1, availableParallelism() - 1)) {
    this.#size = size
  }

  /** The `ScannerSource` to give `createCore`. */
  readonly source: ScannerSource = (sizeHint, options = {}, onEntries) => {
    if (this.#closed || sizeHint === undefined || sizeHint < WORKER_THRESHOLD) {
      return scannerFor(options, onEntries)
    }
    const thread = this.#take()
    if (thread === undefined) return scannerFor(options, onEntries)
    return new WorkerScanner(thread, options, onEntries, (done) => {
      this.#give(done)
    })
  }

  /** Stops every idle worker, and each busy one as soon as its body is done. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(this.#idle.splice(0).map((thread) => thread.worker.terminate()))
  }

  #take(): ScanThread | undefined {
    const idle = this.#idle.pop()
    if (idle !== undefined) return idle
    if (this.#count >= this.#size) return undefined
    this.#count += 1
    const shared = new SharedArrayBuffer(RING_SIZE)
    const thread = {
      worker: new Worker(WORKER_URL, { workerData: shared }),
      ring: new Uint8Array(shared),
      jobs: 0,
    }
    thread.worker.on('exit', () => {
      this.#count -= 1
      const at = this.#idle.indexOf(thread)
      if (at !== -1) this.#idle.splice(at, 1)
    })
    return thread
  }

  #give(thread: ScanThread | undefined): void {
    if (thread === undefined) return
    if (this.#closed) {
      void thread.worker.terminate()
      return
    }
    // An idle worker must not keep the process alive.
    thread.worker.unref()
    this.#idle.push(thread)
  }
}

/**
 * One body's scan on a worker. Chunks are copied into the ring and announced; when the ring is
 * full, `write` waits for the worker to catch up, which holds the upload back: memory stays at
 * the ring's size whatever the body's.
 */
class WorkerScanner implements ChunkScanner {
  readonly #thread: ScanThread
  readonly #release: (thread: ScanThread | undefined) => void
  readonly #job: number
  /** What the scan is asked besides the JSON check, sent with the job's first message only. */
  #start: JobStart | undefined
  readonly #onEntries: ((block: Uint8Array) => void) | undefined
  #head = 0
  /** Where the bytes copied but not yet announced begin in the ring, and how many there are. */
  #unannouncedAt = 0
  #unannounced = 0
  #inFlight = 0
  #error: Error | undefined
  #acked: { resolve: () => void; reject: (error: Error) => void } | undefined
  #done: { resolve: (scan: SourceScan) => void; reject: (error: Error) => void } | undefined
  #released = false

  constructor(
    thread: ScanThread,
    options: SourceScanOptions,
    onEntries: ((block: Uint8Array) => void) | undefined,
    release: (thread: ScanThread | undefined) => void,
  ) {
    this.#thread = thread
    this.#start = { options, ...(onEntries === undefined ? {} : { streamEntries: true }) }
    this.#onEntries = onEntries
    this.#release = release
    thread.jobs += 1
    this.#job = thread.jobs
    thread.worker.ref()
    thread.worker.on('message', this.#onMessage)
    thread.worker.on('error', this.#onFailure)
    thread.worker.on('exit', this.#onExit)
  }

  write(chunk: Uint8Array): void | Promise<void> {
    if (this.#error !== undefined) throw this.#error
    if (chunk.byteLength <= RING_SIZE - this.#inFlight) {
      this.#copy(chunk)
      return undefined
    }
    return this.#copyWhenRoom(chunk)
  }

  end(): Promise<SourceScan> {
    if (this.#error !== undefined) return Promise.reject(this.#error)
    const done = new Promise<SourceScan>((resolve, reject) => {
      this.#done = { resolve, reject }
    })
    this.#announce()
    this.#send({ type: 'end', job: this.#job, ...this.#jobStart() })
    return done
  }

  abandon(): void {
    // The worker drops the body (and what its scan holds) at once, not at the next job.
    if (!this.#released) this.#send({ type: 'drop', job: this.#job })
    this.#finish(this.#thread)
  }

  async #copyWhenRoom(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.byteLength;) {
      const piece = chunk.subarray(at, at + RING_SIZE / 2)
      // Once full, the ring takes more only when half of it is free: fewer stops and starts of
      // the upload while the scan catches up.
      while (piece.byteLength > RING_SIZE - this.#inFlight || this.#inFlight > RING_SIZE / 2) {
        // The worker frees room only in what it has been told of.
        this.#announce()
        await new Promise<void>((resolve, reject) => {
          this.#acked = { resolve, reject }
        })
      }
      this.#copy(piece)
      at += piece.byteLength
    }
  }

  /**
   * Copies bytes that fit into the free part of the ring, in one piece or two if it wraps, and
   * announces what has gathered once it is `ANNOUNCE_BYTES` or reaches the ring's end.
   */
  #copy(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.byteLength;) {
      const length = Math.min(RING_SIZE - this.#head, bytes.byteLength - at)
      this.#thread.ring.set(bytes.subarray(at, at + length), this.#head)
      if (this.#unannounced === 0) this.#unannouncedAt = this.#head
      this.#unannounced += length
      this.#head = (this.#head + length) % RING_SIZE
      this.#inFlight += length
      at += length
      if (this.#unannounced >= ANNOUNCE_BYTES || this.#head === 0) this.#announce()
    }
  }

  /** Tells the worker of the bytes copied since the last announcement: one run of the ring. */
  #announce(): void {
    if (this.#unannounced === 0) return
    this.#send({
      type: 'chunk',
      job: this.#job,
      offset: this.#unannouncedAt,
      length: this.#unannounced,
      ...this.#jobStart(),
    })
    this.#unannounced = 0
  }

  /** What starts the job, for its first message (which starts it in the worker). */
  #jobStart(): JobStart {
    const start = this.#start
    this.#start = undefined
    return start ?? {}
  }

  #send(message: ToWorker): void {
    this.#thread.worker.postMessage(message)
  }

  readonly #onMessage = (message: FromWorker): void => {
    if (message.job !== this.#job) return
    switch (message.type) {
      case 'ack':
        this.#inFlight -= message.size
        this.#acked?.resolve()
        this.#acked = undefined
        break
      case 'error':
        this.#fail(new StateScanError(message.reason))
        break
      case 'entries':
        this.#onEntries?.(message.block)
        break
      case 'done':
        this.#done?.resolve(message.scan)
        this.#done = undefined
        this.#finish(this.#thread)
        break
    }
  }

  readonly #onFailure = (error: Error): void => {
    this.#fail(new Error('the state scanner thread failed', { cause: error }))
    this.#finish(undefined)
  }

  readonly #onExit = (): void => {
    this.#fail(new Error('the state scanner thread stopped'))
    this.#finish(undefined)
  }

  #fail(error: Error): void {
    this.#error ??= error
    this.#acked?.reject(error)
    this.#acked = undefined
    this.#done?.reject(error)
    this.#done = undefined
  }

  /** Hands the thread back (or, after it failed, nothing) exactly once. */
  #finish(thread: ScanThread | undefined): void {
    if (this.#released) return
    this.#released = true
    const { worker } = this.#thread
    worker.off('message', this.#onMessage)
    worker.off('error', this.#onFailure)
    worker.off('exit', this.#onExit)
    this.#release(thread)
  }
}
