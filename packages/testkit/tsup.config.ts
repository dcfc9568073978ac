import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  // Tests import the sources; the benchmarks, plain scripts, import this build of startRgw.
  entry: { rgw: 'src/rgw.ts' },
  // A dev dependency here, which tsup would otherwise bundle.
  external: ['@aws-sdk/client-s3'],
  dts: false,
})
