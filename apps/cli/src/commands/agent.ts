import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { Agent, AGENT_TOKEN_PREFIX, HttpAgentApi } from '@cairn/runs'
import { fetchTrusting } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { count } from './_values'

export default defineCommand({
  meta: {
    name: 'agent',
    description:
      "Run the server's remote runs on this machine: outbound only, one run at a time, until stopped (SIGTERM or Ctrl-C)",
  },
  args: {
    server: {
      type: 'string',
      description: 'the Cairn server (default: SVC_SERVER_URL)',
    },
    'token-file': {
      type: 'string',
      description:
        'a file holding the agent token (default: CAIRN_AGENT_TOKEN); make one with cairn agent-tokens create',
    },
    terraform: {
      type: 'string',
      description: 'the terraform binary to run (default: terraform on PATH)',
    },
    'work-dir': {
      type: 'string',
      description:
        'where each run gets a fresh directory (default: the system temporary directory)',
    },
    'terraform-config': {
      type: 'string',
      description:
        "a Terraform CLI configuration for every run (provider mirrors); the agent's own is never used",
    },
    'cancel-grace': {
      type: 'string',
      description: 'seconds Terraform has to stop after a cancel before it is killed (default 30)',
    },
    'ca-file': {
      type: 'string',
      description:
        'trust the CA certificate (PEM) in this file, for https (default: CAIRN_CA_FILE)',
    },
  },
  async run({ args }) {
    const server = args.server ?? process.env['SVC_SERVER_URL']
    if (server === undefined || server === '') {
      throw new UsageError(
        'name the server: --server https://cairn.example.com (or SVC_SERVER_URL)',
      )
    }
    const token = await tokenOf(args['token-file'])
    const caFile = args['ca-file'] ?? process.env['CAIRN_CA_FILE']
    const fetch =
      caFile === undefined || caFile === ''
        ? undefined
        : fetchTrusting(await readText(caFile, '--ca-file'))
    const api = new HttpAgentApi({ server, token, ...(fetch === undefined ? {} : { fetch }) })
    // The agent's name is its token's: the server says it with every run it hands out.
    const agent = new Agent({
      api,
      name: 'agent',
      terraform: args.terraform ?? 'terraform',
      workRoot: args['work-dir'] ?? tmpdir(),
      path: process.env['PATH'] ?? '',
      ...(args['terraform-config'] === undefined ? {} : { cliConfig: args['terraform-config'] }),
      ...(args['cancel-grace'] === undefined
        ? {}
        : { cancelGraceMs: count(args['cancel-grace'], '--cancel-grace') * 1000 }),
      onError: (error) => {
        process.stderr.write(`cairn agent: ${(error as Error).message}\n`)
      },
      onRun: ({ run, outcome }) => {
        process.stderr.write(
          outcome === undefined
            ? `cairn agent: run ${run.id} (${run.operation} of ${run.unit}) started\n`
            : `cairn agent: run ${run.id} ${outcome}\n`,
        )
      },
    })
    process.stderr.write(`cairn agent: waiting for runs from ${server}\n`)
    agent.start()
    const stopped = new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.stderr.write(`cairn agent: ${signal}: stopping\n`)
        agent.stop().then(resolve, resolve)
      }
      process.once('SIGTERM', () => {
        stop('SIGTERM')
      })
      process.once('SIGINT', () => {
        stop('SIGINT')
      })
    })
    await Promise.race([stopped, agent.finished])
    if (agent.refused !== undefined) {
      throw new CLIError(
        `the server refused the agent token (${agent.refused.message}): it was revoked, or belongs to another server`,
      )
    }
  },
})

async function tokenOf(file: string | undefined): Promise<string> {
  const token =
    file === undefined
      ? process.env['CAIRN_AGENT_TOKEN']
      : (await readText(file, '--token-file')).trim()
  if (token === undefined || token === '') {
    throw new UsageError('give the agent its token: --token-file <file>, or CAIRN_AGENT_TOKEN')
  }
  if (!token.startsWith(AGENT_TOKEN_PREFIX)) {
    throw new UsageError(
      `that is not an agent token (they begin ${AGENT_TOKEN_PREFIX}); make one with cairn agent-tokens create`,
    )
  }
  return token
}

async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    throw new CLIError(
      `cannot read ${flag} ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    )
  }
}
