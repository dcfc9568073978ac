import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'bench'],
    // Declared here, on the root, it runs once per vitest run; in a project it would run once for
    // each project.
    globalSetup: ['scripts/build-before-tests.mjs'],
  },
})
