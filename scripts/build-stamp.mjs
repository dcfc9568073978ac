// Whether the workspace's last build is newer than everything it was built from, answered from
// file names and times alone: no pnpm, no turbo. Asking turbo costs half a second or more per call
// and prints its banner, which `./cairn` (run by Terraform's credential_process, by scripts)
// cannot afford when nothing changed. turbo stays the judge of what to rebuild once something did.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Folders under a package that are outputs or caches, never inputs of its build. */
const NOT_INPUTS = new Set(['node_modules', 'dist', '.turbo', 'coverage'])
/**
 * Folders, from the root, that hold what a package's programs write, never what they are built
 * from: a bench run with `--results` writes its report there, which must not make the next
 * `./cairn` or `npm start` build again (turbo's build `inputs` leave it out too).
 */
const WRITTEN = new Set(['bench/results'])

/** The record of the last whole build that succeeded: when it began, and what it was built from. */
const stampOf = (root) => join(root, 'node_modules', '.cairn-build.json')

/**
 * The files at the root that every package's build depends on: the manifest, the lockfile, the
 * workspace and turbo's own settings, and turbo's `globalDependencies`.
 */
function rootInputs(root) {
  const turbo = JSON.parse(readFileSync(join(root, 'turbo.json'), 'utf8'))
  const global = Array.isArray(turbo.globalDependencies) ? turbo.globalDependencies : []
  return ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'turbo.json', ...global]
}

/** Adds the files under `dir` (relative to `root`) and their times to `found`. */
function walk(root, dir, found) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (NOT_INPUTS.has(entry.name) || WRITTEN.has(path)) continue
    if (entry.isDirectory()) walk(root, path, found)
    else found.set(path, statSync(join(root, path)).mtimeMs)
  }
}

/**
 * The folders that hold the workspace's packages, from pnpm-workspace.yaml's `packages` list
 * (`packages/*` names the folder `packages`, `bench` itself).
 */
function workspaceFolders(root) {
  const text = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
  const folders = []
  for (const match of text.matchAll(/^\s*-\s*['"]?([^'"\s#]+)['"]?\s*$/gm)) {
    const folder = (match[1] ?? '').replace(/\/\*+$/, '')
    if (folder !== '' && existsSync(join(root, folder))) folders.push(folder)
  }
  return folders
}

/**
 * The inputs of the workspace's build: every file of its packages (the folders
 * pnpm-workspace.yaml names) but their outputs and dependencies, and the root's settings; their
 * names, sorted, and the latest modification time among them.
 */
export function buildInputs(root) {
  const found = new Map()
  for (const file of rootInputs(root)) {
    if (existsSync(join(root, file))) found.set(file, statSync(join(root, file)).mtimeMs)
  }
  for (const folder of workspaceFolders(root)) walk(root, folder, found)
  return { files: [...found.keys()].sort(), newest: Math.max(0, ...found.values()) }
}

/**
 * Whether the last whole build is still current: it began after the last change to any of its
 * inputs, the inputs are the same files (none added, removed or renamed since), and each of
 * `outputs` (paths under the root) is still there.
 */
export function buildIsCurrent(root, outputs) {
  if (!outputs.every((output) => existsSync(join(root, output)))) return false
  let recorded
  try {
    recorded = JSON.parse(readFileSync(stampOf(root), 'utf8'))
  } catch {
    return false
  }
  const { files, newest } = buildInputs(root)
  return (
    newest <= recorded.startedAt &&
    files.length === recorded.files.length &&
    files.every((file, index) => file === recorded.files[index])
  )
}

/** What a build records once it succeeds: taken just before it begins. */
export function beginBuild(root) {
  return { startedAt: Date.now(), files: buildInputs(root).files }
}

/**
 * Records a whole build that succeeded, as `beginBuild` saw it begin: a source saved while it ran
 * is newer than its start, so the next check builds again.
 */
export function recordBuild(root, begun) {
  if (!existsSync(join(root, 'node_modules'))) return
  writeFileSync(stampOf(root), `${JSON.stringify(begun)}\n`)
}
