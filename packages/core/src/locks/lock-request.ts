import { LockRequestSchema, type LockRequest } from '@cairn/contract'
import * as v from 'valibot'
import { InvalidLockInfoError } from '../errors'

/**
 * Validates an untrusted lock body.
 *
 * @throws InvalidLockInfoError (`invalid_lock_info`) naming the first bad field.
 */
export function parseLockRequest(input: unknown): LockRequest {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidLockInfoError('expected a JSON object')
  }
  const result = v.safeParse(LockRequestSchema, input)
  if (!result.success) {
    const issue = result.issues[0]
    const field = issue.path?.map((item) => String(item.key)).join('.') ?? 'body'
    throw new InvalidLockInfoError(`${field}: ${issue.message}`)
  }
  return result.output
}
