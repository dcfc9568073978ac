import { packDirectory } from '@cairn/runs'
import type { Run, RunRequest } from '@cairn/sdk'
import { defineCommand, type ArgDef } from 'citty'
import { CLIError, UsageError } from '../../cli-error'
import { openContext, type Context } from '../../context'
import { confirm, interactive } from '../../terminal/confirm'
import { repeated } from '../unit/dependency-arg'
import { common } from '../_shared'
import { count } from '../_values'

/** The flags of `cairn run plan|apply|destroy`. */
export const startArgs = {
  unit: {
    type: 'positional',
    description: 'the unit the run is for, such as team/app/prod',
    required: true,
  },
  dir: {
    type: 'string',
    description: 'the configuration directory to upload (default: the current one)',
  },
  'git-url': {
    type: 'string',
    description:
      'take the configuration from this git repository instead (the server must allow it)',
  },
  'git-ref': {
    type: 'string',
    description: 'the branch, tag or commit of --git-url (default HEAD)',
  },
  'git-path': {
    type: 'string',
    description: 'the directory inside the repository (default: its root)',
  },
  var: {
    type: 'string',
    description: 'a variable, name=value; repeatable (HCL values with --var-hcl)',
    valueHint: 'name=value',
  },
  'var-hcl': {
    type: 'string',
    description: 'a variable whose value is HCL (a list, a map), name=value; repeatable',
  },
  'sensitive-var': {
    type: 'string',
    description: 'a variable never shown in the log or any answer, name=value; repeatable',
  },
  env: {
    type: 'string',
    description: 'an environment variable for Terraform, NAME=value; repeatable',
  },
  'sensitive-env': {
    type: 'string',
    description: 'an environment variable never shown, NAME=value; repeatable',
  },
  'plan-timeout': { type: 'string', description: 'seconds the plan may take (default 3600)' },
  'apply-timeout': { type: 'string', description: 'seconds the apply may take (default 7200)' },
  detach: {
    type: 'boolean',
    description: 'print the run and return at once, without following its log',
  },
} as const satisfies Record<string, ArgDef>

interface StartArgs {
  unit: string
  dir?: string | undefined
  'git-url'?: string | undefined
  'git-ref'?: string | undefined
  'git-path'?: string | undefined
  'plan-timeout'?: string | undefined
  'apply-timeout'?: string | undefined
  detach?: boolean | undefined
}

/** Builds the request: the configuration uploaded (or named in git), variables and env checked. */
export async function startRun(
  context: Context,
  args: StartArgs,
  rawArgs: string[],
  operation: RunRequest['operation'],
  autoApply: boolean,
): Promise<Run> {
  const variables: NonNullable<RunRequest['variables']> = {}
  const put = (flag: string, options: { hcl?: boolean; sensitive?: boolean }) => {
    for (const given of repeated(rawArgs, flag)) {
      const [name, value] = pair(given, `--${flag}`)
      variables[name] = { value, ...options }
    }
  }
  put('var', {})
  put('var-hcl', { hcl: true })
  put('sensitive-var', { sensitive: true })
  const env: NonNullable<RunRequest['env']> = {}
  for (const given of repeated(rawArgs, 'env')) {
    const [name, value] = pair(given, '--env')
    env[name] = { value }
  }
  for (const given of repeated(rawArgs, 'sensitive-env')) {
    const [name, value] = pair(given, '--sensitive-env')
    env[name] = { value, sensitive: true }
  }
  const timeouts = {
    ...(args['plan-timeout'] === undefined
      ? {}
      : { plan: count(args['plan-timeout'], '--plan-timeout') }),
    ...(args['apply-timeout'] === undefined
      ? {}
      : { apply: count(args['apply-timeout'], '--apply-timeout') }),
  }
  let source: RunRequest['source']
  if (args['git-url'] !== undefined) {
    if (args.dir !== undefined) throw new UsageError('give --dir or --git-url, not both')
    source = {
      git: {
        url: args['git-url'],
        ref: args['git-ref'] ?? 'HEAD',
        ...(args['git-path'] === undefined ? {} : { path: args['git-path'] }),
      },
    }
  } else {
    const dir = args.dir ?? '.'
    let archive: Buffer
    try {
      archive = await packDirectory(dir)
    } catch (error) {
      throw new CLIError(`cannot pack ${dir}: ${(error as Error).message}`)
    }
    source = { upload: await context.client.runs.upload(archive) }
  }
  return context.client.runs.create({
    unit: args.unit,
    operation,
    source,
    variables,
    env,
    ...(Object.keys(timeouts).length === 0 ? {} : { timeouts }),
    auto_apply: autoApply,
  })
}

/**
 * Follows a run's log to stdout until it ends, asks to confirm a planned apply (or confirms it
 * with `autoApprove`), cancels on Ctrl-C (force on a second), and fails unless it succeeded.
 */
export async function followRun(context: Context, run: Run, autoApprove: boolean): Promise<Run> {
  const { client } = context
  let interrupts = 0
  const onInterrupt = () => {
    interrupts += 1
    context.out.note(
      interrupts === 1
        ? `\nCanceling run ${run.id} (Ctrl-C again to kill Terraform at once)...`
        : `\nKilling run ${run.id}...`,
    )
    client.runs.cancel(run.id, { force: interrupts > 1 }).catch((error: unknown) => {
      context.out.note(`could not cancel: ${(error as Error).message}`)
    })
  }
  process.on('SIGINT', onInterrupt)
  let asked = false
  const watch = setInterval(() => {
    if (asked) return
    client.runs
      .get(run.id)
      .then(async (current) => {
        if (asked || current.status !== 'running' || current.phase !== 'planned') return
        asked = true
        try {
          await confirm(autoApprove, `Apply the plan of run ${run.id} to ${run.unit}?`)
          await client.runs.confirm(run.id)
        } catch (error) {
          context.out.note((error as Error).message)
          await client.runs.cancel(run.id).catch(() => undefined)
        }
      })
      .catch(() => undefined)
  }, 1000)
  try {
    for await (const text of client.runs.follow(run.id)) {
      if (context.out.json) process.stderr.write(text)
      else process.stdout.write(text)
    }
  } finally {
    clearInterval(watch)
    process.off('SIGINT', onInterrupt)
  }
  return client.runs.get(run.id)
}

/** The run's end as the command's: 0 when it succeeded, 1 with its error otherwise. */
export function endOf(context: Context, run: Run): void {
  context.out.result(run, () => `run ${run.id} ${run.status}\n`)
  if (run.status !== 'succeeded') {
    const diverged = run.state_diverged
      ? ' (the state Terraform left could not be written: check the unit)'
      : ''
    throw new CLIError(
      `run ${run.id} ${run.status}${run.error === null ? '' : `: ${run.error}`}${diverged}`,
    )
  }
}

/** `name=value`, split at the first `=`. */
function pair(given: string, flag: string): [string, string] {
  const equals = given.indexOf('=')
  if (equals <= 0) throw new UsageError(`${flag} takes name=value, not ${given}`)
  return [given.slice(0, equals), given.slice(equals + 1)]
}

/**
 * `cairn run apply` and `cairn run destroy`: a run that holds the unit's lock, and asks before it
 * applies its plan unless `--auto-approve`.
 */
export function lockingCommand(operation: 'apply' | 'destroy', description: string) {
  return defineCommand({
    meta: { name: operation, description },
    args: {
      ...startArgs,
      'auto-approve': { type: 'boolean', description: 'apply the plan without asking' },
      ...common,
    },
    async run({ args, rawArgs }) {
      const autoApprove = args['auto-approve'] === true
      if (!autoApprove && args.detach !== true && !interactive()) {
        throw new UsageError(
          'nobody can be asked to confirm the plan (standard input is not a terminal): give --auto-approve, or --detach and then cairn run confirm',
        )
      }
      const context = await openContext(args)
      const run = await startRun(context, args, rawArgs, operation, autoApprove)
      if (args.detach === true) {
        context.out.result(run, () => `${run.id}\n`)
        return
      }
      endOf(context, await followRun(context, run, autoApprove))
    },
  })
}
