import type { ArgDef } from 'citty'

export const roleArg = {
  name: { type: 'positional', description: 'the role, such as reader', required: true },
} as const satisfies Record<string, ArgDef>
