import type { ArgDef } from 'citty'

/** Flags every command that talks to a server takes. */
export const common = {
  server: {
    type: 'string',
    description:
      'the Cairn server (default: SVC_SERVER_URL, else the default login (cairn auth switch), else the only one)',
  },
  'ca-file': {
    type: 'string',
    description: 'trust the CA certificate (PEM) in this file, for https (default: CAIRN_CA_FILE)',
  },
  json: { type: 'boolean', description: 'print the result as JSON' },
} as const satisfies Record<string, ArgDef>

export const unitArg = {
  id: { type: 'positional', description: 'the unit ID, such as team/app/prod', required: true },
} as const satisfies Record<string, ArgDef>

/** `--version` for commands that read one version of a unit, the current one by default. */
export const versionArg = {
  version: {
    type: 'string',
    description: 'the version written at this timestamp (default: the current one)',
    valueHint: 'timestamp',
  },
} as const satisfies Record<string, ArgDef>

/** `--lock-id` for commands that write under a lock; `cairn unit lock` remembers it otherwise. */
export const lockIdArg = {
  'lock-id': {
    type: 'string',
    description: 'the lock to write under (default: the one cairn unit lock took)',
  },
} as const satisfies Record<string, ArgDef>

/** `--yes` for commands that delete: it confirms without a question (see `confirm`). */
export const yesArg = {
  yes: {
    type: 'boolean',
    alias: 'y',
    description: 'do it without asking; needed where nobody can be asked (no terminal)',
  },
} as const satisfies Record<string, ArgDef>
