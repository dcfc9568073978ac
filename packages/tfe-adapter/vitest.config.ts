import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'tfe-adapter',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
})
