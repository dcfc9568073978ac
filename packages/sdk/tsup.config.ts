import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  entry: ['src/index.ts'],
  platform: 'neutral',
  // The wire schemas come from the workspace's contract package, which is not published: bundle
  // them, and their types (tsconfig.build.json maps the contract to its sources for the
  // declarations), so the package needs nothing but valibot from the registry.
  noExternal: [/^@cairn\//],
  dts: true,
  tsconfig: 'tsconfig.build.json',
})
