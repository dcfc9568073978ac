import { isPrintableAscii } from '@cairn/contract'
import { parseRoleName } from '@cairn/rbac'
import { parseScope } from '@cairn/core'
import * as v from 'valibot'

/**
 * Passes what a domain parser accepts; otherwise an issue with the parser's own message. The
 * token request's scope and role follow the rules of core's scopes and RBAC's role names, which
 * the contract (a leaf) cannot import: so the request is checked here, at the edge.
 */
const parsedBy = (parse: (input: unknown) => unknown) =>
  v.rawCheck<string>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    try {
      parse(dataset.value)
    } catch (error) {
      addIssue({ message: (error as Error).message })
    }
  })

/**
 * `POST /v1/auth/tokens` (and the dashboard's token form). `scope` and `role` come together: a
 * token limited to what that role grants on that scope (a CI job that may only write `team/app/*`).
 */
export const CreateApiTokenRequestSchema = v.pipe(
  v.object({
    name: v.pipe(
      v.string('name must name the token'),
      v.check(
        (name) => name.length >= 1 && name.length <= 100 && isPrintableAscii(name),
        'name must be 1 to 100 printable characters',
      ),
    ),
    expires_in: v.optional(
      v.pipe(
        v.number('expires_in must be a number of seconds'),
        v.integer('expires_in must be a whole number of seconds'),
        v.minValue(60, 'expires_in must be at least 60 seconds'),
        v.maxValue(10 * 365 * 24 * 3600, 'expires_in must be at most ten years'),
      ),
    ),
    scope: v.optional(
      v.pipe(v.string('scope must be *, <prefix>/* or a unit ID'), parsedBy(parseScope)),
    ),
    role: v.optional(v.pipe(v.string('role must name a role'), parsedBy(parseRoleName))),
  }),
  v.check(
    (body) => (body.scope === undefined) === (body.role === undefined),
    'scope and role go together: a limited token needs both the units it may reach and the role it has on them',
  ),
)
export type CreateApiTokenRequest = v.InferOutput<typeof CreateApiTokenRequestSchema>
