import { MAX_CHUNK_BYTES, MAX_LOG_BYTES, scrub } from '../run-logs'
import type { AgentApi } from './agent-api'

/** How long text waits before it is sent, at most. */
const FLUSH_MS = 300
/**
 * How often a chunk the server did not take is sent again before the log gives up on it: about
 * half a minute of pauses, a server's restart.
 */
const ATTEMPTS = 10

/**
 * A run's log on its way to the server: text is scrubbed of the run's secrets, gathered into
 * chunks of whole lines, and sent one chunk at a time in order, each numbered so that a retry
 * is stored once. A line is sent within `FLUSH_MS` of being written.
 */
export class LogSender {
  readonly #api: AgentApi
  readonly #run: string
  readonly #secrets: readonly string[]
  #pending = ''
  #sequence = 0
  #timer: NodeJS.Timeout | undefined
  #sending: Promise<void> = Promise.resolve()
  /** Bytes handed to the server so far; past `MAX_LOG_BYTES` the rest is dropped. */
  #sent = 0
  #full = false
  /** Set once a chunk could not be sent at all: the log goes on, with a gap the run reports. */
  lost = false

  readonly #limit: number

  constructor(api: AgentApi, run: string, secrets: readonly string[], limit = MAX_LOG_BYTES) {
    this.#api = api
    this.#run = run
    this.#secrets = secrets
    this.#limit = limit
  }

  write(text: string): void {
    this.#pending += text
    if (Buffer.byteLength(this.#pending) >= MAX_CHUNK_BYTES / 2) this.#flush(false)
    else
      this.#timer ??= setTimeout(() => {
        this.#flush(true)
      }, FLUSH_MS)
  }

  /**
   * Sends everything written so far and answers how many chunks that made: what is written after
   * begins a new chunk, so the log splits here (the plan's part and the apply's).
   */
  async mark(): Promise<number> {
    this.#flush(true)
    const chunks = this.#sequence
    await this.#sending
    return chunks
  }

  /** Sends what is left, the last partial line too; resolves once every chunk has gone. */
  async close(): Promise<void> {
    this.#flush(true)
    await this.#sending
  }

  /** Sends the whole lines pending (and a partial last line when `all`). */
  #flush(all: boolean): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    const end = all ? this.#pending.length : this.#pending.lastIndexOf('\n') + 1
    if (end === 0) {
      if (this.#pending !== '')
        this.#timer = setTimeout(() => {
          this.#flush(true)
        }, FLUSH_MS)
      return
    }
    let text = scrub(this.#pending.slice(0, end), this.#secrets)
    this.#pending = this.#pending.slice(end)
    if (this.#full) return
    this.#sent += Buffer.byteLength(text)
    if (this.#sent > this.#limit) {
      this.#full = true
      text = `\ncairn: the log passed ${Math.round(this.#limit / 1024 / 1024)} MiB; the rest of Terraform's output is not kept\n`
    }
    for (const chunk of chunksOf(text)) {
      const sequence = this.#sequence
      this.#sequence += 1
      this.#sending = this.#sending.then(() => this.#send(sequence, chunk))
    }
  }

  async #send(sequence: number, text: string): Promise<void> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        await this.#api.log(this.#run, sequence, text)
        return
      } catch {
        await new Promise((done) => setTimeout(done, Math.min(250 * 2 ** attempt, 5_000)))
      }
    }
    this.lost = true
  }
}

/** Text in pieces of at most `MAX_CHUNK_BYTES` bytes, cut between characters. */
function chunksOf(text: string): string[] {
  const chunks: string[] = []
  let rest = text
  while (Buffer.byteLength(rest) > MAX_CHUNK_BYTES) {
    let cut = Math.floor(MAX_CHUNK_BYTES / 4)
    while (Buffer.byteLength(rest.slice(0, cut * 2)) <= MAX_CHUNK_BYTES && cut * 2 < rest.length) {
      cut *= 2
    }
    chunks.push(rest.slice(0, cut))
    rest = rest.slice(cut)
  }
  if (rest !== '') chunks.push(rest)
  return chunks
}
