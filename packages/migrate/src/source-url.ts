import { resolve } from 'node:path'
import { ArchiveSource } from './sources/archive'
import { DirectorySource } from './sources/directory'
import { GitlabSource } from './sources/gitlab'
import { S3Source } from './sources/s3'
import { TfeSource } from './sources/tfe'
import type { MigrationSource } from './source'

export interface SourceSettings {
  /** The source's token (TFE, GitLab); else `TFE_TOKEN`, `GITLAB_TOKEN`, or `TF_TOKEN_<host>`. */
  token?: string
  /** An S3-compatible endpoint for `s3://` sources. */
  endpoint?: string
  region?: string
  env?: NodeJS.ProcessEnv
}

export class SourceUrlError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SourceUrlError'
  }
}

/**
 * The source a `cairn import` argument names (DESIGN section 16):
 * `tfe+https://<host>/<org>[/<workspace>]`, `s3://<bucket>[/<prefix>]`,
 * `gitlab+https://<host>/<project path>[#<state>]`, a `.tar` export, or a directory.
 *
 * @throws SourceUrlError naming what is missing
 */
export function sourceOf(spec: string, settings: SourceSettings = {}): MigrationSource {
  const env = settings.env ?? process.env
  if (spec.startsWith('tfe+')) {
    const url = parse(spec.slice(4), spec)
    const [organization, workspace, ...rest] = url.pathname
      .split('/')
      .filter((part) => part !== '')
      .map(decodeURIComponent)
    if (organization === undefined || rest.length > 0) {
      throw new SourceUrlError(
        `${spec}: name the organization, and at most one workspace: tfe+https://<host>/<org>[/<workspace>]`,
      )
    }
    const token = settings.token ?? env['TFE_TOKEN'] ?? env[terraformTokenVariable(url.hostname)]
    if (token === undefined || token === '') {
      throw new SourceUrlError(
        `${spec}: a token is needed: --token, TFE_TOKEN or ${terraformTokenVariable(url.hostname)}`,
      )
    }
    return new TfeSource({
      origin: url.origin,
      organization,
      workspaces: workspace === undefined ? [] : [workspace],
      token,
    })
  }
  if (spec.startsWith('gitlab+')) {
    const url = parse(spec.slice(7), spec)
    const project = url.pathname
      .split('/')
      .filter((part) => part !== '')
      .map(decodeURIComponent)
      .join('/')
    if (project === '')
      throw new SourceUrlError(`${spec}: name the project: gitlab+https://<host>/<group>/<project>`)
    const token = settings.token ?? env['GITLAB_TOKEN']
    if (token === undefined || token === '')
      throw new SourceUrlError(`${spec}: a token is needed: --token or GITLAB_TOKEN`)
    const state = url.hash === '' ? [] : [decodeURIComponent(url.hash.slice(1))]
    return new GitlabSource({ origin: url.origin, project, states: state, token })
  }
  if (spec.startsWith('s3://')) {
    const rest = spec.slice(5)
    const slash = rest.indexOf('/')
    const bucket = slash < 0 ? rest : rest.slice(0, slash)
    if (bucket === '')
      throw new SourceUrlError(`${spec}: name the bucket: s3://<bucket>[/<prefix>]`)
    return new S3Source({
      bucket,
      prefix: slash < 0 ? '' : rest.slice(slash + 1),
      ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
      ...(settings.region === undefined ? {} : { region: settings.region }),
    })
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) {
    throw new SourceUrlError(
      `${spec}: not a source cairn knows: tfe+https://, s3://, gitlab+https://, a directory or an export .tar`,
    )
  }
  if (spec.endsWith('.tar')) return new ArchiveSource(resolve(spec))
  return new DirectorySource(resolve(spec))
}

/** Terraform's variable for a host's token: `TF_TOKEN_app_terraform_io`. */
export function terraformTokenVariable(host: string): string {
  return `TF_TOKEN_${host.replaceAll('.', '_').replaceAll('-', '__')}`
}

function parse(text: string, spec: string): URL {
  try {
    const url = new URL(text)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http')
    return url
  } catch {
    throw new SourceUrlError(`${spec} is not a URL cairn can read`)
  }
}
