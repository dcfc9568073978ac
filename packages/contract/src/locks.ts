import * as v from 'valibot'
import { printableText } from './printable'

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
// RFC 3339 date-time; Terraform writes nanoseconds, Go's time.RFC3339Nano.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/
const MAX_FIELD_LENGTH = 4096

/**
 * A lock field, as it may be shown. Terraform prints the holder's LockInfo to every other operator
 * whose plan or apply meets the lock ("Error acquiring the state lock"), so an ANSI escape or a
 * carriage return in it could rewrite their terminal: control characters are stripped, rather than
 * refused, so that no client, however odd its fields, is turned away from taking a lock.
 */
const text = v.pipe(
  v.string(),
  v.maxLength(MAX_FIELD_LENGTH, 'is longer than 4096 characters'),
  v.transform(printableText),
)

/**
 * Terraform's LockInfo, with Go's field names and casing (`internal/states/statemgr/locker.go`).
 * Every protocol stores and returns this same object. Its text fields come out printable, whether
 * from a request or from a stored record written before they were.
 */
export const LockInfoSchema = v.object({
  ID: v.pipe(v.string(), v.regex(UUID, 'must be a UUID')),
  Operation: text,
  Info: text,
  Who: text,
  Version: text,
  Created: v.pipe(v.string(), v.regex(RFC3339, 'must be an RFC 3339 time')),
  Path: text,
})

export type LockInfo = v.InferOutput<typeof LockInfoSchema>

/** A lock request: LockInfo with every field optional (the ID is generated when absent). */
export const LockRequestSchema = v.partial(LockInfoSchema)

export type LockRequest = v.InferOutput<typeof LockRequestSchema>
