import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  // Tests import the sources; the benches load this build of startRgw, makeTestCa and freePort
  // at run time.
  entry: { rgw: 'src/rgw.ts', tls: 'src/tls.ts', 'free-port': 'src/free-port.ts' },
  // A dev dependency here, which tsup would otherwise bundle.
  external: ['@aws-sdk/client-s3'],
  dts: false,
})
