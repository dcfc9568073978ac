import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { shown } from '../../../output/shown'
import { confirm } from '../../../terminal/confirm'
import { common, yesArg } from '../../_shared'
import { grants } from '../assignments/ls'

export default defineCommand({
  meta: {
    name: 'rm',
    description:
      'Remove a user: revoke their API tokens and logins, and the assignments naming them',
  },
  args: {
    subject: {
      type: 'positional',
      description: 'the user\u2019s subject, as cairn rbac users ls shows it',
      required: true,
    },
    issuer: {
      type: 'string',
      description: 'the provider that named them, when users of several share the subject',
    },
    ...common,
    ...yesArg,
  },
  async run({ args }) {
    await confirm(
      args.yes,
      shown`Remove user ${args.subject}, revoking their API tokens, logins and assignments?`,
    )
    const context = await openContext(args)
    const removed = await context.client.rbac.users.remove(
      args.subject,
      args.issuer === undefined ? {} : { issuer: args.issuer },
    )
    context.out.result(removed, () =>
      [
        `Removed ${removed.subject}: ${removed.tokens_revoked} API token(s) and ${removed.logins_revoked} login(s) revoked.`,
        `Assignments removed: ${grants(removed.assignments_removed) || 'none'}.`,
        `Kept (their groups'): ${grants(removed.assignments_kept) || 'none'}.`,
        'They can sign in again while the identity provider lets them: remove them there too.',
      ].join('\n'),
    )
  },
})
