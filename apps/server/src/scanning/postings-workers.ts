import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { postingsOf, type PostingsBuilder, type PostingsData } from '@cairn/state-index'
import type { FromPostingsWorker, ToPostingsWorker } from './messages'

/** Stored indexes smaller than this are made into postings inline: the trip costs more. */
const DEFAULT_MIN_BYTES = 16 * 1024
/**
 * A thread idle this long stops: the load at start is over, and each thread's heap (up to a few
 * hundred MiB after reading thousands of indexes) is given back. A later burst starts threads
 * again.
 */
const DEFAULT_IDLE_MS = 10_000

/** The worker script, built beside this bundle. */
const WORKER_URL = new URL('./postings-worker.js', import.meta.url)

interface Waiting {
  resolve: (postings: PostingsData | undefined) => void
  reject: (error: Error) => void
}

interface PostingsThread {
  worker: Worker
  waiting: Map<number, Waiting>
  /** Set while nothing waits: stops the thread when it fires. */
  idle: ReturnType<typeof setTimeout> | undefined
}

export interface PostingsWorkersOptions {
  /** How many threads at most; by default one per core. */
  size?: number
  /** Indexes of fewer bytes are made inline. */
  minBytes?: number
  /** The worker script (the built `postings-worker.js` beside this bundle by default). */
  url?: URL
  /** How long a thread waits for more before it stops. */
  idleMs?: number
}

/**
 * Makes the search index's postings of units' stored indexes on worker threads: reading and
 * sorting a unit's index is the work of loading it, which a server does for every unit when it
 * starts (seconds for thousands of units), and which on the main thread would hold up every request
 * meanwhile. Threads start when first needed, each takes the next index when it has the fewest
 * waiting, an idle one does not keep the process alive, and one idle for ten seconds stops.
 */
export class PostingsWorkers {
  readonly #size: number
  readonly #minBytes: number
  readonly #url: URL
  readonly #idleMs: number
  readonly #threads: PostingsThread[] = []
  #ids = 0
  #closed = false

  constructor(options: PostingsWorkersOptions = {}) {
    this.#size = options.size ?? availableParallelism()
    this.#minBytes = options.minBytes ?? DEFAULT_MIN_BYTES
    this.#url = options.url ?? WORKER_URL
    this.#idleMs = options.idleMs ?? DEFAULT_IDLE_MS
  }

  /** The `PostingsBuilder` to give `createCore`. */
  readonly build: PostingsBuilder = (indexBytes) => {
    if (this.#closed || indexBytes.byteLength < this.#minBytes) {
      return Promise.resolve(postingsOf(indexBytes))
    }
    const thread = this.#pick()
    const id = ++this.#ids
    return new Promise<PostingsData | undefined>((resolve, reject) => {
      thread.waiting.set(id, { resolve, reject })
      if (thread.waiting.size === 1) {
        clearTimeout(thread.idle)
        thread.idle = undefined
        thread.worker.ref()
      }
      thread.worker.postMessage({ id, bytes: indexBytes } satisfies ToPostingsWorker)
    })
  }

  /** How many threads are running. */
  get threads(): number {
    return this.#threads.length
  }

  /** Stops every thread; what they were making fails, and later indexes are made inline. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(this.#threads.splice(0).map((thread) => this.#stop(thread)))
  }

  /** Stops a thread, first taking it out of those given work. */
  async #stop(thread: PostingsThread): Promise<void> {
    this.#forget(thread)
    await thread.worker.terminate()
  }

  /** Gives a thread no more work, and stops its idle timer. */
  #forget(thread: PostingsThread): void {
    clearTimeout(thread.idle)
    thread.idle = undefined
    const at = this.#threads.indexOf(thread)
    if (at !== -1) this.#threads.splice(at, 1)
  }

  /** The thread with the fewest indexes waiting, or a new one while there are fewer than allowed. */
  #pick(): PostingsThread {
    let best: PostingsThread | undefined
    for (const thread of this.#threads) {
      if (best === undefined || thread.waiting.size < best.waiting.size) best = thread
    }
    if (best !== undefined && (best.waiting.size === 0 || this.#threads.length >= this.#size)) {
      return best
    }
    return this.#start()
  }

  #start(): PostingsThread {
    const thread: PostingsThread = {
      worker: new Worker(this.#url),
      waiting: new Map(),
      idle: undefined,
    }
    this.#threads.push(thread)
    thread.worker.unref()
    thread.worker.on('message', (reply: FromPostingsWorker) => {
      const waiting = thread.waiting.get(reply.id)
      if (waiting === undefined) return
      thread.waiting.delete(reply.id)
      if (thread.waiting.size === 0) {
        thread.worker.unref()
        thread.idle = setTimeout(() => void this.#stop(thread), this.#idleMs)
        thread.idle.unref()
      }
      if ('postings' in reply) waiting.resolve(reply.postings)
      else if ('unreadable' in reply) waiting.resolve(undefined)
      else waiting.reject(new Error(`making a unit's search postings failed: ${reply.failed}`))
    })
    const stop = (cause: unknown): void => {
      this.#forget(thread)
      const error = new Error('the search postings thread stopped', { cause })
      for (const waiting of thread.waiting.values()) waiting.reject(error)
      thread.waiting.clear()
    }
    thread.worker.on('error', stop)
    thread.worker.on('exit', stop)
    return thread
  }
}
