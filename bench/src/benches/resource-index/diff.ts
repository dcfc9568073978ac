import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BenchError } from '../../harness/bench-error'
import { makeTemporaryDir, removeTemporaryDir } from '../../harness/cleanup'
import { fmtInt, fmtMiB, fmtMs } from '../../harness/format'
import { request } from '../../harness/http'
import { memoryOf, resetPeak } from '../../harness/proc'
import type { Memory } from '../../harness/proc'
import { progress } from '../../harness/progress'
import type { Figure } from '../../harness/report'
import { median } from '../../harness/stats'
import type { Table } from '../../harness/table'
import { BASE_SERIAL } from '../../transfer/generate-state'
import { send } from '../../transfer/send'
import type { StateFile } from '../../transfer/state-file'
import { createUnit, startCairn, UNIT, upload } from './shared'
import type { Values } from './shared'

/**
 * Writes a copy of the state with a few attribute values changed, spread over the file: four
 * `"replicas"` numbers changed in place (same length) and one `"enabled": true` made `false`
 * (one byte longer).
 */
function patchedState(state: StateFile, dir: string): StateFile & { edits: number } {
  const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39
  const bytes = readFileSync(state.path)
  const key = '"replicas": '
  let edits = 0
  for (let k = 1; k <= 4; k++) {
    // A value, not its cty type (`"replicas": "number"`) next to it.
    let at = bytes.indexOf(key, Math.floor((bytes.length * k) / 6))
    while (at >= 0 && !isDigit(bytes[at + key.length])) at = bytes.indexOf(key, at + 1)
    if (at < 0) throw new BenchError('no "replicas" to patch in the state')
    const digit = at + key.length
    const was = bytes[digit] ?? 0x30
    bytes[digit] = was === 0x39 ? 0x31 : was + 1 // '9' -> '1', else + 1
    edits += 1
  }
  const needle = '"enabled": true'
  const at = bytes.indexOf(needle, Math.floor((bytes.length * 5) / 6))
  if (at < 0) throw new BenchError('no "enabled": true to patch in the state')
  const patched = Buffer.concat([
    bytes.subarray(0, at),
    Buffer.from('"enabled": false'),
    bytes.subarray(at + needle.length),
  ])
  const path = join(dir, 'patched.json')
  writeFileSync(path, patched)
  return { ...state, path, bytes: patched.length, edits: edits + 1 }
}

interface DiffAnswer {
  readonly resources: { readonly changed: readonly { readonly attributes?: readonly unknown[] }[] }
}

export interface DiffResult {
  readonly state: StateFile
  readonly uploadMs: readonly number[]
  readonly changed: number
  readonly attributes: number
  readonly plainMs: readonly number[]
  readonly detailMs: readonly number[]
  readonly memory: { afterUploads: Memory; afterPlain: Memory; afterDetail: Memory }
}

/** 3. Diff of two large versions that differ in a few instances. */
export async function runDiff(state: StateFile, values: Values): Promise<DiffResult> {
  const dataDir = await makeTemporaryDir('cairn-bench-diff-')
  const patchDir = await makeTemporaryDir('cairn-bench-patched-')
  const patched = patchedState(state, patchDir)
  const server = await startCairn('index on', dataDir, 2 * state.bytes)
  await createUnit(server)
  const uploadMs = [
    (await upload(server, state, BASE_SERIAL + 1)).ms,
    (await upload(server, patched, BASE_SERIAL + 2)).ms,
  ]
  const afterUploads = memoryOf(server.pid)
  const path = `/v1/units/${UNIT}/diff`
  // Untimed: the diff finds what was changed, and the detail says what.
  const plain = (await request(server, 'GET', path)) as DiffAnswer
  const detail = (await request(server, 'GET', `${path}?detail=true`)) as DiffAnswer
  const changed = plain.resources.changed.length
  if (changed !== patched.edits || detail.resources.changed.length !== changed) {
    throw new BenchError(
      `the diff lists ${changed} changed instances (detail: ${detail.resources.changed.length}), expected ${patched.edits}`,
    )
  }
  const attributes = detail.resources.changed.reduce((n, r) => n + (r.attributes?.length ?? 0), 0)
  // Plain diffs first, then detailed ones, so the peak of each can be read apart.
  resetPeak(server.pid)
  const plainMs: number[] = []
  for (let i = 0; i < values['diff-rounds']; i++) {
    plainMs.push((await send(server, { method: 'GET', path, expect: 200 })).ms)
  }
  const afterPlain = memoryOf(server.pid)
  resetPeak(server.pid)
  const detailMs: number[] = []
  for (let i = 0; i < values['diff-rounds']; i++) {
    detailMs.push(
      (await send(server, { method: 'GET', path: `${path}?detail=true`, expect: 200 })).ms,
    )
  }
  const afterDetail = memoryOf(server.pid)
  progress(
    `diff: plain ${plainMs.map(fmtMs).join(', ')} ms; detail ${detailMs.map(fmtMs).join(', ')} ms`,
  )
  await server.stop()
  await Promise.all([removeTemporaryDir(dataDir), removeTemporaryDir(patchDir)])
  return {
    state,
    uploadMs,
    changed,
    attributes,
    plainMs,
    detailMs,
    memory: { afterUploads, afterPlain, afterDetail },
  }
}

export function diffTables(result: DiffResult): Table[] {
  const { state, memory } = result
  const row = (name: string, ms: readonly number[]) => [
    name,
    `${fmtMs(median(ms))} ms`,
    `${fmtMs(Math.min(...ms))} ms`,
    `${fmtMs(Math.max(...ms))} ms`,
  ]
  return [
    {
      title: `3. diff: two ${state.sizeMiB} MiB versions (${fmtInt(state.instances)} instances each), ${result.changed} instances changed (${result.attributes} attribute paths in the detail); uploads (indexing on): ${result.uploadMs.map((ms) => `${fmtMs(ms)} ms`).join(', ')}`,
      columns: ['request', 'median', 'min', 'max'],
      rows: [row('GET .../diff', result.plainMs), row('GET .../diff?detail=true', result.detailMs)],
      notes: [`${result.plainMs.length} rounds each`],
    },
    {
      title: '3. diff, memory (MiB)',
      columns: ['when', 'peak (VmHWM)', 'RSS after'],
      rows: [
        [
          'after the two uploads',
          fmtMiB(memory.afterUploads.peak),
          fmtMiB(memory.afterUploads.rss),
        ],
        ['during the plain diffs', fmtMiB(memory.afterPlain.peak), fmtMiB(memory.afterPlain.rss)],
        [
          'during the detailed diffs',
          fmtMiB(memory.afterDetail.peak),
          fmtMiB(memory.afterDetail.rss),
        ],
      ],
      notes: ['the peak is reset before the plain and the detailed diffs'],
    },
  ]
}

export function diffFigures(result: DiffResult): Figure[] {
  return [
    {
      figure: `diff of two ${result.state.sizeMiB} MiB versions, ms`,
      cairn: fmtMs(median(result.plainMs)),
      baseline: '',
      ratio: '',
    },
  ]
}
