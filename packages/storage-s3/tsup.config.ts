import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  entry: ['src/index.ts'],
  // The server bundles this package from its sources; this build checks that it bundles alone.
  dts: false,
})
