import { defineConfig } from 'tsup'
import { base } from '../../tsup.base'

export default defineConfig({
  ...base,
  entry: ['src/index.ts'],
  platform: 'neutral',
  // The wire schemas come from the workspace's contract package, which is not published: bundle
  // them, and their types (found through the contract's `types` field, which the declaration
  // bundler reads), so the package needs nothing but valibot from the registry.
  noExternal: [/^@cairn\//],
  dts: { resolve: [/^@cairn\//] },
  tsconfig: 'tsconfig.build.json',
})
