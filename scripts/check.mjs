// `npm run typecheck` and `npm run lint`: each checks the whole workspace as ONE TypeScript program
// (the root tsconfig.json includes every package), so every file is parsed and typed once. Checked
// per package, each package also typed the sources of every package it imports (they export their
// TypeScript), which made the same check cost five times as much. Each prints one line when done.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { env, root } from './bootstrap.mjs'

const bin = (name) => join(root, 'node_modules', '.bin', name)

/** What each check runs, in order; all must pass. */
const CHECKS = {
  // The contract is typed a second time on its own, without Node's types: it must run wherever
  // the SDK does, which the workspace program (with Node's types) cannot tell.
  typecheck: [
    [bin('tsc'), ['--noEmit', '-p', '.']],
    [bin('tsc'), ['--noEmit', '-p', 'packages/contract']],
  ],
  lint: [[bin('eslint'), ['--max-warnings=0', 'packages', 'apps', 'bench']]],
}

const name = process.argv[2]
const steps = CHECKS[name]
if (steps === undefined) {
  process.stderr.write(`usage: node scripts/check.mjs ${Object.keys(CHECKS).join('|')}\n`)
  process.exit(2)
}
const started = performance.now()
for (const [command, args] of steps) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' })
  if (result.error !== undefined) {
    process.stderr.write(`cairn: ${name}: could not run ${command}: ${result.error.message}\n`)
    process.exit(1)
  }
  if (result.status !== 0) {
    process.stderr.write(`cairn: ${name} failed\n`)
    process.exit(result.status ?? 1)
  }
}
const seconds = ((performance.now() - started) / 1000).toFixed(0)
process.stdout.write(`cairn: ${name} passed over the whole workspace in ${seconds} s\n`)
