import { CLIError } from '../cli-error'

/** Where the CI job's ID token came from. */
export type CiPlatform = 'github-actions' | 'variable'

/**
 * The OIDC ID token of the CI job this runs in: the variable named by `--id-token-var` (GitLab
 * CI's `id_tokens:`, any platform that hands one over), else `CAIRN_ID_TOKEN`, else GitHub
 * Actions' token asked for with `audience` (the job needs `permissions: id-token: write`).
 *
 * @throws CLIError naming what is missing
 */
export async function ciIdToken(
  env: NodeJS.ProcessEnv,
  options: { audience: string; variable?: string | undefined; fetch: typeof fetch },
): Promise<{ token: string; platform: CiPlatform; from: string }> {
  if (options.variable !== undefined) {
    const token = env[options.variable]?.trim() ?? ''
    if (token === '') {
      throw new CLIError(
        `${options.variable} holds no ID token: give the job one (GitLab CI: id_tokens: ${options.variable}: aud: ${options.audience})`,
      )
    }
    return { token, platform: 'variable', from: options.variable }
  }
  const named = env['CAIRN_ID_TOKEN']?.trim() ?? ''
  if (named !== '') return { token: named, platform: 'variable', from: 'CAIRN_ID_TOKEN' }
  const url = env['ACTIONS_ID_TOKEN_REQUEST_URL'] ?? ''
  const bearer = env['ACTIONS_ID_TOKEN_REQUEST_TOKEN'] ?? ''
  if (url !== '' && bearer !== '') {
    const asked = new URL(url)
    asked.searchParams.set('audience', options.audience)
    let answer: Response
    try {
      answer = await options.fetch(asked, { headers: { Authorization: `bearer ${bearer}` } })
    } catch (error) {
      throw new CLIError(
        `GitHub Actions' token service could not be reached: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
    const body = (await answer.json().catch(() => ({}))) as { value?: unknown }
    if (!answer.ok || typeof body.value !== 'string') {
      throw new CLIError(
        `GitHub Actions gave no ID token (${String(answer.status)}): does the job have permissions: id-token: write?`,
      )
    }
    return { token: body.value, platform: 'github-actions', from: 'ACTIONS_ID_TOKEN_REQUEST_URL' }
  }
  if (env['GITHUB_ACTIONS'] === 'true') {
    throw new CLIError(
      'GitHub Actions gives this job no ID token: add permissions: id-token: write to the job',
    )
  }
  if (env['GITLAB_CI'] === 'true') {
    throw new CLIError(
      'GitLab CI: give the job an ID token (id_tokens: CAIRN_ID_TOKEN: aud: ...) and name it with --id-token-var, or call it CAIRN_ID_TOKEN',
    )
  }
  throw new CLIError(
    'no CI ID token here: run it in GitHub Actions (permissions: id-token: write) or GitLab CI (id_tokens:), or give the token in CAIRN_ID_TOKEN',
  )
}
