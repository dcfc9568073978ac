import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  entry: ['src/main.ts'],
  // The workspace packages export TypeScript sources, so the server bundles them.
  noExternal: [/^@cairn\//],
  dts: false,
})
