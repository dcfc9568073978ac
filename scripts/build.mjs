// `npm run build`: install what is missing (the pinned pnpm, the dependencies), then build every
// package, as `npm start` does before it runs the server. Works on a fresh clone.
import { bootstrap } from './bootstrap.mjs'

bootstrap()
