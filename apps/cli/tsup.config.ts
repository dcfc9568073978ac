import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  entry: { main: 'src/main.ts' },
  // The packed CLI installs on its own: the workspace packages it uses (the SDK and the wire
  // schemas) are bundled in; only registry packages remain dependencies.
  noExternal: [/^@cairn\//],
  banner: { js: '#!/usr/bin/env node' },
  dts: false,
})
