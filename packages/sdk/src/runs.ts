import {
  AgentTokenListSchema,
  ConfigUploadSchema,
  CreatedAgentTokenSchema,
  RunListSchema,
  RunSchema,
  RunSettingsSchema,
  type AgentToken,
  type CreatedAgentToken,
  type Run,
  type RunList,
  type RunRequest,
  type RunSettings,
} from '@cairn/contract'
import type { Transport } from './transport'

/** A piece of a run's log: the text from the offset asked for, and where the next read begins. */
export interface LogPiece {
  text: string
  next: number
  /** The run has ended: nothing follows `next`. */
  ended: boolean
}

/**
 * `/v1/runs` (remote runs, when the server has them on): upload a configuration, start a plan,
 * apply or destroy on the server's agents, follow its log, confirm or cancel it. An unknown run, or
 * one of a unit the caller may not read, fails with `run_not_found`; a cancel or confirmation its
 * status does not allow with `run_conflict`.
 */
export class RunsApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** Uploads a configuration (`.tar.gz`, 10 MiB at most by default); answers its ID for `create`. */
  async upload(archive: Uint8Array): Promise<string> {
    const created = await this.#transport.json('POST', '/v1/runs/uploads', ConfigUploadSchema, {
      body: { bytes: archive },
      headers: { 'content-type': 'application/gzip' },
    })
    return created.id
  }

  /** A unit's run settings: where the `cloud` block's runs of it happen. */
  settings(unit: string): Promise<RunSettings> {
    return this.#transport.json('GET', '/v1/runs/settings', RunSettingsSchema, {
      query: { unit },
    })
  }

  /**
   * Sets where the `cloud` block's runs of a unit happen: `remote` (or `agent`) on the server's
   * agents, `local` where Terraform is called. Needs `unit:write`.
   */
  setExecutionMode(unit: string, mode: RunSettings['execution_mode']): Promise<RunSettings> {
    return this.#transport.json('PUT', '/v1/runs/settings', RunSettingsSchema, {
      body: { json: { unit, execution_mode: mode } },
    })
  }

  /** Queues a run; it starts when an agent takes it and nothing holds its unit. */
  create(run: RunRequest): Promise<Run> {
    return this.#transport.json('POST', '/v1/runs', RunSchema, { body: { json: run } })
  }

  get(id: string): Promise<Run> {
    return this.#transport.json('GET', `/v1/runs/${encodeURIComponent(id)}`, RunSchema)
  }

  /** Runs, newest first: of one unit, with one status, a page at a time. */
  list(
    options: { unit?: string; status?: Run['status']; limit?: number; cursor?: string } = {},
  ): Promise<RunList> {
    return this.#transport.json('GET', '/v1/runs', RunListSchema, { query: { ...options } })
  }

  /** Cancels a run: at once when queued, by interrupting Terraform when running (`force` kills it). */
  cancel(id: string, options: { force?: boolean } = {}): Promise<Run> {
    return this.#transport.json('DELETE', `/v1/runs/${encodeURIComponent(id)}`, RunSchema, {
      query: { force: options.force === true ? true : undefined },
    })
  }

  /** Confirms a planned apply that waits for it. */
  confirm(id: string): Promise<Run> {
    return this.#transport.json('POST', `/v1/runs/${encodeURIComponent(id)}/apply`, RunSchema)
  }

  /** The log from `offset` (0 by default), as stored so far. */
  async log(id: string, offset = 0): Promise<LogPiece> {
    const response = await this.#transport.send('GET', `/v1/runs/${encodeURIComponent(id)}/logs`, {
      query: { offset },
    })
    return {
      text: await response.text(),
      next: Number(response.headers.get('x-log-offset') ?? offset),
      ended: response.headers.get('x-run-ended') === 'true',
    }
  }

  /**
   * The log from `offset` as it is written, until the run ends: each piece as it arrives. Resumes
   * where it stopped if the server ends one answer before the run ends.
   */
  async *follow(id: string, offset = 0): AsyncGenerator<string> {
    let at = offset
    for (;;) {
      const response = await this.#transport.send(
        'GET',
        `/v1/runs/${encodeURIComponent(id)}/logs`,
        { query: { offset: at, follow: true } },
      )
      const decoder = new TextDecoder()
      if (response.body !== null) {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          at += chunk.byteLength
          const text = decoder.decode(chunk, { stream: true })
          if (text !== '') yield text
        }
      }
      const rest = decoder.decode()
      if (rest !== '') yield rest
      if ((await this.get(id)).finished !== null) {
        // Whatever was written between the last piece and the end.
        const last = await this.log(id, at)
        if (last.text !== '') yield last.text
        return
      }
    }
  }

  /** Agent tokens (administrators): the token's secret is in `create`'s answer only. */
  readonly agentTokens = {
    create: (name: string): Promise<CreatedAgentToken> =>
      this.#transport.json('POST', '/v1/agents/tokens', CreatedAgentTokenSchema, {
        body: { json: { name } },
      }),
    list: async (): Promise<AgentToken[]> =>
      (await this.#transport.json('GET', '/v1/agents/tokens', AgentTokenListSchema)).tokens,
    revoke: async (id: string): Promise<void> => {
      await this.#transport.send('DELETE', `/v1/agents/tokens/${encodeURIComponent(id)}`)
    },
  }
}
