import { readFileSync } from 'node:fs'
import { relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { defineConfig } from 'vitest/config'

/** Every package's tests: `src/` beside the code, `test/` for suites across files. */
const ALL = ['{packages,apps}/*/{src,test}/**/*.test.ts', 'bench/src/**/*.test.ts']
const INTEGRATION = '**/*.integration.test.ts'
/**
 * Integration suites that time the server's answers against a fixed bound (a huge body must not
 * stall `/healthz` past 250 ms): they run last, alone, so another suite's Terraform or Ceph cannot
 * take the machine from under their measurement.
 */
const ALONE = ['apps/server/test/hardening-limits.integration.test.ts']
const NEVER = ['**/node_modules/**', '**/dist/**']
/**
 * The suites' own AWS SDK clients (the test kit's RGW, the S3 suites) would each print the SDK's
 * eight-line notice that it will need Node.js 22; the server silences it the same way.
 */
const ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }

/**
 * The seconds each integration suite took in a full run (`scripts/test-durations.json`, which
 * `scripts/test-durations.mjs` rewrites from a run's output); a suite not listed counts as this.
 */
const DURATIONS = (
  JSON.parse(readFileSync(new URL('scripts/test-durations.json', import.meta.url), 'utf8')) as {
    seconds: Record<string, number>
  }
).seconds
const UNLISTED_SECONDS = 10
const ROOT = fileURLToPath(new URL('.', import.meta.url))

/**
 * Starts the suites longest first. Workers take the next suite as they free up, so the longest
 * ones starting first keeps one worker from ending minutes after the others; vitest's own order
 * needs a cache of earlier runs, which a fresh clone (CI) has not.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const seconds = (spec: TestSpecification) =>
      DURATIONS[relative(ROOT, spec.moduleId).split(sep).join('/')] ?? UNLISTED_SECONDS
    return sorted.sort((a, b) => {
      const order = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder
      if (order !== 0 || a.project.name !== b.project.name) return order
      return seconds(b) - seconds(a)
    })
  }
}

/** What both groups of the integration tier share. */
const integration = {
  include: [INTEGRATION],
  exclude: NEVER,
  env: ENV,
  globalSetup: ['scripts/build-before-tests.mjs'],
  sequence: { groupOrder: 1 },
  // Suites share a worker's modules: a fresh worker per suite cost two minutes of imports.
  isolate: false,
  // A suite starts servers, Terraform and clusters: minutes on a loaded machine.
  testTimeout: 120_000,
  hookTimeout: 120_000,
}

/**
 * Two tiers, one run. `unit`: in process, no build, no server or peer process, no network but
 * loopback (`npm run test:unit`, the everyday loop). `integration` (`*.integration.test.ts`): the
 * built server and CLI over sockets, real Terraform, the AWS SDK and CLI against Ceph RGW, an
 * OpenID provider, Chromium; its global setup builds the workspace first, so the suites test
 * today's code. The unit tier runs first (`groupOrder`), so a broken rule fails in seconds.
 */
export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ALL,
          exclude: [...NEVER, INTEGRATION],
          env: ENV,
          sequence: { groupOrder: 0 },
          // The fs store's contract suites wait on the disk's fsync, which a loaded machine can
          // stretch from one second to five.
          testTimeout: 20_000,
          maxWorkers: 2,
          isolate: false,
        },
      },
      {
        test: {
          ...integration,
          name: 'integration',
          exclude: [...NEVER, ...ALONE],
          // One Ceph cluster for the suites that ask for it (`useRgw({ shared: true })`).
          globalSetup: [...integration.globalSetup, 'packages/testkit/src/shared-rgw-setup.ts'],
          // Four on two cores: the suites mostly wait on servers, Terraform and Ceph. Each worker
          // takes the next suite as it frees up, the longest first (`LongestFirst`).
          maxWorkers: 4,
        },
      },
      {
        test: {
          ...integration,
          name: 'integration-alone',
          include: ALONE,
          sequence: { groupOrder: 2 },
          maxWorkers: 1,
        },
      },
    ],
  },
})
