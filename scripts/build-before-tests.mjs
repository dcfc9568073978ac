// The integration tier's global setup: builds the workspace through turbo before its suites run, so that the
// suites that spawn a built program (`apps/server/dist/main.js`, `apps/cli/dist/main.js`) test
// today's code whether vitest runs under `npm test` or on its own. turbo replays what has not
// changed, so a run with nothing to build costs about a second. In watch mode it builds again
// before each rerun.
import { spawnSync } from 'node:child_process'
import { env, root, TESTED_BUILD, turboBin } from './bootstrap.mjs'
import { beginBuild, recordBuild } from './build-stamp.mjs'

const ARGS = ['run', 'build', '--output-logs=errors-only']

/** Builds every package; throws with turbo's output when the build fails. */
function build() {
  const begun = beginBuild(root)
  // Quiet when it works: turbo's summary would only push the test report down.
  const result = spawnSync(turboBin, ARGS, {
    cwd: root,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.error !== undefined) {
    throw new Error(
      `cannot build before the tests: ${turboBin} did not run (${result.error.message}). ` +
        'Run `npm run build` once, which installs what is missing.',
    )
  }
  if (result.status !== 0) {
    throw new Error(
      `cannot test today's code: the build failed (turbo ${ARGS.join(' ')} exited with ` +
        `${result.status ?? result.signal}), so no test ran. Fix the build, or run npm run build ` +
        `if the dependencies changed (it installs them). turbo's output:\n${result.stdout}${result.stderr}`,
    )
  }
  // `./cairn` and `npm start` then start at once, without asking turbo again.
  recordBuild(root, begun)
}

/** @param {import('vitest/node').TestProject} project */
export default function setup(project) {
  // Both integration projects name this setup, and vitest runs each before any test: one build.
  if (process.env[TESTED_BUILD] !== root) build()
  // The suites' `npm start`, `./cairn` and `npm run pack` use this build as it is (workers and
  // what they spawn inherit the variable): a build started by one suite would delete the bundles
  // under the servers another is starting.
  process.env[TESTED_BUILD] = root
  // A rerun in watch mode: a failure is reported, and the suites that need the build then fail
  // saying what is missing; throwing here would end the watcher.
  project.onTestsRerun(() => {
    try {
      build()
    } catch (error) {
      console.error(error instanceof Error ? error.message : error)
    }
  })
}
