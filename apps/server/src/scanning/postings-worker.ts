// A worker thread that makes the search index's postings of units' stored indexes (see
// postings-workers.ts), so that loading thousands of units runs beside the server's requests.
import { parentPort } from 'node:worker_threads'
import { postingsOf, type PostingsData } from '@cairn/state-index'
import type { FromPostingsWorker, ToPostingsWorker } from './messages'

const port = parentPort
if (port === null) throw new Error('postings-worker.js runs only as a worker thread')

port.on('message', ({ id, bytes }: ToPostingsWorker) => {
  let reply: FromPostingsWorker
  let moved: ArrayBuffer[] = []
  try {
    const postings = postingsOf(bytes)
    reply = postings === undefined ? { id, unreadable: true } : { id, postings }
    if (postings !== undefined) moved = arraysOf(postings)
  } catch (error) {
    reply = { id, failed: error instanceof Error ? error.message : String(error) }
  }
  port.postMessage(reply, moved)
})

/** The postings' typed arrays, each over memory of its own: moved to the server, not copied. */
function arraysOf(postings: PostingsData): ArrayBuffer[] {
  return [
    postings.addressEnds,
    postings.types,
    postings.valueEnds,
    postings.postingStarts,
    postings.postingInstances,
    postings.postingAttributes,
    postings.filter,
  ].map((array) => array.buffer as ArrayBuffer)
}
