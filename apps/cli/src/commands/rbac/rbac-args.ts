import { PermissionSchema, type AssignmentRequest, type Permission } from '@cairn/sdk'
import type { ArgDef } from 'citty'
import { UsageError } from '../../cli-error'
import { repeated } from '../unit/dependency-arg'

const PERMISSIONS: readonly string[] = PermissionSchema.options
const PRINCIPAL = /^(user|email|group):.+$/s

/** `<principal> <role> --scope <scope>`, as `assign` and `revoke` take them. */
export const assignmentArgs = {
  principal: {
    type: 'positional',
    description: 'who: user:<subject>, email:<address> or group:<name>',
    required: true,
  },
  role: { type: 'positional', description: 'the role, such as reader or writer', required: true },
  scope: {
    type: 'string',
    description: 'where (required): a unit ID, a prefix such as team/*, or * for every unit',
    valueHint: 'unit|prefix/*|*',
  },
} as const satisfies Record<string, ArgDef>

/** The assignment the command line names, checked before anything is sent. */
export function assignmentOf(args: {
  principal: string
  role: string
  scope?: string | undefined
}): AssignmentRequest {
  if (!PRINCIPAL.test(args.principal)) {
    throw new UsageError(
      `${args.principal} is not a principal: write user:<subject>, email:<address> or group:<name>`,
    )
  }
  if (args.scope === undefined || args.scope === '') {
    throw new UsageError('--scope is required: a unit ID, a prefix such as team/*, or *')
  }
  return { principal: args.principal, role: args.role, scope: args.scope }
}

/** One permission named on the command line. */
export function permissionOf(text: string): Permission {
  if (!PERMISSIONS.includes(text)) {
    throw new UsageError(`unknown permission ${text}: use one of ${PERMISSIONS.join(', ')}`)
  }
  return text as Permission
}

/** Every `--permission`, given many times or as a comma-separated list, without repeats. */
export function permissionsOf(rawArgs: readonly string[]): Permission[] {
  const named = repeated(rawArgs, 'permission')
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '')
  return [...new Set(named.map(permissionOf))]
}
