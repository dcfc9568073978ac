// `node bench/dist/main.js <bench> [flags]`: runs one bench of the registry, or `all` of them.
// The root package.json's `bench*` scripts come here through scripts/bench.mjs, which builds first.
import { registry } from './registry'
import { runCommand } from './harness/run-command'

process.exitCode = await runCommand(registry, process.argv.slice(2))
