import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { SETTINGS } from '../src/config/settings'
import { dockerfileStages, envOf, execForm, type Stage } from './support/dockerfile'
import { ROOT } from './support/instances'

/** What the image must not carry: the workspace's development tools. */
const DEVELOPMENT_ONLY = /\b(vitest|typescript|tsup|eslint|turbo|prettier)\b/

const runsOf = (stage: Stage) =>
  stage.instructions.filter(({ keyword }) => keyword === 'RUN').map(({ args }) => args)

describe('the Dockerfile', () => {
  it('builds in one stage and runs the server alone with its production dependencies in another', async () => {
    const stages = await dockerfileStages()
    expect(stages.length).toBeGreaterThanOrEqual(2)
    const [build] = stages
    const final = stages[stages.length - 1] as Stage
    expect(build?.name).toBeDefined()
    // The build installs everything and makes a production-only copy of the server package.
    const deploy = runsOf(build as Stage).find((run) => /\bdeploy\b/.test(run))
    expect(deploy).toMatch(/--filter @cairn\/server\b.*\bdeploy\b.*--prod\b/)
    // The final stage takes only that copy: nothing from the build context, no install, no build.
    const copies = final.instructions.filter(({ keyword }) => keyword === 'COPY')
    expect(copies.length).toBeGreaterThan(0)
    for (const { args } of copies) expect(args).toMatch(new RegExp(`^--from=${build?.name} `))
    const deployTarget = /--prod\s+(\S+)/.exec(deploy ?? '')?.[1]
    expect(copies.map(({ args }) => args.split(/\s+/)[1])).toEqual([deployTarget])
    for (const run of runsOf(final)) {
      expect(run).not.toMatch(/\b(npm|pnpm)\b/)
      expect(run).not.toMatch(DEVELOPMENT_ONLY)
    }
    expect(final.instructions.find(({ keyword }) => keyword === 'USER')?.args).toBe('node')
  })

  it('checks the health of the server with the Node.js of the image, no curl', async () => {
    const final = (await dockerfileStages()).at(-1) as Stage
    const healthcheck = final.instructions.find(({ keyword }) => keyword === 'HEALTHCHECK')
    expect(healthcheck, 'a HEALTHCHECK in the final stage').toBeDefined()
    const command = execForm(healthcheck?.args ?? '')
    expect(command[0]).toBe('node')
    expect(command.join(' ')).toContain('/healthz')
    expect(command.join(' ')).not.toMatch(/\b(curl|wget)\b/)
  })

  it('serves metrics on the container network through a setting the server has, and publishes only the API', async () => {
    const final = (await dockerfileStages()).at(-1) as Stage
    const env = envOf(final)
    expect(env[SETTINGS['metrics-host'].env]).toBe('0.0.0.0')
    // EXPOSE is what `docker run -P` publishes on every address of the host: never the metrics.
    const exposed = final.instructions
      .filter(({ keyword }) => keyword === 'EXPOSE')
      .flatMap(({ args }) => args.split(/\s+/))
    expect(exposed).toEqual([env['PORT']])
  })

  it('leaves the history, dependencies, builds, data and states out of the build context', async () => {
    const ignored = (await readFile(`${ROOT}/.dockerignore`, 'utf8'))
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
    for (const entry of ['.git', '**/node_modules', '**/dist', 'data', '.tools', '**/*.tfstate']) {
      expect(ignored).toContain(entry)
    }
  })
})
