// A worker thread that scans state bodies for the server (see worker-scanners.ts), so that a
// large upload's JSON check runs beside its hashing and its disk writes instead of after them.
import { parentPort, workerData } from 'node:worker_threads'
import { scannerFor, StateScanError, type InlineScanner } from '@cairn/state-scan'
import type { FromWorker, ToWorker } from './messages'

const port = parentPort
if (port === null) throw new Error('scan-worker.js runs only as a worker thread')
const ring = new Uint8Array(workerData as SharedArrayBuffer)

let job = -1
/** The current body's scan; none between bodies, so nothing of the last one is held. */
let scanner: InlineScanner | undefined
let failed = false

const reply = (message: FromWorker): void => {
  port.postMessage(message)
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'drop') {
    if (message.job === job) scanner = undefined
    return
  }
  if (message.job !== job) {
    // A new body: whatever became of the last one (finished, refused, abandoned), start afresh.
    job = message.job
    const current = job
    scanner = scannerFor(
      message.options,
      message.streamEntries === true
        ? (block) => {
            // The block is memory of its own, which the scan does not touch again: moved.
            port.postMessage({ type: 'entries', job: current, block } satisfies FromWorker, [
              block.buffer as ArrayBuffer,
            ])
          }
        : undefined,
    )
    failed = false
  }
  try {
    if (message.type === 'chunk') {
      // A dropped body's chunks still in the queue are acknowledged, not scanned.
      if (!failed && scanner !== undefined) {
        scanner.write(ring.subarray(message.offset, message.offset + message.length))
      }
      reply({ type: 'ack', job, size: message.length })
    } else if (!failed && scanner !== undefined) {
      const scan = scanner.end()
      // Done: what the scan kept (a detailed diff's attributes) is the server's now.
      scanner = undefined
      // The index's entries (megabytes for a large state) move to the server instead of a copy:
      // they are the scanner's own buffer, which nothing here uses again.
      const resources = scan.resources
      const moved =
        resources !== undefined && 'resources' in resources
          ? resources.resources.map((block) => block.buffer as ArrayBuffer)
          : []
      port.postMessage({ type: 'done', job, scan } satisfies FromWorker, moved)
    }
  } catch (error) {
    if (!(error instanceof StateScanError)) throw error
    failed = true
    scanner = undefined
    reply({ type: 'error', job, reason: error.reason })
    if (message.type === 'chunk') reply({ type: 'ack', job, size: message.length })
  }
})
