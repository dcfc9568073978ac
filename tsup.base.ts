import type { Options } from 'tsup'

/** Settings every package's tsup.config.ts starts from. */
export const base = {
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  clean: true,
  sourcemap: true,
} satisfies Options
