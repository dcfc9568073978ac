/**
 * `@cairn/state-index`: what is in the states. Each version's resource index is stored beside it
 * as the body streams in; a version's resources, diffs between versions and a search across every
 * unit are read from those indexes, never from whole states held in memory. It plugs into core as
 * one write-path extension, `StateIndex`.
 *
 * @module
 */
export type { DiffListing } from './diff/diff-listing'
export { collectDiff } from './diff/diff-listing'
export type { ResourceListing } from './listing/resource-listing'
export type { ResourceService, SearchQuery } from './resource-service'
export type { PostingsBuilder } from './search/postings-builder'
export { postingsOf } from './search/postings-builder'
export type { PostingsData } from './search/unit-postings'
export type { StateIndexOptions } from './state-index'
export { StateIndex } from './state-index'
