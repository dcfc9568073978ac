import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchAs, startCiIssuer, terraformBinary, useServer, type CiIssuer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { docsBlocks, docsFiles } from './support/docs-blocks'

/**
 * docs/ci.md as a reader follows it: the administrator's commands, then the GitHub Actions workflow
 * and the GitLab CI job of the page, run by hand step by step with a minted job token. There is no
 * CI platform here, and three things are not run as written, each said where it happens: a
 * stand-in publishes the issuer (discovery, JWKS), answers GitHub's token request and mints
 * GitLab's `id_tokens` with the claims those platforms document; the issuers' and the server's
 * URLs of the page are this run's; the `uses:` steps (checkout, setup-terraform) are what the
 * directory and PATH already hold, and the install of the CLI's tarball is this checkout's `cairn`
 * on PATH.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, output })
    })
  })
}

const now = () => Math.floor(Date.now() / 1000)
let platform: CiIssuer
let home: string

beforeAll(async () => {
  platform = await startCiIssuer({
    requestClaims: () => ({
      iss: platform.url,
      sub: 'repo:acme/infra:ref:refs/heads/main',
      repository: 'acme/infra',
      ref: 'refs/heads/main',
      workflow: 'deploy',
      run_id: '4242',
      iat: now() - 5,
      exp: now() + 600,
    }),
  })
  home = await mkdtemp(join(tmpdir(), 'cairn-ci-docs-'))
})
afterAll(async () => {
  await platform.close()
  await rm(home, { recursive: true, force: true })
})

describe('docs/ci.md', () => {
  const server = useServer({ auth: true })

  /** The page's text with this run's server and issuers in place of the example ones. */
  const here = (text: string) =>
    text
      .replaceAll('http://localhost:8080', server.url)
      .replaceAll('https://cairn.example.com', server.url)
      .replaceAll('https://token.actions.githubusercontent.com', platform.url)
      .replaceAll('https://gitlab.com', platform.url)

  /** A shell of its own: a HOME, Terraform and this checkout's `cairn` on PATH. */
  async function shell(
    name: string,
    extra: Record<string, string> = {},
  ): Promise<Record<string, string>> {
    const dir = join(home, name)
    await mkdir(join(dir, 'bin'), { recursive: true })
    await symlink(join(ROOT, 'cairn'), join(dir, 'bin', 'cairn'))
    await writeFile(join(dir, 'terraform.rc'), '')
    return {
      PATH: `${join(dir, 'bin')}:${dirname(terraformBinary())}:${process.env['PATH'] ?? ''}`,
      HOME: dir,
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      TF_CLI_CONFIG_FILE: '',
      LANG: 'C.UTF-8',
      ...extra,
    }
  }

  /** The scenario's directory: the page's files, and a checkout's `cairn` and `data`. */
  async function workdir(): Promise<string> {
    const dir = join(home, 'ci')
    await mkdir(dir, { recursive: true })
    await symlink(join(ROOT, 'cairn'), join(dir, 'cairn'))
    await symlink(server.dataDir, join(dir, 'data'))
    for (const [path, body] of await docsFiles('ci')) {
      await mkdir(dirname(join(dir, path)), { recursive: true })
      await writeFile(join(dir, path), here(body))
    }
    return dir
  }

  /** The install of the CLI's tarball: here, the `cairn` of this checkout is on PATH already. */
  const installsTheCli = (command: string) =>
    command.startsWith('npm install --global ./vendor/cairn-cli')

  it('sets the policies, then the GitHub Actions workflow and the GitLab CI job apply with no stored secret', async () => {
    const dir = await workdir()
    const blocks = await docsBlocks('run', 'ci')
    expect(blocks.length).toBeGreaterThan(0)
    const admin = await bash(
      ['set -euo pipefail', ...blocks.map(here)].join('\n'),
      dir,
      await shell('admin'),
    )
    expect(admin.code, admin.output).toBe(0)
    expect(admin.output).toMatch(
      /^github-deploy\s+http:\/\/127\.0\.0\.1:\d+\s+cairn\s+repository=acme\/infra ref=refs\/heads\/main\s+writer\s+team\/\*\s+30m$/m,
    )
    expect(admin.output).toMatch(
      /^gitlab-deploy\s.*project_path=acme\/infra ref_protected=true\s+writer\s+team\/\*\s+1h$/m,
    )

    // The workflow's steps, run as a runner would: each step a shell, $GITHUB_ENV read between them.
    const workflow = parse(await readFile(join(dir, '.github/workflows/deploy.yml'), 'utf8')) as {
      permissions: Record<string, string>
      jobs: { apply: { steps: { uses?: string; run?: string }[] } }
    }
    expect(workflow.permissions['id-token']).toBe('write')
    const githubEnv = join(home, 'github-env')
    await writeFile(githubEnv, '')
    const runner = await shell('github', {
      GITHUB_ACTIONS: 'true',
      GITHUB_ENV: githubEnv,
      ACTIONS_ID_TOKEN_REQUEST_URL: platform.requestUrl,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: platform.requestBearer,
    })
    const ran: string[] = []
    for (const step of workflow.jobs.apply.steps) {
      if (step.run === undefined || installsTheCli(step.run)) continue
      const exported = Object.fromEntries(
        (await readFile(githubEnv, 'utf8'))
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      )
      const result = await bash(step.run, dir, { ...runner, ...exported })
      expect(result.code, `${step.run}\n${result.output}`).toBe(0)
      ran.push(result.output)
    }
    expect(ran.at(-1)).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.')
    expect(ran[0]).toMatch(/^::add-mask::svc_tfe_/m)

    // The GitLab job's script, one shell, with the ID token GitLab would give it.
    const gitlab = parse(await readFile(join(dir, '.gitlab-ci.yml'), 'utf8')) as {
      deploy: { id_tokens: Record<string, { aud: string }>; script: string[] }
    }
    const [variable, { aud }] = Object.entries(gitlab.deploy.id_tokens)[0] as [
      string,
      { aud: string },
    ]
    const idToken = await platform.mint({
      iss: platform.url,
      aud,
      sub: 'project_path:acme/infra:ref_type:branch:ref:main',
      project_path: 'acme/infra',
      ref: 'main',
      ref_protected: 'true',
      pipeline_id: '99',
      job_id: '100',
      iat: now() - 5,
      exp: now() + 600,
    })
    const job = await bash(
      ['set -euo pipefail', ...gitlab.deploy.script.filter((line) => !installsTheCli(line))].join(
        '\n',
      ),
      dir,
      await shell('gitlab', { GITLAB_CI: 'true', [variable]: idToken }),
    )
    expect(job.code, job.output).toBe(0)
    expect(job.output).toContain('as policy:gitlab-deploy')
    expect(job.output).toContain('No changes.')

    const writes = (await (
      await fetchAs(server, '/v1/audit?action=state.write&unit=team/app', server.token)
    ).json()) as { records: { principal: { subject: string }; detail: Record<string, string> }[] }
    expect(writes.records.at(-1)).toMatchObject({
      principal: { subject: 'policy:github-deploy' },
      detail: { ci_repository: 'acme/infra', ci_run_id: '4242' },
    })
  })
})
