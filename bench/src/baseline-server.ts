// The baseline the transfer benches hold Cairn against: the least a node:http server can do to
// store a state durably and serve it back, with nothing else (no routing framework, hashing,
// validation or metadata).
//
//   POST <any path>  streams the request body to <dir>/state.json.tmp, fsyncs it, renames it to
//                    <dir>/state.json and fsyncs the directory (the durability Cairn gives a
//                    write), then answers 200 with {"size": <bytes>}.
//   GET <any path>   streams <dir>/state.json with Content-Type application/json and
//                    Content-Length, read in chunks of <read-kib> KiB (default 64, Node's own
//                    default for file streams); 404 before the first POST.
//   LOCK, UNLOCK     Terraform's `http` backend's lock and unlock: one lock, held in memory (not
//                    made durable), 200 or 423 with the holder's lock info.
//
// Usage: node bench/dist/baseline-server.js <dir> [<read-kib> [<tls-cert> <tls-key>]]. Listens on
// 127.0.0.1 on a free port (HTTPS with the certificate and key given) and prints
// {"msg":"listening","port":<n>} on stdout when ready. Stops on SIGTERM or SIGINT.
import { createReadStream, createWriteStream } from 'node:fs'
import { readFileSync } from 'node:fs'
import { open, rename, stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'

const [dir, readKiB = '64', certPath, keyPath] = process.argv.slice(2)
const readChunk = Number(readKiB) * 1024
if (
  dir === undefined ||
  !Number.isInteger(readChunk) ||
  readChunk < 1024 ||
  (certPath === undefined) !== (keyPath === undefined)
) {
  process.stderr.write(
    'usage: node bench/dist/baseline-server.js <dir> [<read-kib> [<tls-cert> <tls-key>]]\n',
  )
  process.exit(2)
}
const file = join(dir, 'state.json')
const temporary = `${file}.tmp`

async function fsyncPath(path: string, flags: string) {
  const handle = await open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function upload(request: IncomingMessage, response: ServerResponse) {
  // flush: the stream fsyncs the file before it closes it (Node >= 20.10).
  const out = createWriteStream(temporary, { flush: true })
  await pipeline(request, out)
  const size = out.bytesWritten
  await rename(temporary, file)
  await fsyncPath(dir as string, 'r')
  const body = JSON.stringify({ size })
  response.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  })
  response.end(body)
}

async function download(response: ServerResponse) {
  const handle = await open(file, 'r')
  let size: number
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

/** The lock info of the one lock, as Terraform sent it; undefined while unlocked. */
let held: { id: string; body: string } | undefined

async function readText(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of request) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

function answerJson(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  })
  response.end(body)
}

async function lock(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readText(request)
  const { ID } = JSON.parse(body) as { ID: string }
  if (held !== undefined && held.id !== ID) {
    answerJson(response, 423, held.body)
    return
  }
  held = { id: ID, body }
  answerJson(response, 200, body)
}

async function unlock(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const text = await readText(request)
  const { ID } = (text === '' ? {} : JSON.parse(text)) as { ID?: string }
  if (held !== undefined && ID !== undefined && held.id !== ID) {
    answerJson(response, 423, held.body)
    return
  }
  held = undefined
  answerJson(response, 200, '{}')
}

function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method === 'POST') return upload(request, response)
  if (request.method === 'LOCK') return lock(request, response)
  if (request.method === 'UNLOCK') return unlock(request, response)
  if (request.method === 'GET') {
    return stat(file).then(
      () => download(response),
      () => {
        response.writeHead(404).end()
      },
    )
  }
  response.writeHead(405).end()
  return Promise.resolve()
}

const serve = (request: IncomingMessage, response: ServerResponse) => {
  handle(request, response).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error)
    process.stderr.write(`baseline: ${request.method ?? ''} failed: ${reason}\n`)
    if (!response.headersSent) response.writeHead(500).end()
    else response.destroy()
  })
}
const server =
  certPath === undefined || keyPath === undefined
    ? createServer(serve)
    : createHttpsServer({ cert: readFileSync(certPath), key: readFileSync(keyPath) }, serve)
server.headersTimeout = 60_000

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`)
})

const stop = () => {
  server.close(() => process.exit(0))
  server.closeIdleConnections()
  setTimeout(() => process.exit(0), 5000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
