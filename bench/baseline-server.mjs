// The baseline the benchmark holds Cairn against: the least a node:http server can do to store a
// state durably and serve it back, with nothing else (no routing framework, hashing, validation
// or metadata).
//
//   POST <any path>  streams the request body to <dir>/state.json.tmp, fsyncs it, renames it to
//                    <dir>/state.json and fsyncs the directory (the durability Cairn gives a
//                    write), then answers 200 with {"size": <bytes>}.
//   GET <any path>   streams <dir>/state.json with Content-Type application/json and
//                    Content-Length, read in chunks of <read-kib> KiB (default 64, Node's own
//                    default for file streams).
//
// Usage: node bench/baseline-server.mjs <dir> [<read-kib>]. Listens on 127.0.0.1 on a free port and prints
// {"msg":"listening","port":<n>} on stdout when ready. Stops on SIGTERM or SIGINT.
import { createReadStream, createWriteStream } from 'node:fs'
import { open, rename, stat } from 'node:fs/promises'
import { Buffer } from 'node:buffer'
import { createServer } from 'node:http'
import { join } from 'node:path'
import process from 'node:process'
import { pipeline } from 'node:stream/promises'
import { setTimeout } from 'node:timers'

const [dir, readKiB = '64'] = process.argv.slice(2)
const readChunk = Number(readKiB) * 1024
if (dir === undefined || !Number.isInteger(readChunk) || readChunk < 1024) {
  process.stderr.write('usage: node bench/baseline-server.mjs <dir> [<read-kib>]\n')
  process.exit(2)
}
const file = join(dir, 'state.json')
const temporary = `${file}.tmp`

async function fsyncPath(path, flags) {
  const handle = await open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function upload(request, response) {
  // flush: the stream fsyncs the file before it closes it (Node >= 20.10).
  const out = createWriteStream(temporary, { flush: true })
  await pipeline(request, out)
  const size = out.bytesWritten
  await rename(temporary, file)
  await fsyncPath(dir, 'r')
  const body = JSON.stringify({ size })
  response.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  })
  response.end(body)
}

async function download(response) {
  const handle = await open(file, 'r')
  let size
  try {
    size = (await handle.stat()).size
  } catch (error) {
    await handle.close()
    throw error
  }
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': size })
  // The stream closes the handle when it ends or fails.
  await pipeline(createReadStream('', { fd: handle, highWaterMark: readChunk }), response)
}

const server = createServer((request, response) => {
  const done =
    request.method === 'POST'
      ? upload(request, response)
      : request.method === 'GET'
        ? stat(file).then(
            () => download(response),
            () => {
              response.writeHead(404).end()
            },
          )
        : Promise.resolve(response.writeHead(405).end())
  done.catch((error) => {
    process.stderr.write(`baseline: ${request.method} failed: ${error.message}\n`)
    if (!response.headersSent) response.writeHead(500).end()
    else response.destroy()
  })
})
server.headersTimeout = 60_000

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address()
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`)
})

const stop = () => {
  server.close(() => process.exit(0))
  server.closeIdleConnections()
  setTimeout(() => process.exit(0), 5000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
