import * as v from 'valibot'
import { InvalidRequestError } from './errors'

/** Checks a request body against its schema. @throws InvalidRequestError naming the field. */
export function validate<T>(schema: v.GenericSchema<unknown, T>, input: unknown): T {
  const result = v.safeParse(schema, input)
  if (result.success) return result.output
  const issue = result.issues[0]
  const field = issue.path?.map((item) => String(item.key)).join('.')
  const message = issue.message
  throw new InvalidRequestError(
    field === undefined || message.startsWith(field) ? message : `${field}: ${message}`,
  )
}

/**
 * A record keyed by any string, like valibot's `record`, except that it keeps every own key:
 * `record` silently drops `__proto__`, `constructor` and `prototype`, which are valid output
 * names and unit IDs. The result has no prototype, so no key can reach inherited members.
 */
export function ownRecord<T>(
  value: v.GenericSchema<unknown, T>,
  message = 'must be an object',
): v.GenericSchema<unknown, Record<string, T>> {
  return v.pipe(
    v.custom<Record<string, unknown>>(
      (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
      message,
    ),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const kept = Object.create(null) as Record<string, T>
      for (const [key, item] of Object.entries(dataset.value)) {
        const result = v.safeParse(value, item)
        if (!result.success) {
          addIssue({ message: `${key}: ${result.issues[0].message}` })
          return NEVER
        }
        kept[key] = result.output
      }
      return kept
    }),
  )
}
