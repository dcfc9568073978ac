import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchAs, terraformBinary, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docsBlocks, markedBlocks, scenarioOf, type MarkedBlock } from './support/docs-blocks'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

/**
 * The documentation's own commands, run as a reader would, from the README first and then every
 * `docs/*.md` in file-name order (`examplePages`): every fenced block that follows a
 * `<!-- readme-test: file <scenario>/<path> -->` marker is written to that file, and every block
 * after `<!-- readme-test: run <scenario>... -->` is run, in that order, by one bash per
 * scenario, in a directory that holds the files, `./cairn` and `data/` (the server's data
 * directory) as a checkout would. So a scenario may go on from one page to a later one: the
 * quickstart's blocks run in the README, then on the CLI page, then on the operations page. The
 * worked examples of OUTSIDE_THE_CHECKOUT run in a directory that holds their files and nothing
 * of a checkout: only their blocks marked `<scenario>@checkout` run in one. The one change made
 * to the text: the server listens on a free port, not 8080.
 */
interface Examples {
  files: Map<string, Map<string, string>>
  scripts: Map<string, Block[]>
}

/** A block to run, and whether the reader runs it in the checkout. */
interface Block {
  code: string
  inCheckout: boolean
}

/** The worked examples the docs say to run in a directory of their own, anywhere. */
const OUTSIDE_THE_CHECKOUT = new Set(['dependencies', 'resources'])

function parseExamples(blocks: MarkedBlock[], port: number): Examples {
  const files = new Map<string, Map<string, string>>()
  const scripts = new Map<string, Block[]>()
  for (const { kind, names, body } of blocks) {
    const code = body.replaceAll('localhost:8080', `127.0.0.1:${port}`)
    if (kind === 'file') {
      const [scenario, ...path] = (names[0] ?? '').split('/')
      const scenarioFiles = files.get(scenario ?? '') ?? new Map<string, string>()
      scenarioFiles.set(path.join('/'), code)
      files.set(scenario ?? '', scenarioFiles)
    } else if (kind === 'run') {
      for (const name of names) {
        const [scenario = '', where] = name.split('@')
        const block = { code, inCheckout: where === 'checkout' }
        scripts.set(scenario, [...(scripts.get(scenario) ?? []), block])
      }
    }
  }
  return { files, scripts }
}

interface Run {
  code: number | null
  output: string
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    // A group of its own: what a scenario started in the background (an agent) ends with it.
    const child = spawn('bash', ['-c', script], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    const deadline = setTimeout(() => child.kill('SIGKILL'), 240_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(deadline)
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // Nothing of the group is left.
      }
      resolve({ code, output })
    })
  })
}

/** A reader's shell: a HOME, Terraform on PATH, and the documentation's scenarios to play. */
function readerShell(server: ReturnType<typeof useServer>) {
  let home: string
  let examples: Examples
  let env: Record<string, string>

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'cairn-readme-home-'))
    examples = parseExamples(await markedBlocks(), server.port)
    const cliConfig = join(home, 'terraform.rc')
    await writeFile(cliConfig, '')
    const terraform = dirname(terraformBinary())
    env = {
      PATH: `${terraform}:${process.env['PATH'] ?? ''}`,
      HOME: home,
      CHECKPOINT_DISABLE: '1',
      TF_CLI_CONFIG_FILE: cliConfig,
      TF_IN_AUTOMATION: '1',
      LANG: 'C.UTF-8',
    }
  }, 60_000)
  afterAll(async () => {
    await rm(home, { recursive: true, force: true })
  })

  /**
   * Lays out a scenario's directory (like a checkout, unless OUTSIDE_THE_CHECKOUT has it, which
   * then gets a checkout beside it) and runs its blocks in one bash, each in its place.
   */
  return async function play(scenario: string): Promise<Run> {
    const dir = join(home, scenario)
    const checkout = OUTSIDE_THE_CHECKOUT.has(scenario) ? join(home, `${scenario}-checkout`) : dir
    await mkdir(dir, { recursive: true })
    await mkdir(checkout, { recursive: true })
    await symlink(join(ROOT, 'cairn'), join(checkout, 'cairn'))
    await symlink(server.dataDir, join(checkout, 'data'))
    for (const [path, content] of examples.files.get(scenario) ?? []) {
      await mkdir(dirname(join(dir, path)), { recursive: true })
      await writeFile(join(dir, path), content)
    }
    const blocks = examples.scripts.get(scenario) ?? []
    expect(blocks.length, `blocks marked for ${scenario}`).toBeGreaterThan(0)
    const steps = blocks.map(({ code, inCheckout }) =>
      [`cd '${inCheckout ? checkout : dir}'`, code].join('\n'),
    )
    const script = ['set -euo pipefail', 'shopt -s expand_aliases', ...steps].join('\n')
    return bash(script, dir, env)
  }
}

describe('the commands of the README and docs/', () => {
  const server = useServer({ auth: true })
  const play = readerShell(server)

  const api = async (path: string) => {
    const answer = await fetchAs(server, path, server.token)
    expect(answer.status).toBe(200)
    return (await answer.json()) as Record<string, unknown>
  }

  it('runs the quickstart: init, apply, the API, a lock Terraform waits for, a restore', async () => {
    const run = await play('quickstart')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('terraform_data.example')
    expect(run.output).toContain('refused: the unit is locked by me')
    // The CLI page's `./cairn unit ls --json | jq -r '.units[].id'`: stdout is the CLI's alone.
    expect(run.output.split('\n')).toContain('team/app/prod')
    // The operations page's audit trail: the table names Terraform's writes through the http
    // backend, and the JSON piped into jq names who made them.
    expect(run.output).toMatch(/state\.write\s+200\s+local-admin \(token local admin\)\s+http\s/)
    expect(run.output).toMatch(/^lock local-admin$/m)
    const unit = await api('/v1/units/team/app/prod')
    expect(unit).toMatchObject({ locked: false })
    // apply, apply with the new input, the restore, and the apply after it.
    expect(unit['version_count']).toBe(4)
  })

  it('runs the dependencies example: three units, red and yellow, then green again', async () => {
    const run = await play('dependencies')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toMatch(/team\/app\s+red/)
    expect(run.output).toMatch(/team\/dns\s+yellow/)
    expect(run.output).toContain('team/dns is red: apply it')
    const { units } = (await api('/v1/status?prefix=team/')) as {
      units: { id: string; status: string }[]
    }
    const example = units.filter((unit) => ['team/net', 'team/app', 'team/dns'].includes(unit.id))
    expect(example.map((unit) => unit.status)).toEqual(['green', 'green', 'green'])
  })

  it('runs the resources example: two applies, their diff, the contents, a search by an ID', async () => {
    const run = await play('resources')
    expect(run.code, run.output).toBe(0)
    // The diff of the second apply: one site added, the database changed, both in plan's form.
    expect(run.output).toContain('+ terraform_data.site["docs"]')
    expect(run.output).toContain('~ module.db.terraform_data.db[0]')
    expect(run.output).toContain(
      'Changes: 1 to add, 1 to change, 0 to destroy; outputs: 1 changed.',
    )
    // terraform_data keeps its dynamic input as {"value", "type"}: the path says so.
    expect(run.output).toMatch(/~ input\.value\.size: "small" -> "large"/)
    expect(run.output).toMatch(/~ input\.value\.password: \(sensitive\) -> \(sensitive\)/)
    // Terraform's own plan prints the copy in `output` (not marked sensitive); Cairn never does.
    expect(run.output).toMatch(/~ output\.value\.password: \(sensitive\) -> \(sensitive\)/)
    const cairn = run.output.slice(run.output.indexOf('Logged in to'))
    expect(cairn).not.toContain('s3cret')
    expect(run.output).toContain('team/shop changed')
    // The search by the ID that `unit show --json` gave: the unit and the instance holding it.
    const { resources } = (await api('/v1/units/team/shop/versions/current/resources')) as {
      resources: { address: string; identity: { id?: string } }[]
    }
    const docs = resources.find((resource) => resource.address === 'terraform_data.site["docs"]')
    expect(docs?.identity.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(run.output).toMatch(
      new RegExp(
        `team/shop\\s+terraform_data\\.site\\["docs"\\]\\s+terraform_data\\s+id = ${docs?.identity.id ?? 'none'}`,
      ),
    )
    // `search module.db`, and the addresses piped through jq.
    expect(run.output).toContain('module.db.terraform_data.db[0]')
    expect(run.output.split('\n')).toContain('terraform_data.site["shop"]')
  })

  it('runs the s3 backend example: a profile on cairn creds, init, apply, a workspace', async () => {
    const run = await play('s3')
    expect(run.code, run.output).toBe(0)
    // `workspace new` writes the new workspace's empty state first, then the apply writes.
    for (const [id, count] of [
      ['team/web', 1],
      ['env:/dev/team/web', 2],
    ] as const) {
      expect(run.output).toContain(id)
      expect(await api(`/v1/units/${id}`)).toMatchObject({ locked: false, version_count: count })
      const { versions } = (await api(`/v1/units/${id}/versions`)) as {
        versions: { source: string }[]
      }
      expect(versions.map((version) => version.source)).toEqual(Array(count).fill('s3'))
    }
  })
})

describe('the access-control example of docs/, on a server with RBAC on', () => {
  const server = useServer({ auth: true, env: { SVC_RBAC_ENABLED: 'true' } })
  const play = readerShell(server)

  it('assigns roles to two teams and keeps a narrower CI token inside its scope', async () => {
    const run = await play('rbac')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain(
      'local-admin does not have unit:write on team-b/web (through a token limited to writer on team-a/app/*)',
    )
    const as = (path: string) => fetchAs(server, path, server.token)
    const { assignments } = (await (await as('/v1/rbac/assignments')).json()) as {
      assignments: { principal: string; role: string; scope: string }[]
    }
    expect(
      assignments.map(({ principal, role, scope }) => `${principal} ${role} ${scope}`),
    ).toEqual([
      'group:team-a writer team-a/*',
      'group:team-b writer team-b/*',
      'group:team-b outputs-reader team-a/network',
    ])
    expect((await as('/v1/units/team-a/app/prod')).status).toBe(200)
    expect((await as('/v1/units/team-b/web')).status).toBe(404)
  })
})

describe('the remote runs example of docs/, on a server started as the page says', () => {
  const server = useServer(async () => ({
    auth: true,
    args: serverFlags(await docsBlocks('start', 'runs')),
  }))
  const play = readerShell(server)

  it('runs: an agent token, an agent, a plan, an apply, the runs listed, a detached apply followed', async () => {
    const run = await play('runs')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toContain('Plan: 1 to add, 0 to change, 0 to destroy.')
    expect(run.output).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.')
    expect(run.output).toMatch(/apply\s+succeeded\s+finished/)
    expect(run.output).toContain('Apply complete! Resources: 0 added, 1 changed, 0 destroyed.')
    expect(run.output).toMatch(/run-\w+: apply of team\/web, succeeded \(finished\)/)
    const versions = (await (
      await fetchAs(server, '/v1/units/team/web/versions', server.token)
    ).json()) as {
      versions: { source: string }[]
    }
    expect(versions.versions.map((version) => version.source)).toEqual(['run', 'run'])
  })
})

/** The flags of a page's `npm start -- <flags>`. */
function serverFlags(blocks: string[]): string[] {
  const command = blocks[0]?.trim() ?? ''
  const match = /^npm start -- (.+)$/.exec(command)
  if (match === null) throw new Error(`not a start command: ${command}`)
  return (match[1] as string).split(/\s+/)
}

/**
 * What the suites of this folder play: this file's `play('<scenario>')` (its files and its runs)
 * and every `docsBlocks('<kind>', '<scenario>')` of another suite, as `<kind> <scenario>`.
 */
async function playedExamples(): Promise<Set<string>> {
  const dir = join(ROOT, 'apps', 'server', 'test')
  const played = new Set<string>()
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.test.ts'))) {
    const text = await readFile(join(dir, name), 'utf8')
    for (const [, scenario] of text.matchAll(/\bplay\('([\w-]+)'\)/g)) {
      played.add(`file ${scenario}`).add(`run ${scenario}`)
    }
    for (const [, kind, scenario] of text.matchAll(/\bdocsBlocks\('(\w+)', '([\w-]+)'\)/g)) {
      played.add(`${kind} ${scenario}`)
    }
    for (const [, scenario] of text.matchAll(/\bdocsFiles\('([\w-]+)'\)/g)) {
      played.add(`file ${scenario}`)
    }
  }
  return played
}

describe('the migration page', () => {
  const server = useServer({ auth: true })
  const play = readerShell(server)

  it('imports a directory Terraform wrote, with its backup and workspace, and exports it again', async () => {
    const run = await play('migration')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toMatch(/Dry run of .*legacy: 2 units, 3 versions; nothing was written\./)
    expect(run.output).toContain('Imported 3 versions')
    expect(run.output).toContain('manifest.json')
    expect(run.output).toMatch(/old\/legacy\s+copy\/legacy\s+2/)
    // The same dry run as JSON through jq: each target on a line of its own.
    expect(run.output.split('\n')).toContain('copy/legacy/staging')
    const listed = await fetchAs(server, '/v1/units/old/legacy/versions', server.token)
    const { versions } = (await listed.json()) as { versions: { source: string }[] }
    expect(versions.map((version) => version.source)).toEqual(['import', 'import'])
  })
})

describe('the encryption page, on a server started with a key', () => {
  let keys: string
  beforeAll(async () => {
    keys = await mkdtemp(join(tmpdir(), 'cairn-readme-keys-'))
    await writeFile(join(keys, 'k1.key'), randomBytes(32).toString('base64'), { mode: 0o600 })
  })
  afterAll(async () => {
    await rm(keys, { recursive: true, force: true })
  })
  const server = useServer(() => ({
    auth: true,
    args: ['-encryption-keys', `k1=file:${join(keys, 'k1.key')}`],
  }))
  const play = readerShell(server)

  it('encryption: the status, then encrypt-existing, then everything under the key', async () => {
    const written = await fetchAs(server, '/v1/units', server.token, {
      method: 'POST',
      body: JSON.stringify({ id: 'team/enc' }),
    })
    expect(written.status).toBe(201)
    const uploaded = await fetchAs(server, '/v1/units/team/enc/upload', server.token, {
      method: 'POST',
      body: JSON.stringify({ version: 4, serial: 1, lineage: 'enc', resources: [] }),
    })
    expect(uploaded.status).toBe(200)
    const run = await play('encryption')
    expect(run.code, run.output).toBe(0)
    expect(run.output).toMatch(/^KEY\s+OBJECTS$/m)
    expect(run.output).toMatch(/^Encrypted \d+ objects of \d+ examined\.$/m)
    expect(run.output).toContain('Everything is under k1.')
  })
})

describe('the marked examples of the README and docs/', () => {
  it('each belong to a scenario that a suite plays, so none stops running unseen', async () => {
    const played = await playedExamples()
    const blocks = await markedBlocks()
    expect(blocks.length).toBeGreaterThan(0)
    const unplayed = blocks.flatMap(({ page, kind, names }) =>
      names
        .filter((name) => !played.has(`${kind} ${scenarioOf(name)}`))
        .map((name) => `${page}: ${kind} ${name}`),
    )
    expect(unplayed).toEqual([])
  })
})
