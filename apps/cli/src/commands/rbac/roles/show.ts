import type { Role } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { shown } from '../../../output/shown'
import { common } from '../../_shared'
import { roleArg } from './role-arg'

export default defineCommand({
  meta: { name: 'show', description: 'Show one role' },
  args: { ...roleArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const role = await context.client.rbac.roles.get(args.name)
    context.out.result(role, () => describeRole(role))
  },
})

/** A role for people, one field a line. */
export function describeRole(role: Role): string {
  return [
    shown`name         ${role.name}`,
    shown`permissions  ${role.permissions.join(', ') || '-'}`,
    `built-in     ${role.built_in ? 'yes' : 'no'}`,
    shown`description  ${role.description || '-'}`,
  ].join('\n')
}
