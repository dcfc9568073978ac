import { defineConfig } from 'tsup'
import { base } from '../tsup.base'

export default defineConfig({
  ...base,
  // The baseline server is a process of its own, started beside the Cairn server.
  entry: { main: 'src/main.ts', 'baseline-server': 'src/baseline-server.ts' },
  dts: false,
})
