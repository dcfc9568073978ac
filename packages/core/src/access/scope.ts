import { InvalidRequestError, InvalidUnitIdError } from '../errors'
import { parseUnitId } from '../units/unit-id'

/**
 * Where an assignment applies: `*` (every unit), `<prefix>/*` (every unit under a natural path:
 * `team/*` covers `team/app` and `team/app/prod`, not `team` itself nor `team-b/x`), or one unit ID.
 */
export type Scope = string & { readonly __scope: unique symbol }

/** @throws InvalidRequestError naming what is wrong */
export function parseScope(input: unknown): Scope {
  if (typeof input !== 'string' || input === '') {
    throw new InvalidRequestError('scope must be *, <prefix>/* or a unit ID')
  }
  if (input === '*') return input as Scope
  try {
    if (input.endsWith('/*')) checkFolder(input.slice(0, -2))
    else parseUnitId(input)
  } catch (error) {
    if (!(error instanceof InvalidUnitIdError)) throw error
    throw new InvalidRequestError(
      `scope ${JSON.stringify(input.slice(0, 600))} must be *, <prefix>/* or a unit ID: ${error.message}`,
    )
  }
  return input as Scope
}

/**
 * A prefix is the folder of the units it covers. It is checked as a unit ID, except that it may
 * end in a route word: `team/versions` is no unit ID, yet `team/versions/app` is one.
 *
 * @throws InvalidUnitIdError
 */
function checkFolder(prefix: string): void {
  try {
    parseUnitId(prefix)
  } catch (error) {
    if (!(error instanceof InvalidUnitIdError)) throw error
    try {
      parseUnitId(`${prefix}/x`)
    } catch {
      throw error
    }
  }
}

/** The first segment of a Terraform `s3` backend workspace's unit (its `workspace_key_prefix`). */
export const WORKSPACE_PREFIX = 'env:/'

/**
 * Whether `scope` covers the unit `id` (or, for a narrower token, the scope `id`).
 *
 * A unit of a Terraform workspace through the S3 API, `env:/<workspace>/<base>` (the key
 * `env:/dev/team-a/app/terraform.tfstate` is unit `env:/dev/team-a/app`), belongs to its base
 * unit `<base>` as well as to its own name: every scope that covers `team-a/app` covers it in
 * every workspace, so a team given `team-a/*` may use `terraform workspace` with its own
 * configurations and never with another team's. `env:/*` and `env:/dev/*` still cover workspaces
 * by their own names.
 */
export function scopeCovers(scope: string, id: string): boolean {
  if (covers(scope, id)) return true
  const base = workspaceBaseOf(id)
  return base !== undefined && covers(scope, base)
}

/** The base unit of a workspace's unit (`env:/dev/team/app` is `team/app`'s), if it is one. */
export function workspaceBaseOf(id: string): string | undefined {
  if (!id.startsWith(WORKSPACE_PREFIX)) return undefined
  const slash = id.indexOf('/', WORKSPACE_PREFIX.length)
  if (slash <= WORKSPACE_PREFIX.length || slash === id.length - 1) return undefined
  return id.slice(slash + 1)
}

function covers(scope: string, id: string): boolean {
  if (scope === '*') return true
  if (scope.endsWith('/*')) return id.startsWith(scope.slice(0, -1))
  return scope === id
}

/**
 * A prefix that freezes and webhook subscriptions cover, written as a scope: `*`, `<prefix>/*`
 * or one unit ID.
 *
 * @throws InvalidRequestError naming the prefix
 */
export function parsePrefix(input: unknown): Scope {
  try {
    return parseScope(input)
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error
    throw new InvalidRequestError(error.message.replace(/^scope/, 'prefix'))
  }
}
