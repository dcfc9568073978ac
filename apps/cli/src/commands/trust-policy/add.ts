import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'
import { repeated } from '../unit/dependency-arg'

export default defineCommand({
  meta: {
    name: 'add',
    description:
      "Set a trust policy: a CI job's token from this issuer, for this audience, whose claims all match, gets this role on this scope",
  },
  args: {
    name: {
      type: 'positional',
      description: 'the policy; its principal is policy:<name>',
      required: true,
    },
    issuer: {
      type: 'string',
      description:
        'the CI platform: https://token.actions.githubusercontent.com, https://gitlab.com, ...',
      required: true,
    },
    audience: {
      type: 'string',
      description: 'the audience the job asks its token for',
      required: true,
    },
    claim: {
      type: 'string',
      description:
        'claim=value or claim=glob (* any run, ? one character), repeatable; all must hold',
    },
    role: { type: 'string', description: 'the role granted (reader, writer, ...)', required: true },
    scope: { type: 'string', description: 'where: *, <prefix>/* or a unit ID', required: true },
    'max-ttl': { type: 'string', description: 'the longest a token lives, 1m to 12h (default 1h)' },
    ...common,
  },
  async run({ args, rawArgs }) {
    const claims: Record<string, string> = {}
    for (const condition of repeated(rawArgs, 'claim')) {
      const equals = condition.indexOf('=')
      if (equals < 1) throw new UsageError(`--claim ${condition}: give claim=value`)
      claims[condition.slice(0, equals)] = condition.slice(equals + 1)
    }
    const context = await openContext(args)
    const policy = await context.client.trustPolicies.set({
      name: args.name,
      issuer: args.issuer,
      audience: args.audience,
      claims,
      role: args.role,
      scope: args.scope,
      ...(args['max-ttl'] === undefined ? {} : { max_ttl: args['max-ttl'] }),
    })
    context.out.result(
      policy,
      () =>
        shown`Trust policy ${policy.name}: jobs of ${policy.issuer} whose tokens match get ${policy.role} on ${policy.scope} for at most ${policy.max_ttl}, as policy:${policy.name}.`,
    )
  },
})
