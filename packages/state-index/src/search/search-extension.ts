import type { WriteExtension } from '@cairn/core'
import type { SearchFeed } from './search-feed'

/**
 * The write path's part in search: after each committed write, restore or delete, a change note
 * that tells every instance's search index to reload the unit, left before the answer is sent.
 */
export function searchExtension(feed: SearchFeed): WriteExtension {
  return {
    name: 'search index',
    beforeCommit(change) {
      return Promise.resolve({
        async afterCommit(outcome) {
          // A write of the bytes already current changed nothing.
          if (change.kind !== 'delete' && outcome.version === null) return
          await feed.announce(change.unit)
        },
      })
    },
  }
}
