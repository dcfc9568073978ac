import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  // Tests import the sources; the S3 bench loads this build of startRgw at run time.
  entry: { rgw: 'src/rgw.ts' },
  // A dev dependency here, which tsup would otherwise bundle.
  external: ['@aws-sdk/client-s3'],
  dts: false,
})
