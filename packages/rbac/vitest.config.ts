import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'rbac',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
})
