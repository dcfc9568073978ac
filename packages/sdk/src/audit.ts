import {
  AuditListSchema,
  MAX_AUDIT_PAGE,
  type AuditList,
  type AuditQuery,
  type AuditRecord,
} from '@cairn/contract'
import { everyItem } from './pages'
import type { Transport } from './transport'

/** The filters of `GET /v1/audit`, without the page: every one given must hold. */
export type AuditFilter = Omit<AuditQuery, 'limit' | 'cursor'>

/** One page of the audit trail, newest first. */
export interface AuditPage {
  records: AuditRecord[]
  /** Where the next page starts (pass it as `cursor`); null when nothing is left. */
  nextCursor: string | null
}

/**
 * `GET /v1/audit`: who read or changed what, when, on which surface, and how it ended. The whole
 * trail takes an administrator; a unit's own trail (`unit`) takes `unit:manage` on it.
 */
export class AuditApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * One page of records, newest first. `unit` matches a unit exactly, `prefix` every unit that
   * starts with it, `principal` the principal's subject; `since` (inclusive) and `until`
   * (exclusive) are RFC 3339. A page may hold fewer than `limit` records and still have a next
   * one: the server bounds the work of each.
   */
  async list(query: AuditQuery = {}): Promise<AuditPage> {
    const page = await this.#page(query)
    return { records: page.records, nextCursor: page.next_cursor }
  }

  /** Every record that matches, newest first, page after page. */
  all(query: AuditFilter & { pageSize?: number } = {}): AsyncGenerator<AuditRecord> {
    return everyItem<AuditList, AuditRecord, AuditFilter>(
      query,
      MAX_AUDIT_PAGE,
      (page) => this.#page(page),
      (page) => page.records,
    )
  }

  #page(query: AuditQuery): Promise<AuditList> {
    return this.#transport.json('GET', '/v1/audit', AuditListSchema, { query: { ...query } })
  }
}
