import {
  ReindexResultSchema,
  SearchPageSchema,
  type ReindexResult,
  type SearchHit,
  type SearchPage,
} from '@cairn/contract'
import { everyItem } from './pages'
import type { Transport } from './transport'

/** What `GET /v1/search` looks for: at least one of `q` and `type`. */
export interface SearchFilter {
  /** Text matched against addresses and identity values (IDs, ARNs, names). */
  q?: string
  /** Only instances of this resource type, such as `aws_instance`. */
  type?: string
  /** Only units whose ID starts with this. */
  unitPrefix?: string
}

/** A search and the page of it to answer. */
export interface SearchQuery extends SearchFilter {
  /** At most this many hits (the server's default 100, at most 1000). */
  limit?: number
  cursor?: string
}

/** The most hits `GET /v1/search` answers in a page. */
const MAX_SEARCH_PAGE = 1000

/**
 * `/v1/search`: resource instances in the current version of every unit you may read, found by
 * address, type or identity. Units whose current state is not a readable Terraform state cannot be
 * searched: each page names them in `not_indexed`.
 */
export class SearchApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * One page of hits, by unit then address. A search with neither `q` nor `type` is refused with
   * `invalid_request` (400).
   */
  query(query: SearchQuery): Promise<SearchPage> {
    return this.#transport.json('GET', '/v1/search', SearchPageSchema, {
      query: {
        q: query.q,
        type: query.type,
        unit_prefix: query.unitPrefix,
        limit: query.limit,
        cursor: query.cursor,
      },
    })
  }

  /** Every hit, page after page. */
  all(query: SearchFilter & { pageSize?: number }): AsyncGenerator<SearchHit> {
    return everyItem<SearchPage, SearchHit, SearchFilter>(
      query,
      MAX_SEARCH_PAGE,
      (page) => this.query(page),
      (page) => page.results,
    )
  }

  /**
   * Rebuilds the search index from every unit's current version, indexing the versions written
   * before indexes existed (administrators).
   */
  reindex(): Promise<ReindexResult> {
    return this.#transport.json('POST', '/v1/search/reindex', ReindexResultSchema)
  }
}
