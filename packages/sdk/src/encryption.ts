import * as v from 'valibot'
import type { Transport } from './transport'

const StatusPageSchema = v.object({
  current_kek: v.string(),
  plain: v.number(),
  by_kek: v.record(v.string(), v.number()),
  next_cursor: v.nullable(v.string()),
})
export type EncryptionStatusPage = v.InferOutput<typeof StatusPageSchema>

const RewritePageSchema = v.object({
  current_kek: v.string(),
  examined: v.number(),
  rewritten: v.number(),
  skipped: v.number(),
  next_cursor: v.nullable(v.string()),
  retired: v.array(v.string()),
})
export type EncryptionRewritePage = v.InferOutput<typeof RewritePageSchema>

/** Totals over every page. */
export interface EncryptionStatus {
  currentKek: string
  plain: number
  byKek: Record<string, number>
}

/**
 * `/v1/admin/encryption` (administrators; DESIGN section 15): what is encrypted under which KEK,
 * and the two rewrites, a page at a time so a caller goes on where it stopped (`cursor`).
 */
export class EncryptionApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  statusPage(cursor?: string): Promise<EncryptionStatusPage> {
    return this.#transport.json('GET', '/v1/admin/encryption/status', StatusPageSchema, {
      query: { cursor },
    })
  }

  /** Every page of `statusPage`, summed. */
  async status(): Promise<EncryptionStatus> {
    const total: EncryptionStatus = { currentKek: '', plain: 0, byKek: {} }
    for (let cursor: string | undefined, more = true; more;) {
      const page = await this.statusPage(cursor)
      total.currentKek = page.current_kek
      total.plain += page.plain
      for (const [kek, count] of Object.entries(page.by_kek)) {
        total.byKek[kek] = (total.byKek[kek] ?? 0) + count
      }
      cursor = page.next_cursor ?? undefined
      more = page.next_cursor !== null
    }
    return total
  }

  /** One page of `encrypt-existing` (plain objects) or `rewrap` (objects under another KEK). */
  rewritePage(
    mode: 'encrypt-existing' | 'rewrap',
    cursor?: string,
  ): Promise<EncryptionRewritePage> {
    return this.#transport.json('POST', `/v1/admin/encryption/${mode}`, RewritePageSchema, {
      body: { json: cursor === undefined ? {} : { cursor } },
    })
  }

  /** Every page of a rewrite, from `cursor` (the start by default), each handed to `onPage`. */
  async rewrite(
    mode: 'encrypt-existing' | 'rewrap',
    options: { cursor?: string; onPage?: (page: EncryptionRewritePage) => void } = {},
  ): Promise<{ examined: number; rewritten: number; skipped: number; retired: string[] }> {
    const total = { examined: 0, rewritten: 0, skipped: 0, retired: [] as string[] }
    for (let cursor = options.cursor, more = true; more;) {
      const page = await this.rewritePage(mode, cursor)
      total.examined += page.examined
      total.rewritten += page.rewritten
      total.skipped += page.skipped
      total.retired.push(...page.retired)
      options.onPage?.(page)
      cursor = page.next_cursor ?? undefined
      more = page.next_cursor !== null
    }
    return total
  }
}
