// `npm run pack`: builds @cairn/sdk and @cairn/cli (installing what is missing first, like npm
// start) and packs each into dist-packages/ as a tarball that plain npm installs:
// `npm install ./dist-packages/cairn-sdk-<version>.tgz`, `npm install -g ./dist-packages/cairn-cli-…`.
//
// The workspace manifests point `exports` at the TypeScript sources, so that the other packages,
// their typecheck and their tests use the SDK's source without a build. Only pnpm applies
// `publishConfig`, so a plain `npm pack` of a package folder would ship a manifest that names
// files the tarball lacks. Each package is therefore staged here: its `files`, the repository's
// LICENSE, and the manifest a user installs (publishConfig applied; no scripts, no devDependencies,
// nothing from the workspace), and that folder is what npm packs.
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import process from 'node:process'
import { join } from 'node:path'
import { bootstrap, root, run, underTest } from './bootstrap.mjs'
import { buildIsCurrent } from './build-stamp.mjs'

const PACKAGES = ['packages/sdk', 'apps/cli']
/** What the two packages' manifests ship, which the last whole build must have made. */
const BUILT = [
  'packages/sdk/dist/index.js',
  'packages/sdk/dist/index.d.ts',
  'apps/cli/dist/main.js',
]
const OUT = join(root, 'dist-packages')

// Fields pnpm lets publishConfig override (https://pnpm.io/package_json#publishconfig); npm's
// own settings (access, registry, tag) stay under publishConfig.
const OVERRIDABLE = ['exports', 'main', 'module', 'types', 'typings', 'bin', 'typesVersions']
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies']

function fail(line) {
  process.stderr.write(`cairn: pack: ${line}\n`)
  process.exit(1)
}

/** The manifest of the tarball: what a user of the package needs, and nothing of the workspace. */
function publishedManifest(manifest, dir) {
  const { scripts: _scripts, devDependencies: _dev, publishConfig = {}, ...published } = manifest
  const npmSettings = {}
  for (const [field, value] of Object.entries(publishConfig)) {
    if (OVERRIDABLE.includes(field)) published[field] = value
    else npmSettings[field] = value
  }
  if (Object.keys(npmSettings).length > 0) published.publishConfig = npmSettings
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries(published[field] ?? {})) {
      // The design bundles workspace packages into the build; a reference to one would make the
      // tarball uninstallable outside this checkout.
      if (name.startsWith('@cairn/') || String(range).startsWith('workspace:'))
        fail(`${dir}: ${field} names the workspace package ${name}; bundle it instead`)
    }
  }
  return published
}

/** Every file the manifest's `exports` and `bin` name, so a missing build stops the pack. */
function namedFiles(value) {
  if (typeof value === 'string') return value.startsWith('./') ? [value] : []
  if (value === null || typeof value !== 'object') return []
  return Object.values(value).flatMap(namedFiles)
}

function stage(dir, into) {
  const source = join(root, dir)
  const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'))
  const published = publishedManifest(manifest, dir)
  for (const entry of published.files ?? []) {
    if (existsSync(join(source, entry)))
      cpSync(join(source, entry), join(into, entry), { recursive: true })
  }
  cpSync(join(root, 'LICENSE'), join(into, 'LICENSE'))
  for (const file of namedFiles([
    published.exports,
    published.bin,
    published.main,
    published.types,
  ])) {
    if (file !== './package.json' && !existsSync(join(into, file)))
      fail(`${dir}: ${file} is named by the manifest but was not built`)
  }
  writeFileSync(join(into, 'package.json'), `${JSON.stringify(published, null, 2)}\n`)
}

/** Packs a staged folder with npm; answers the tarball's path. */
function npmPack(staged) {
  const result = spawnSync('npm', ['pack', '--json', '--pack-destination', OUT], {
    cwd: staged,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    // On Windows npm is npm.cmd, which only a shell runs.
    shell: process.platform === 'win32',
  })
  if (result.error) fail(`could not run npm: ${result.error.message}`)
  if (result.status !== 0) process.exit(result.status ?? 1)
  const [packed] = JSON.parse(result.stdout)
  return join(OUT, packed.filename)
}

bootstrap({ build: false, stdoutClean: true })
// Only the two packages and what they bundle are built, and only when a source changed since the
// last whole build, and never under running suites (their build is the one they test); stdout is
// kept for the tarballs' paths.
if (!underTest() && !buildIsCurrent(root, BUILT)) {
  run(
    join(root, 'node_modules', '.bin', 'turbo'),
    ['run', 'build', ...PACKAGES.map((dir) => `--filter=./${dir}`), '--output-logs=errors-only'],
    { stdio: ['inherit', process.stderr, process.stderr] },
  )
}

rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
const staging = mkdtempSync(join(tmpdir(), 'cairn-pack-'))
// process.exit skips finally blocks, and every failure above ends that way.
process.on('exit', () => rmSync(staging, { recursive: true, force: true }))
const tarballs = PACKAGES.map((dir) => {
  const staged = join(staging, dir.replaceAll('/', '-'))
  mkdirSync(staged)
  stage(dir, staged)
  return npmPack(staged)
})
for (const tarball of tarballs) process.stdout.write(`${tarball}\n`)
