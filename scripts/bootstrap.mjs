// Makes a fresh clone runnable with nothing but Node 20 and npm: installs the pinned pnpm into
// .tools/ and the workspace dependencies, each only when missing or out of date, then builds.
// A second run finds everything in place and costs about a second (turbo replays its cache), or
// nothing at all for the callers that ask to build only what changed since the last build.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beginBuild, buildIsCurrent, recordBuild } from './build-stamp.mjs'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const pnpmVersion = String(rootPackage.packageManager).replace(/^pnpm@/, '')
const toolsDir = join(root, '.tools')
const pnpmBin = join(toolsDir, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs')
const depsStamp = join(root, 'node_modules', '.cairn-deps')

// turbo looks for the package manager on PATH, so the pinned pnpm goes first on it.
export const env = {
  ...process.env,
  PATH: [join(toolsDir, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
}

function say(line) {
  process.stderr.write(`cairn: ${line}\n`)
}

/** Runs a command with inherited output; exits the process with its status when it fails. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: setupStdio, env, ...options })
  if (result.error) {
    say(`could not run ${command}: ${result.error.message}`)
    process.exit(1)
  }
  if (result.status !== 0) process.exit(result.status ?? 1)
}

function installedPnpmVersion() {
  if (!existsSync(pnpmBin)) return undefined
  const pkg = join(toolsDir, 'node_modules', 'pnpm', 'package.json')
  return JSON.parse(readFileSync(pkg, 'utf8')).version
}

function ensurePnpm() {
  if (installedPnpmVersion() === pnpmVersion) return
  say(`installing pnpm ${pnpmVersion} into .tools/`)
  // corepack cannot be used here: the registry's metadata carries no signatures it accepts.
  run('npm', [
    'install',
    '--prefix',
    toolsDir,
    '--no-save',
    '--no-package-lock',
    '--no-audit',
    '--no-fund',
    `pnpm@${pnpmVersion}`,
  ])
}

function dependencyFingerprint() {
  const hash = createHash('sha256')
  hash.update(process.version.split('.')[0] ?? '')
  hash.update(readFileSync(join(root, 'pnpm-lock.yaml')))
  return hash.digest('hex')
}

/** Runs the pinned pnpm. */
export function pnpm(args, options) {
  run(process.execPath, [pnpmBin, ...args], options)
}

function ensureDependencies() {
  const fingerprint = dependencyFingerprint()
  if (existsSync(depsStamp) && readFileSync(depsStamp, 'utf8') === fingerprint) return
  say('installing dependencies')
  pnpm(['install', '--frozen-lockfile', '--reporter=append-only'])
  writeFileSync(depsStamp, fingerprint)
}

// Where the output of installs and builds goes: the terminal, or (for the CLI, whose stdout
// carries results) stderr only.
let setupStdio = 'inherit'

/**
 * Installs what is missing and builds every package (turbo skips what has not changed).
 * `stdoutClean` keeps all of it off stdout. `unlessCurrent` (paths of build outputs) skips turbo
 * altogether while the last whole build is newer than every source and those outputs exist. No
 * build at all while the integration tier tests this checkout's build (`underTest`).
 */
export function bootstrap({ build = true, stdoutClean = false, unlessCurrent } = {}) {
  if (stdoutClean) setupStdio = ['inherit', process.stderr, process.stderr]
  ensurePnpm()
  ensureDependencies()
  if (
    build &&
    !underTest() &&
    !(unlessCurrent !== undefined && buildIsCurrent(root, unlessCurrent))
  )
    buildAll()
  setupStdio = 'inherit'
}

/** The variable the integration tier sets to the root of the checkout whose build it tests. */
export const TESTED_BUILD = 'CAIRN_TESTED_BUILD'

/**
 * Whether this checkout's build is the one a running integration tier tests: its global setup
 * built it, and nothing the suites run (`npm start`, `./cairn`, `npm run pack`) builds it again
 * under the others, which would delete a bundle another suite is starting.
 */
export function underTest() {
  return process.env[TESTED_BUILD] === root
}

/** Builds every package through turbo, and records the build for `unlessCurrent`. */
function buildAll() {
  const begun = beginBuild(root)
  turbo(['run', 'build', '--output-logs=errors-only'])
  recordBuild(root, begun)
}

/** The workspace's turbo; run it with `env`. */
export const turboBin = join(root, 'node_modules', '.bin', 'turbo')

/** Runs the workspace's turbo. */
export function turbo(args) {
  run(turboBin, args)
}
