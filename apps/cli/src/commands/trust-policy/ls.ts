import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List the trust policies (administrators)' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const policies = await context.client.trustPolicies.list()
    context.out.result({ policies }, () =>
      policies.length === 0
        ? 'No trust policies.'
        : table(
            ['NAME', 'ISSUER', 'AUDIENCE', 'CLAIMS', 'ROLE', 'SCOPE', 'MAX TTL'],
            policies.map((policy) => [
              policy.name,
              policy.issuer,
              policy.audience,
              Object.entries(policy.claims)
                .map(([claim, value]) => `${claim}=${value}`)
                .join(' '),
              policy.role,
              policy.scope,
              policy.max_ttl,
            ]),
          ),
    )
  },
})
