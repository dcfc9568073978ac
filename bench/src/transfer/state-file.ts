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
import { join, relative } from 'node:path'
import { BenchError } from '../harness/bench-error'
import { progress } from '../harness/progress'
import { cacheDir, root } from '../harness/paths'
import { BASE_SERIAL, GENERATOR_VERSION, generateState } from './generate-state'

/** The client reads the file in large chunks to stay cheap. */
export const CLIENT_CHUNK = 1024 * 1024

/** A generated state on disk, and where its serial sits so each upload can send its own. */
export interface StateFile {
  readonly sizeMiB: number
  readonly path: string
  readonly bytes: number
  readonly resources: number
  readonly instances: number
  /** The first bytes, up to the end of the serial's digits. */
  readonly head: Buffer
  readonly serialOffset: number
}

interface StateMeta {
  readonly bytes: number
  readonly resources: number
  readonly instances: number
}

/** The cached state of `sizeMiB`, generated once into .bench/. */
export async function stateFile(sizeMiB: number): Promise<StateFile> {
  mkdirSync(cacheDir, { recursive: true })
  const path = join(cacheDir, `state-v${GENERATOR_VERSION}-${sizeMiB}mib.json`)
  const metaPath = `${path}.meta`
  let meta: StateMeta
  if (existsSync(path) && existsSync(metaPath)) {
    meta = JSON.parse(readFileSync(metaPath, 'utf8')) as StateMeta
  } else {
    progress(`generating a ${sizeMiB} MiB state into ${relative(root, path)}`)
    const started = performance.now()
    const made = await generateState(path, sizeMiB)
    meta = { bytes: made.bytes, resources: made.resources, instances: made.instances }
    writeFileSync(metaPath, `${JSON.stringify(meta)}\n`)
    progress(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
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
export function headWithSerial(state: StateFile, serial: number): Buffer {
  const text = String(serial)
  if (text.length !== String(BASE_SERIAL).length) throw new BenchError('too many rounds')
  const head = Buffer.from(state.head)
  head.write(text, state.serialOffset, 'latin1')
  return head
}

/** Bytes [start, end) of the state as uploaded with `serial`, streamed from disk. */
export async function* stateBytes(
  state: StateFile,
  serial: number,
  start = 0,
  end = state.bytes,
): AsyncGenerator<Buffer> {
  const head = headWithSerial(state, serial)
  if (start < head.length) yield head.subarray(start, Math.min(end, head.length))
  const from = Math.max(start, head.length)
  if (from >= end) return
  const rest = createReadStream(state.path, {
    start: from,
    end: end - 1,
    highWaterMark: CLIENT_CHUNK,
  })
  for await (const chunk of rest) yield chunk as Buffer
}

/** The sha256 of the state as uploaded with `serial`. */
export async function stateSha256(state: StateFile, serial: number): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of stateBytes(state, serial)) hash.update(chunk)
  return hash.digest('hex')
}
