import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'sigv4',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
})
