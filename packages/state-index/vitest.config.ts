import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'state-index',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
})
