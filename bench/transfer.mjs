// What the transfer benchmarks (state-transfer.mjs, s3-api.mjs) share: the cached states and their
// serials, a node:http client that streams and times a request, a server process's memory, and
// the top self-time functions of a CPU profile. See bench/README.md.
import { Buffer } from 'node:buffer'
import { createHash } from 'node:crypto'
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
} from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { SourceMap } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { setTimeout as sleep } from 'node:timers/promises'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { BASE_SERIAL, GENERATOR_VERSION, generateState } from './generate-state.mjs'
import { BenchError, root } from './processes.mjs'

export const cacheDir = join(root, '.bench')
export const MiB = 1024 * 1024
const CLIENT_CHUNK = MiB // the client reads the file in large chunks to stay cheap

// ---------------------------------------------------------------------------------------------
// The states

/** The cached state of `sizeMiB`, generated once into .bench/. */
export async function stateFile(sizeMiB) {
  mkdirSync(cacheDir, { recursive: true })
  const path = join(cacheDir, `state-v${GENERATOR_VERSION}-${sizeMiB}mib.json`)
  const metaPath = `${path}.meta`
  let meta
  if (existsSync(path) && existsSync(metaPath)) {
    meta = JSON.parse(readFileSync(metaPath, 'utf8'))
  } else {
    process.stderr.write(`bench: generating a ${sizeMiB} MiB state into ${relative(root, path)}\n`)
    const started = performance.now()
    const made = await generateState(path, sizeMiB)
    meta = { bytes: made.bytes, resources: made.resources, instances: made.instances }
    writeFileSync(metaPath, `${JSON.stringify(meta)}\n`)
    process.stderr.write(
      `bench: generated in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    )
  }
  // The first bytes, read once: each upload sends them with its own serial in the same width.
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(4096)
  const headLength = readSync(fd, head, 0, head.length, 0)
  closeSync(fd)
  const text = head.subarray(0, headLength).toString('latin1')
  const found = /\n {2}"serial": (\d+),\n/.exec(text)
  if (found?.[1] !== String(BASE_SERIAL)) {
    throw new BenchError(`${path} does not start with "serial": ${BASE_SERIAL}; delete it`)
  }
  const serialOffset = found.index + found[0].indexOf(found[1])
  return {
    sizeMiB,
    path,
    ...meta,
    head: head.subarray(0, serialOffset + found[1].length),
    serialOffset,
  }
}

/** The state's first bytes with `serial` in place of the base serial. */
export function headWithSerial(state, serial) {
  const text = String(serial)
  if (text.length !== String(BASE_SERIAL).length) throw new BenchError('too many rounds')
  const head = Buffer.from(state.head)
  head.write(text, state.serialOffset, 'latin1')
  return head
}

/** The sha256 of the state as uploaded with `serial`. */
export async function stateSha256(state, serial) {
  const hash = createHash('sha256')
  hash.update(headWithSerial(state, serial))
  const rest = createReadStream(state.path, {
    start: state.head.length,
    highWaterMark: CLIENT_CHUNK,
  })
  for await (const chunk of rest) hash.update(chunk)
  return hash.digest('hex')
}
/** VmHWM (peak resident set) and VmRSS (current) of a live process, in bytes. */
export function memoryOf(server) {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8')
  const field = (name) => {
    const found = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    if (found === null) throw new BenchError(`no ${name} in /proc/${server.pid}/status`)
    return Number(found[1]) * 1024
  }
  return { peak: field('VmHWM'), rss: field('VmRSS') }
}

// ---------------------------------------------------------------------------------------------
// The client: node:http, the file streamed from disk, answers read to their end and dropped.

/**
 * One request. `body` is a Buffer or a function that writes the request and ends it. The answer
 * is read to its end: counted, and kept (up to 64 KiB) when `keep` or when its status is not the
 * one expected, or hashed when `hash`. Resolves with the wall time from before the request to
 * the answer's last byte.
 */
/**
 * POSTs the state to `/v1/units/{unit}/upload` (any path on the baseline) with `serial` patched
 * into its first bytes, streamed from disk in large reads; returns `send`'s time and answer.
 */
export function uploadState(server, state, serial, unit) {
  return send(server, {
    method: 'POST',
    path: `/v1/units/${unit}/upload`,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(state.bytes) },
    expect: 200,
    keep: true,
    body: async (request) => {
      request.write(headWithSerial(state, serial))
      const rest = createReadStream(state.path, {
        start: state.head.length,
        highWaterMark: CLIENT_CHUNK,
      })
      await pipeline(rest, request)
    },
  })
}

export function send(
  server,
  { method, path, headers = {}, body, expect, keep = false, hash = false },
) {
  return new Promise((resolve, reject) => {
    // A failed connection often means the server died: wait a moment to say so.
    const fail = (error) => {
      if (error instanceof BenchError) {
        reject(error)
        return
      }
      void Promise.race([server.exited, sleep(500, undefined, { ref: false })]).then(() =>
        reject(
          new BenchError(
            `${method} ${path} to ${server.label} failed: ${error.message}${exitNote(server)}`,
          ),
        ),
      )
    }
    const started = performance.now()
    const request = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method,
      path,
      headers,
      agent: server.agent,
    })
    request.once('error', fail)
    request.once('response', (response) => {
      const expected = response.statusCode === expect
      const digest = hash && expected ? createHash('sha256') : undefined
      const kept = []
      let keptBytes = 0
      let bytes = 0
      let ended = false
      response.on('data', (chunk) => {
        bytes += chunk.length
        if (digest !== undefined) digest.update(chunk)
        else if ((keep || !expected) && keptBytes < 64 * 1024) {
          kept.push(chunk)
          keptBytes += chunk.length
        }
      })
      response.once('end', () => {
        ended = true
        const ms = performance.now() - started
        const text = Buffer.concat(kept).toString('utf8')
        if (!expected) {
          fail(
            new BenchError(
              `${method} ${path} to ${server.label}: status ${response.statusCode}, expected ${expect}: ${text.slice(0, 2000)}`,
            ),
          )
          return
        }
        resolve({ ms, bytes, text, sha256: digest?.digest('hex') })
      })
      response.once('error', fail)
      response.once('close', () => {
        if (!ended) fail(new Error('the answer stopped before its end'))
      })
    })
    if (typeof body === 'function') body(request).catch(fail)
    else request.end(body)
  })
}

function exitNote(server) {
  const exit = server.exit()
  return exit === undefined ? '' : ` (${server.label} stopped: ${exit})${server.tail()}`
}

// ---------------------------------------------------------------------------------------------
// The CPU profile: self time per function.

const sourceMaps = new Map()

/** `file:line` for a profile frame, through the bundle's source map when it has one. */
function locate(url, line, column) {
  if (url === '') return ''
  const shorten = (path) => (path.startsWith(`${root}/`) ? relative(root, path) : path)
  if (!url.startsWith('file://')) return `${url}:${line + 1}`
  const path = fileURLToPath(url)
  if (!sourceMaps.has(path)) {
    let map
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')))
    } catch {
      map = undefined
    }
    sourceMaps.set(path, map)
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column)
  if (entry?.originalSource === undefined) return `${shorten(path)}:${line + 1}`
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : join(dirname(path), entry.originalSource)
  return `${shorten(source)}:${entry.originalLine + 1}`
}

export async function readProfile(dir, name) {
  const path = join(dir, name)
  // Node writes the profile as the process exits; give it a moment if it is not there yet.
  for (let i = 0; i < 50 && !(await readdir(dir)).includes(name); i++) await sleep(100)
  const profile = JSON.parse(await readFile(path, 'utf8'))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfTime = new Map()
  let busy = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i])
    const { functionName, url, lineNumber } = node.callFrame
    const micros = profile.timeDeltas[i + 1] ?? 0
    if (functionName === '(idle)') continue
    busy += micros
    const where = locate(url, lineNumber, node.callFrame.columnNumber)
    const key = `${functionName === '' ? '(anonymous)' : functionName}\u0000${where}`
    selfTime.set(key, (selfTime.get(key) ?? 0) + micros)
  }
  const top = [...selfTime.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([key, micros]) => {
      const [fn, where] = key.split('\u0000')
      return { fn, where, ms: micros / 1000, share: busy === 0 ? 0 : micros / busy }
    })
  return { path, busyMs: busy / 1000, top }
}
