import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'state-scan',
    include: ['src/**/*.test.ts'],
  },
})
