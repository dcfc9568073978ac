import type { PlanCounts } from '../run-record'
import type { Directive, Job } from '../run-service'
import type { AgentApi, Outcome } from './agent-api'

/** A refusal or failure of the server, with its status: the agent decides whether to retry. */
export class AgentApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.name = 'AgentApiError'
    this.status = status
  }
}

/** The agents' routes of a Cairn server (`/v1/agent/...`), with an agent token. */
export class HttpAgentApi implements AgentApi {
  readonly #base: string
  readonly #token: string
  readonly #fetch: typeof fetch

  constructor(options: { server: string; token: string; fetch?: typeof fetch }) {
    this.#base = `${options.server.replace(/\/+$/, '')}/v1/agent`
    this.#token = options.token
    this.#fetch = options.fetch ?? fetch
  }

  async claim(waitMs: number, signal: AbortSignal): Promise<Job | undefined> {
    const answer = await this.#call('POST', `/jobs?wait=${Math.ceil(waitMs / 1000)}`, { signal })
    if (answer.status === 204) return undefined
    return ((await answer.json()) as { job: Job }).job
  }

  async config(run: string): Promise<Buffer> {
    return Buffer.from(await (await this.#call('GET', `/runs/${run}/config`)).arrayBuffer())
  }

  async state(run: string): Promise<Buffer | undefined> {
    const answer = await this.#call('GET', `/runs/${run}/state`)
    if (answer.status === 204) return undefined
    return Buffer.from(await answer.arrayBuffer())
  }

  async heartbeat(run: string): Promise<Directive> {
    return (await (await this.#call('POST', `/runs/${run}/heartbeat`)).json()) as Directive
  }

  async log(run: string, sequence: number, text: string): Promise<void> {
    await this.#call('POST', `/runs/${run}/logs?sequence=${sequence}`, {
      body: text,
      type: 'text/plain; charset=utf-8',
    })
  }

  async planned(
    run: string,
    counts: PlanCounts,
    changes: boolean,
    logChunks: number,
  ): Promise<Directive> {
    const answer = await this.#call('POST', `/runs/${run}/planned`, {
      body: JSON.stringify({ ...counts, changes, log_chunks: logChunks }),
      type: 'application/json',
    })
    return (await answer.json()) as Directive
  }

  async writeState(run: string, state: Buffer): Promise<void> {
    await this.#call('PUT', `/runs/${run}/state`, { body: state, type: 'application/json' })
  }

  async finish(run: string, outcome: Outcome): Promise<void> {
    await this.#call('POST', `/runs/${run}/finish`, {
      body: JSON.stringify({
        status: outcome.status,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
        ...(outcome.stateDiverged === true ? { state_diverged: true } : {}),
      }),
      type: 'application/json',
    })
  }

  async #call(
    method: string,
    path: string,
    options: { body?: string | Buffer; type?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const answer = await this.#fetch(`${this.#base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(options.type === undefined ? {} : { 'content-type': options.type }),
      },
      ...(options.body === undefined ? {} : { body: options.body }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
    if (answer.ok) return answer
    const text = await answer.text().catch(() => '')
    let message = text
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text
    } catch {
      // Not JSON: the text as it came.
    }
    throw new AgentApiError(answer.status, `${method} ${path}: ${answer.status} ${message}`.trim())
  }
}
