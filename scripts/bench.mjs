// `npm run bench* [-- flags]`: install what is missing and build (as `npm start` does; --no-build
// skips it), then run the bench named first from the built bench package (bench/dist/main.js) in
// this process, so that Ctrl-C reaches it and its exit status is ours. See bench/README.md.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

const args = process.argv.slice(2)
// Asking for help, or only checking the flags, needs no fresh build when one is there.
const quiet = args.some((arg) => ['--no-build', '--help', '-h', '--dry-run'].includes(arg))
const main = join(root, 'bench', 'dist', 'main.js')
// Like `npm start`, turbo is asked only when a source changed since the last whole build: a bench
// run beside others (the suites run the bench README's commands) never rewrites their build.
if (!quiet || !existsSync(main))
  bootstrap({
    stdoutClean: true,
    unlessCurrent: ['bench/dist/main.js', 'apps/server/dist/main.js'],
  })
if (!existsSync(main)) {
  process.stderr.write('bench: bench/dist/main.js is missing: build first (npm run build)\n')
  process.exit(1)
}
await import(pathToFileURL(main).href)
