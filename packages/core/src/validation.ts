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
