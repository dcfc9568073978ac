import { mkdirSync, readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { SourceMap } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { fmtInt } from '../harness/format'
import { cacheDir, root } from '../harness/paths'
import type { Table } from '../harness/table'

/**
 * A CPU profile of the Cairn server (`BENCH_PROFILE=1`): the server runs under `node --cpu-prof`
 * and the report lists the functions with the most self time, located in the TypeScript sources
 * through the bundle's source map.
 */
export interface ProfileRequest {
  readonly dir: string
  readonly name: string
  /** The node flags that write it. */
  readonly nodeFlags: readonly string[]
}

/** Whether BENCH_PROFILE asks for a profile. */
export function profileWanted(): boolean {
  return ['1', 'true', 'yes'].includes(process.env['BENCH_PROFILE'] ?? '')
}

/** Where a profile named after `label` goes, and the flags that write it there. */
export function profileRequest(label: string): ProfileRequest {
  const dir = join(cacheDir, 'profiles')
  mkdirSync(dir, { recursive: true })
  const name = `cairn-${label}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`
  return { dir, name, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', name] }
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
    readonly columnNumber: number
  }
}

interface Profile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

export interface ProfileTop {
  readonly path: string
  readonly busyMs: number
  readonly top: readonly { fn: string; where: string; ms: number; share: number }[]
}

const sourceMaps = new Map<string, SourceMap | undefined>()

const shorten = (path: string) => (path.startsWith(`${root}/`) ? relative(root, path) : path)

/** `file:line` for a profile frame, through the bundle's source map when it has one. */
function locate(url: string, line: number, column: number): string {
  if (url === '') return ''
  if (!url.startsWith('file://')) return `${url}:${line + 1}`
  const path = fileURLToPath(url)
  if (!sourceMaps.has(path)) {
    let map: SourceMap | undefined
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as never)
    } catch {
      map = undefined
    }
    sourceMaps.set(path, map)
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column)
  if (entry === undefined || !('originalSource' in entry)) return `${shorten(path)}:${line + 1}`
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : join(dirname(path), entry.originalSource)
  return `${shorten(source)}:${entry.originalLine + 1}`
}

/** Reads a profile written as the server exited: its busy time and 15 top self-time functions. */
export async function readProfile(request: ProfileRequest): Promise<ProfileTop> {
  const path = join(request.dir, request.name)
  // Node writes the profile as the process exits; give it a moment if it is not there yet.
  for (let i = 0; i < 50 && !(await readdir(request.dir)).includes(request.name); i++) {
    await sleep(100)
  }
  const profile = JSON.parse(await readFile(path, 'utf8')) as Profile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfTime = new Map<string, number>()
  let busy = 0
  profile.samples.forEach((sample, index) => {
    const node = nodes.get(sample)
    if (node === undefined) return
    const { functionName, url, lineNumber, columnNumber } = node.callFrame
    const micros = profile.timeDeltas[index + 1] ?? 0
    if (functionName === '(idle)') return
    busy += micros
    const where = locate(url, lineNumber, columnNumber)
    const key = `${functionName === '' ? '(anonymous)' : functionName}\u0000${where}`
    selfTime.set(key, (selfTime.get(key) ?? 0) + micros)
  })
  const top = [...selfTime.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([key, micros]) => {
      const [fn = '', where = ''] = key.split('\u0000')
      return { fn, where, ms: micros / 1000, share: busy === 0 ? 0 : micros / busy }
    })
  return { path, busyMs: busy / 1000, top }
}

/** The profile's top functions as a table. */
export function profileTable(profile: ProfileTop, what: string): Table {
  return {
    title: `Cairn server CPU profile, ${what}, top self time (${fmtInt(profile.busyMs)} ms busy): ${shorten(profile.path)}`,
    columns: [
      'self ms',
      'share',
      { header: 'function', align: 'left' },
      { header: 'where', align: 'left' },
    ],
    rows: profile.top.map((entry) => [
      fmtInt(entry.ms),
      `${(entry.share * 100).toFixed(1)} %`,
      entry.fn,
      entry.where,
    ]),
  }
}
