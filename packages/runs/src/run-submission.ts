import { InvalidRequestError, parseUnitId, type UnitId } from '@cairn/core'
import {
  OPERATIONS,
  type Operation,
  type RunOptions,
  type RunRecord,
  type RunSource,
} from './run-record'

/** The default timeouts of a run's phases: an hour to plan, two to apply. */
export const DEFAULT_TIMEOUTS = { plan: 60 * 60_000, apply: 2 * 60 * 60_000 }
/** The longest any phase may be given: a day. */
const MAX_TIMEOUT_MS = 24 * 60 * 60_000
const MAX_VALUES = 200
const MAX_VALUE_LENGTH = 64 * 1024
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
/**
 * Env a run may not set: Terraform's own settings that would point it elsewhere than the run's
 * directory and state, or read a configuration of the agent's machine.
 */
const RESERVED_ENV = /^(TF_CLI_CONFIG_FILE|TF_DATA_DIR|TF_WORKSPACE|TF_CLI_ARGS.*|HOME|PATH)$/

/** A submission, checked. */
export interface Submission {
  unit: UnitId
  operation: Operation
  source: RunSource
  variables: RunRecord['variables']
  env: RunRecord['env']
  timeouts: RunRecord['timeouts']
  autoApply: boolean
  /** Plan options beside the operation (the `cloud` block's). */
  options?: RunOptions
  /** The `cloud` block's message for the run. */
  message?: string
}

/**
 * `POST /v1/runs`'s body (DESIGN section 14), checked field by field; a git source only from a
 * URL that one of `gitAllowed`'s prefixes begins.
 *
 * @throws InvalidRequestError naming the field
 */
export function parseSubmission(body: unknown, gitAllowed: readonly string[]): Submission {
  const input = objectOf(body, 'the body')
  known(input, ['unit', 'operation', 'source', 'variables', 'env', 'timeouts', 'auto_apply'], '')
  if (typeof input['unit'] !== 'string') throw new InvalidRequestError('unit must be a unit ID')
  const unit = parseUnitId(input['unit'])
  const operation = input['operation']
  if (typeof operation !== 'string' || !(OPERATIONS as readonly string[]).includes(operation)) {
    throw new InvalidRequestError('operation must be plan, apply or destroy')
  }
  const autoApply = input['auto_apply'] ?? false
  if (typeof autoApply !== 'boolean')
    throw new InvalidRequestError('auto_apply must be true or false')
  return {
    unit,
    operation: operation as Operation,
    source: parseSource(input['source'], gitAllowed),
    variables: parseVariables(input['variables']),
    env: parseEnv(input['env']),
    timeouts: parseTimeouts(input['timeouts']),
    autoApply,
  }
}

function parseSource(value: unknown, gitAllowed: readonly string[]): RunSource {
  const source = objectOf(value, 'source')
  if ('upload' in source) {
    known(source, ['upload'], 'source.')
    if (typeof source['upload'] !== 'string')
      throw new InvalidRequestError('source.upload must be an upload ID')
    return { upload: source['upload'] }
  }
  if (!('git' in source)) {
    throw new InvalidRequestError(
      'source must be {"upload": "<id>"} or {"git": {"url", "ref", "path"}}',
    )
  }
  known(source, ['git'], 'source.')
  const git = objectOf(source['git'], 'source.git')
  known(git, ['url', 'ref', 'path'], 'source.git.')
  const url = git['url']
  if (typeof url !== 'string' || url === '' || url.length > 2048) {
    throw new InvalidRequestError('source.git.url must be a repository URL')
  }
  if (!gitAllowed.some((prefix) => url.startsWith(prefix))) {
    throw new InvalidRequestError(
      `source.git.url: ${url} is not allowed here; an administrator allows repositories with -runs-git-allowed`,
    )
  }
  const ref = git['ref'] ?? 'HEAD'
  if (typeof ref !== 'string' || !/^[A-Za-z0-9._/-]{1,255}$/.test(ref) || ref.startsWith('-')) {
    throw new InvalidRequestError('source.git.ref must be a branch, tag or commit')
  }
  const path = git['path']
  if (path !== undefined) {
    if (
      typeof path !== 'string' ||
      path.startsWith('/') ||
      path.split('/').includes('..') ||
      path.length > 1024
    ) {
      throw new InvalidRequestError('source.git.path must be a directory inside the repository')
    }
    return { git: { url, ref, path } }
  }
  return { git: { url, ref } }
}

function parseVariables(value: unknown): RunRecord['variables'] {
  if (value === undefined) return {}
  const input = objectOf(value, 'variables')
  const names = Object.keys(input)
  if (names.length > MAX_VALUES) throw new InvalidRequestError(`variables: at most ${MAX_VALUES}`)
  const variables: RunRecord['variables'] = {}
  for (const name of names) {
    if (!VARIABLE_NAME.test(name))
      throw new InvalidRequestError(`variables: ${name} is not a variable name`)
    const entry = objectOf(input[name], `variables.${name}`)
    known(entry, ['value', 'hcl', 'sensitive'], `variables.${name}.`)
    variables[name] = {
      value: textOf(entry['value'], `variables.${name}.value`),
      hcl: flagOf(entry['hcl'], `variables.${name}.hcl`),
      sensitive: flagOf(entry['sensitive'], `variables.${name}.sensitive`),
    }
  }
  return variables
}

function parseEnv(value: unknown): RunRecord['env'] {
  if (value === undefined) return {}
  const input = objectOf(value, 'env')
  const names = Object.keys(input)
  if (names.length > MAX_VALUES) throw new InvalidRequestError(`env: at most ${MAX_VALUES}`)
  const env: RunRecord['env'] = {}
  for (const name of names) {
    if (!ENV_NAME.test(name))
      throw new InvalidRequestError(`env: ${name} is not an environment variable name`)
    if (RESERVED_ENV.test(name)) {
      throw new InvalidRequestError(
        `env: ${name} is set by the agent for every run and cannot be given`,
      )
    }
    const entry = objectOf(input[name], `env.${name}`)
    known(entry, ['value', 'sensitive'], `env.${name}.`)
    env[name] = {
      value: textOf(entry['value'], `env.${name}.value`),
      sensitive: flagOf(entry['sensitive'], `env.${name}.sensitive`),
    }
  }
  return env
}

function parseTimeouts(value: unknown): RunRecord['timeouts'] {
  if (value === undefined) return { ...DEFAULT_TIMEOUTS }
  const input = objectOf(value, 'timeouts')
  known(input, ['plan', 'apply'], 'timeouts.')
  const seconds = (field: 'plan' | 'apply'): number => {
    const given = input[field]
    if (given === undefined) return DEFAULT_TIMEOUTS[field]
    if (
      typeof given !== 'number' ||
      !Number.isInteger(given) ||
      given < 1 ||
      given * 1000 > MAX_TIMEOUT_MS
    ) {
      throw new InvalidRequestError(`timeouts.${field} must be whole seconds, from 1 to 86400`)
    }
    return given * 1000
  }
  return { plan: seconds('plan'), apply: seconds('apply') }
}

function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidRequestError(`${what} must be a JSON object`)
  }
  return value as Record<string, unknown>
}

function known(input: Record<string, unknown>, fields: readonly string[], at: string): void {
  for (const field of Object.keys(input)) {
    if (!fields.includes(field)) throw new InvalidRequestError(`${at}${field} is not a field here`)
  }
}

function textOf(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new InvalidRequestError(`${what} must be a string`)
  if (value.length > MAX_VALUE_LENGTH) throw new InvalidRequestError(`${what} is too long`)
  return value
}

function flagOf(value: unknown, what: string): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw new InvalidRequestError(`${what} must be true or false`)
  return value
}
