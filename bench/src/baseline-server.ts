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
//   /.well-known/terraform.json and /tfe/api/v2/...
//                    the least of the TFE API that Terraform's `cloud` block uses for one
//                    workspace in local execution (terraform-wire.md A2): discovery, ping, the
//                    entitlements, the workspace, its lock and unlock (held in memory), the
//                    current state version and its download, a state version's creation, its two
//                    uploads (the state written as a POST is, the JSON form read and dropped) and
//                    its status. Answers are fixed documents with the few fields that change; no
//                    authentication, no validation. The floor of that protocol for a bench.
//
// With BASELINE_AS_CAIRN=1 in its environment, it also makes durable what Cairn makes durable, and
// nothing else: a lock or unlock replaces a record (written, fsynced, renamed, folder fsynced); a
// state write replaces it too after the state; a pending state version is such a record, written
// at its creation and at its upload; and every lock, unlock, state write and state read adds an
// audit record (a new file, fsynced, its folder fsynced) before the answer. The floor of Cairn's
// guarantees on each protocol, where the plain server is the floor of the protocol alone.
//
// Usage: node bench/dist/baseline-server.js <dir> [<read-kib> [<tls-cert> <tls-key>]]. Listens on
// 127.0.0.1 on a free port (HTTPS with the certificate and key given) and prints
// {"msg":"listening","port":<n>} on stdout when ready. Stops on SIGTERM or SIGINT.
import { createReadStream, createWriteStream } from 'node:fs'
import { readFileSync } from 'node:fs'
import { mkdir, open, rename, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { finished, pipeline } from 'node:stream/promises'

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
const asCairn = process.env['BASELINE_AS_CAIRN'] === '1'
let records = 0

async function fsyncPath(path: string, flags: string) {
  const handle = await open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Replaces `<dir>/<name>` durably with a small record, as a store replaces one. */
async function replaceRecord(name: string): Promise<void> {
  records += 1
  const tmp = join(dir as string, `.record-${String(records)}.tmp`)
  await writeFile(tmp, JSON.stringify({ record: records, pad: 'x'.repeat(800) }), { flush: true })
  await rename(tmp, join(dir as string, name))
  await fsyncPath(dir as string, 'r')
}

/** Adds an audit record durably (a new file), as every audited request of Cairn's does. */
async function audit(): Promise<void> {
  records += 1
  const folder = join(dir as string, 'audit')
  await mkdir(folder, { recursive: true })
  const path = join(folder, `${String(records)}.json`)
  await writeFile(path, JSON.stringify({ record: records, pad: 'x'.repeat(400) }), { flush: true })
  await fsyncPath(folder, 'r')
}

/** What Cairn keeps durably for a request, when this server stands for Cairn's guarantees. */
async function keep(...names: string[]): Promise<void> {
  if (!asCairn) return
  for (const name of names) await (name === 'audit' ? audit() : replaceRecord(name))
}

async function upload(request: IncomingMessage, response: ServerResponse) {
  // flush: the stream fsyncs the file before it closes it (Node >= 20.10).
  const out = createWriteStream(temporary, { flush: true })
  await pipeline(request, out)
  const size = out.bytesWritten
  await rename(temporary, file)
  await fsyncPath(dir as string, 'r')
  await keep('unit.json', 'audit')
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
  await keep('unit.json', 'audit')
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
  await keep('unit.json', 'audit')
  answerJson(response, 200, '{}')
}

/** The workspace's one lock (the cloud block's), and the state versions announced, in memory. */
let cloudLocked = false
interface Declared {
  serial: number
  lineage: string
  md5: string
}
const announced = new Map<string, Declared>()
let current: (Declared & { id: string }) | undefined
let versions = 0

const WORKSPACE = 'ws-bench'

function tfe(response: ServerResponse, status: number, document: unknown): Promise<void> {
  const body = JSON.stringify(document)
  response.writeHead(status, {
    'Content-Type': 'application/vnd.api+json',
    'Content-Length': Buffer.byteLength(body),
    'TFP-API-Version': '2.5',
    'TFP-AppName': 'Terraform Enterprise',
  })
  response.end(body)
  return Promise.resolve()
}

function workspace(name: string) {
  const can = (names: string[]) => Object.fromEntries(names.map((name) => [name, true]))
  return {
    data: {
      id: WORKSPACE,
      type: 'workspaces',
      attributes: {
        name,
        'execution-mode': 'local',
        operations: false,
        'terraform-version': 'latest',
        locked: cloudLocked,
        'tag-names': [],
        actions: { 'is-destroyable': true },
        permissions: can([
          'can-read-state-outputs',
          'can-read-state-versions',
          'can-read-settings',
          'can-create-state-versions',
          'can-update',
          'can-lock',
          'can-unlock',
          'can-force-unlock',
          'can-destroy',
        ]),
      },
      relationships: { organization: { data: { id: 'bench', type: 'organizations' } } },
    },
  }
}

function stateVersion(
  request: IncomingMessage,
  id: string,
  declared: Declared,
  status: 'pending' | 'finalized',
) {
  const base = `https://${request.headers.host ?? 'localhost'}/tfe/api/v2/state-versions/${id}`
  return {
    data: {
      id,
      type: 'state-versions',
      attributes: {
        status,
        serial: declared.serial,
        lineage: declared.lineage,
        md5: declared.md5,
        'hosted-state-download-url': status === 'finalized' ? `${base}/download` : null,
        ...(status === 'pending'
          ? {
              'hosted-state-upload-url': `${base}/upload`,
              'hosted-json-state-upload-url': `${base}/json-upload`,
            }
          : {}),
      },
      relationships: { workspace: { data: { id: WORKSPACE, type: 'workspaces' } } },
    },
  }
}

async function cloud(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '').split('?')[0] ?? ''
  const method = request.method
  const api = '/tfe/api/v2'
  if (method === 'GET' && path === '/.well-known/terraform.json') {
    const services = { 'tfe.v2': `${api}/`, 'tfe.v2.1': `${api}/`, 'tfe.v2.2': `${api}/` }
    answerJson(response, 200, JSON.stringify(services))
    return
  }
  const route = path.slice(api.length)
  let match: RegExpExecArray | null
  if (method === 'GET' && route === '/ping') return tfe(response, 200, {})
  if (method === 'GET' && /^\/organizations\/[^/]+\/entitlement-set$/.test(route)) {
    return tfe(response, 200, {
      data: {
        id: 'org-bench',
        type: 'entitlement-sets',
        attributes: { operations: false, 'state-storage': true },
      },
    })
  }
  if (method === 'GET' && (match = /^\/organizations\/[^/]+\/workspaces\/([^/]+)$/.exec(route))) {
    return tfe(response, 200, workspace(match[1] ?? ''))
  }
  if (method === 'POST' && route === `/workspaces/${WORKSPACE}/actions/lock`) {
    await readText(request)
    if (cloudLocked) return tfe(response, 409, { errors: [{ status: '409', title: 'conflict' }] })
    cloudLocked = true
    await keep('unit.json', 'audit')
    return tfe(response, 200, workspace('bench'))
  }
  if (method === 'POST' && route === `/workspaces/${WORKSPACE}/actions/unlock`) {
    await readText(request)
    cloudLocked = false
    await keep('unit.json', 'audit')
    return tfe(response, 200, workspace('bench'))
  }
  if (method === 'GET' && route === `/workspaces/${WORKSPACE}/current-state-version`) {
    if (current === undefined) return tfe(response, 404, { errors: [{ status: '404' }] })
    return tfe(response, 200, stateVersion(request, current.id, current, 'finalized'))
  }
  if (method === 'POST' && route === `/workspaces/${WORKSPACE}/state-versions`) {
    const { data } = JSON.parse(await readText(request)) as { data: { attributes: Declared } }
    versions += 1
    const id = `sv-${String(versions)}`
    const { serial, lineage, md5 } = data.attributes
    announced.set(id, { serial, lineage, md5 })
    await keep(`${id}.json`)
    return tfe(response, 201, stateVersion(request, id, { serial, lineage, md5 }, 'pending'))
  }
  if ((match = /^\/state-versions\/([^/]+)(?:\/([a-z-]+))?$/.exec(route))) {
    const id = match[1] ?? ''
    const declared = announced.get(id) ?? (current?.id === id ? current : undefined)
    if (declared === undefined) return tfe(response, 404, { errors: [{ status: '404' }] })
    const action = match[2]
    if (method === 'PUT' && action === 'upload') {
      const out = createWriteStream(temporary, { flush: true })
      await pipeline(request, out)
      await rename(temporary, file)
      await fsyncPath(dir as string, 'r')
      await keep('unit.json', `${id}.json`, 'audit')
      announced.delete(id)
      current = { id, ...declared }
      response.writeHead(200).end()
      return
    }
    if (method === 'PUT' && action === 'json-upload') {
      request.resume()
      await finished(request)
      response.writeHead(200).end()
      return
    }
    if (method === 'GET' && action === 'download') {
      await keep('audit')
      return download(response)
    }
    if (method === 'GET' && action === undefined) {
      const status = announced.has(id) ? 'pending' : 'finalized'
      return tfe(response, 200, stateVersion(request, id, declared, status))
    }
  }
  response.writeHead(404).end()
}

function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = request.url ?? ''
  if (url.startsWith('/tfe/api/v2/') || url.startsWith('/.well-known/')) {
    return cloud(request, response)
  }
  if (request.method === 'POST') return upload(request, response)
  if (request.method === 'LOCK') return lock(request, response)
  if (request.method === 'UNLOCK') return unlock(request, response)
  if (request.method === 'GET') {
    return stat(file).then(
      async () => {
        await keep('audit')
        await download(response)
      },
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
