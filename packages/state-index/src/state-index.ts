import type { CommitHooks, ExtensionHost, StagePart, UnitChange, WriteExtension } from '@cairn/core'
import { Reindex } from './reindex'
import { ResourceService } from './resource-service'
import type { PostingsBuilder } from './search/postings-builder'
import { searchExtension } from './search/search-extension'
import { SearchFeed } from './search/search-feed'
import { SearchIndex } from './search/search-index'
import { searchSource } from './search/search-source'
import { indexStage } from './stored-index/index-stage'

export interface StateIndexOptions {
  /**
   * Index the resources of every state written (`SVC_RESOURCE_INDEX`; on by default): what diffs,
   * resource listings and search read. Off, they read each version's body when asked instead.
   */
  indexResources?: boolean
  /**
   * Where the search index's postings are made of each unit's stored index; inline by default,
   * worker threads in the server.
   */
  postings?: PostingsBuilder
  /**
   * How often each instance's search index is checked against every unit, in milliseconds, to
   * cover a change note lost to a crash (5 minutes by default).
   */
  searchReconcileMs?: number
}

/**
 * The state index, as one extension of core's write path (`createCore({ extensions })`): as a
 * body streams in, its resource index is stored beside it and named on the version (`stage`);
 * after each commit every instance's search index is told to read the unit again
 * (`beforeCommit`). What it serves (a version's resources, diffs, search, reindex) is `resources`,
 * there once core has attached it.
 */
export class StateIndex implements WriteExtension {
  readonly name = 'search index'
  readonly #options: StateIndexOptions
  #host: ExtensionHost | undefined
  #resources: ResourceService | undefined
  #search: WriteExtension | undefined

  constructor(options: StateIndexOptions = {}) {
    this.#options = options
  }

  /** A version's resources, diffs between versions, search. @throws before `attach` */
  get resources(): ResourceService {
    if (this.#resources === undefined) throw new Error('the state index is not attached to a core')
    return this.#resources
  }

  attach(host: ExtensionHost): void {
    const { postings, searchReconcileMs } = this.#options
    const index = new SearchIndex()
    const feed = new SearchFeed({
      store: host.store,
      index,
      source: searchSource(host, postings),
      clock: host.clock,
      ids: host.ids,
      ...(searchReconcileMs === undefined ? {} : { reconcileEveryMs: searchReconcileMs }),
    })
    this.#host = host
    this.#search = searchExtension(feed)
    this.#resources = new ResourceService(host, { index, feed }, new Reindex(host, feed))
  }

  stage(object: string): StagePart | undefined {
    if (this.#options.indexResources === false || this.#host === undefined) return undefined
    return indexStage(this.#host.store, object)
  }

  beforeCommit(change: UnitChange): Promise<CommitHooks | undefined> {
    return this.#search?.beforeCommit?.(change) ?? Promise.resolve(undefined)
  }
}
