// `npm start [-- <server flags>]`: install what is missing, build, then run the server in this
// process so that signals reach it directly and its exit status is ours.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

bootstrap()
await import(pathToFileURL(join(root, 'apps', 'server', 'dist', 'main.js')).href)
