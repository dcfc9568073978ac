// `npm start [-- <server flags>]`: install what is missing, build what changed since the last
// build, then run the server in this process so that signals reach it directly and its exit
// status is ours.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

bootstrap({
  unlessCurrent: [
    'apps/server/dist/main.js',
    'apps/server/dist/scan-worker.js',
    'apps/server/dist/postings-worker.js',
  ],
})

// A supervisor that stops `npm start` signals npm, which dies without passing the signal on: this
// process is left behind, reparented, still serving and holding the data directory. So when the
// parent goes away, stop as if signalled ourselves (the server finishes requests in flight).
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM')
}, 500).unref()

await import(pathToFileURL(join(root, 'apps', 'server', 'dist', 'main.js')).href)
