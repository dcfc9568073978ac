import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  startCiIssuer,
  TerraformWorkspace,
  useServer,
  useTestCa,
  type CiIssuer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

/**
 * `cairn trust-policy` and `cairn login --ci` against the real server over HTTPS, then real
 * Terraform with what the login left: the `http` backend with `TF_HTTP_PASSWORD` from GitHub
 * Actions' environment file, the `cloud` block with the saved credentials. There is no CI platform
 * here: a local stand-in publishes an issuer (discovery, JWKS) and answers GitHub Actions' token
 * request (`ACTIONS_ID_TOKEN_REQUEST_URL` with `&audience=`), minting the claims GitHub documents;
 * a GitLab CI job's `id_tokens` variable is minted by it the same way.
 */

const now = () => Math.floor(Date.now() / 1000)
let platform: CiIssuer
const repository = 'acme/infra'

beforeAll(async () => {
  platform = await startCiIssuer({
    requestClaims: () => ({
      iss: platform.url,
      sub: `repo:${repository}:ref:refs/heads/main`,
      repository,
      ref: 'refs/heads/main',
      run_id: '777',
      iat: now() - 5,
      exp: now() + 600,
    }),
  })
})
afterAll(async () => {
  await platform.close()
})

describe('cairn login --ci', () => {
  const tls = useTestCa()
  const server = useServer(() => ({ auth: true, args: tls.serverArgs }))
  let admin: CliUser
  let job: CliUser
  beforeAll(async () => {
    admin = await CliUser.create()
    job = await CliUser.create()
  })
  afterAll(async () => {
    await admin.dispose()
    await job.dispose()
  })

  const asAdmin = (...args: string[]) =>
    admin.run([...args, '--server', server.url, '--ca-file', tls.caPath], {
      env: { CAIRN_TOKEN: server.token },
    })

  it('sets policies with cairn trust-policy, and refuses one that names no job', async () => {
    const added = await asAdmin(
      'trust-policy',
      'add',
      'deploy',
      '--issuer',
      platform.url,
      '--audience',
      'cairn',
      '--claim',
      'repository=acme/infra',
      '--claim',
      'ref=refs/heads/main',
      '--role',
      'writer',
      '--scope',
      'team/*',
      '--max-ttl',
      '30m',
    )
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout).toContain('Trust policy deploy: jobs of')
    const gitlab = await asAdmin(
      'trust-policy',
      'add',
      'gitlab',
      '--issuer',
      platform.url,
      '--audience',
      server.url,
      '--claim',
      'project_path=acme/*',
      '--role',
      'reader',
      '--scope',
      '*',
    )
    expect(gitlab.code, gitlab.stderr).toBe(0)
    const open = await asAdmin(
      'trust-policy',
      'add',
      'open',
      '--issuer',
      platform.url,
      '--audience',
      'cairn',
      '--role',
      'writer',
      '--scope',
      '*',
    )
    expect(open.code).toBe(1)
    expect(open.stderr).toContain('would trust every job of the platform')
    const listed = await asAdmin('trust-policy', 'ls')
    expect(listed.stdout).toMatch(
      /^deploy\s+http:\/\/127\.0\.0\.1:\d+\s+cairn\s+repository=acme\/infra ref=refs\/heads\/main\s+writer\s+team\/\*\s+30m$/m,
    )
  })

  it("in GitHub Actions: exchanges the job's token, and Terraform applies on the http backend and the cloud block", async () => {
    const githubEnv = join(job.home, 'github-env')
    await writeFile(githubEnv, '')
    // As the cloud block names the server: by a host name its certificate holds.
    const named = server.url.replace('127.0.0.1', 'localhost')
    const login = await job.run(
      ['login', '--ci', '--audience', 'cairn', '--server', named, '--ca-file', tls.caPath],
      {
        env: {
          GITHUB_ACTIONS: 'true',
          GITHUB_ENV: githubEnv,
          ACTIONS_ID_TOKEN_REQUEST_URL: platform.requestUrl,
          ACTIONS_ID_TOKEN_REQUEST_TOKEN: platform.requestBearer,
        },
      },
    )
    expect(login.code, login.stderr).toBe(0)
    const mask = /^::add-mask::(\S+)$/m.exec(login.stdout)
    expect(mask).not.toBeNull()
    const token = mask?.[1] ?? ''
    expect(login.stdout).toContain('Logged in to')
    expect(login.stdout).toContain('as policy:deploy')
    expect(await readFile(githubEnv, 'utf8')).toBe(`TF_HTTP_PASSWORD=${token}\n`)
    const whoami = await job.run(['whoami', '--server', named])
    expect(whoami.stdout).toContain('policy:deploy')
    expect(whoami.stdout).toMatch(
      /ci job\s+sub=repo:acme\/infra:ref:refs\/heads\/main repository=acme\/infra ref=refs\/heads\/main run_id=777/,
    )

    const http = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath })
    const cloud = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath })
    try {
      await http.write(
        'main.tf',
        `terraform {
  backend "http" {
    address        = "${server.url}/v1/backend/team/gha"
    lock_address   = "${server.url}/v1/backend/team/gha"
    unlock_address = "${server.url}/v1/backend/team/gha"
    username       = "ci"
  }
}

resource "terraform_data" "app" {
  input = "from a job"
}
`,
      )
      const env = { TF_HTTP_PASSWORD: token }
      expect((await http.run(['init', '-input=false'], { env })).code).toBe(0)
      const applied = await http.run(['apply', '-auto-approve', '-input=false'], { env })
      expect(applied.code, applied.stderr).toBe(0)

      const host = `localhost:${String(server.port)}`
      await cloud.write(
        'main.tf',
        `terraform {
  cloud {
    hostname     = "${host}"
    organization = "acme"
    workspaces {
      name = "team__gha-cloud"
    }
  }
}

resource "terraform_data" "app" {
  input = "from a job"
}
`,
      )
      // The credentials cairn login --ci saved, read as terraform login's are.
      const saved = { HOME: job.home, TF_CLI_CONFIG_FILE: '' }
      const credentials = JSON.parse(
        await readFile(join(job.home, '.terraform.d', 'credentials.tfrc.json'), 'utf8'),
      ) as { credentials: Record<string, { token: string }> }
      expect(Object.keys(credentials.credentials)).toEqual([host])
      expect((await cloud.run(['init', '-input=false'], { env: saved })).code).toBe(0)
      const cloudApplied = await cloud.run(['apply', '-auto-approve', '-input=false'], {
        env: saved,
      })
      expect(cloudApplied.code, cloudApplied.stderr).toBe(0)
    } finally {
      await http.dispose()
      await cloud.dispose()
    }
  })

  it('in GitLab CI: takes the id_tokens variable, and says why a job of another project is refused', async () => {
    const gitlabJob = (project: string) =>
      platform.mint({
        iss: platform.url,
        aud: server.url,
        sub: `project_path:${project}:ref_type:branch:ref:main`,
        project_path: project,
        ref: 'main',
        pipeline_id: '12',
        job_id: '34',
        iat: now() - 5,
        exp: now() + 600,
      })
    const env = { GITLAB_CI: 'true', CAIRN_JOB_TOKEN: await gitlabJob('acme/platform') }
    const login = await job.run(
      [
        'login',
        '--ci',
        '--id-token-var',
        'CAIRN_JOB_TOKEN',
        '--server',
        server.url,
        '--ca-file',
        tls.caPath,
      ],
      { env },
    )
    expect(login.code, login.stderr).toBe(0)
    expect(login.stdout).toContain('as policy:gitlab')
    expect(login.stdout).not.toContain('::add-mask::')
    expect(login.stderr).toContain('export TF_HTTP_PASSWORD="$(cairn auth token)"')
    const printed = await job.run(['auth', 'token', '--server', server.url])
    expect(printed.stdout.trim()).toMatch(/^svc_tfe_/)

    const refused = await job.run(
      [
        'login',
        '--ci',
        '--id-token-var',
        'CAIRN_JOB_TOKEN',
        '--server',
        server.url,
        '--ca-file',
        tls.caPath,
      ],
      { env: { ...env, CAIRN_JOB_TOKEN: await gitlabJob('evil/platform') } },
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('refused the CI token (401 invalid_grant)')
    const missing = await job.run(
      ['login', '--ci', '--server', server.url, '--ca-file', tls.caPath],
      {
        env: { GITLAB_CI: 'true' },
      },
    )
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('GitLab CI: give the job an ID token')
  })
})
