import { IndexEntryScanner, parseEntry, UnreadableIndexError } from '../stored-index/index-entries'
import { buildPostings, type PostedInstance, type PostingsData } from './unit-postings'

/**
 * Reads the bytes of a stored index and makes the unit's postings of it (`buildPostings`), or
 * answers undefined when they are not an index this server reads. The work of loading a unit into
 * the search index, which a server does for every unit when it starts: it may run on another
 * thread. Bytes it is handed are its own.
 */
export type PostingsBuilder = (indexBytes: Uint8Array) => Promise<PostingsData | undefined>

/** How much of a stored index is scanned at a time when its postings are made. */
const SLICE = 1024 * 1024

/**
 * The postings of a stored index's bytes, on this thread. Each entry is read as it is met and
 * only what a search looks at is kept of it (address, type, identity), never the index whole as
 * text or as objects.
 */
export function postingsOf(indexBytes: Uint8Array): PostingsData | undefined {
  const scanner = new IndexEntryScanner()
  const resources: PostedInstance[] = []
  try {
    for (let at = 0; at < indexBytes.length; at += SLICE) {
      for (const bytes of scanner.write(indexBytes.subarray(at, at + SLICE))) {
        const { address, type, identity } = parseEntry(bytes)
        resources.push({ address, type, identity })
      }
    }
    return buildPostings({ resources, truncated: scanner.end().truncated })
  } catch (error) {
    if (error instanceof UnreadableIndexError) return undefined
    throw error
  }
}

/** The default `PostingsBuilder`: on the caller's thread. */
export const inlinePostings: PostingsBuilder = (indexBytes) =>
  Promise.resolve(postingsOf(indexBytes))
