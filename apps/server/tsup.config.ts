import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  // The workers are scripts of their own, loaded by URL beside main.js.
  entry: {
    main: 'src/main.ts',
    'scan-worker': 'src/scanning/scan-worker.ts',
    'postings-worker': 'src/scanning/postings-worker.ts',
  },
  // The workspace packages export TypeScript sources, so the server bundles them.
  noExternal: [/^@cairn\//],
  dts: false,
})
