import type { Context } from 'hono'
import * as v from 'valibot'
import { TfeError } from './errors'

/** JSON:API request documents are small; anything larger is refused unread, or cut off. */
export const MAX_DOCUMENT_BYTES = 1024 * 1024

/** The document that creates a state version may carry the state inline (older clients). */
export const MAX_INLINE_STATE_DOCUMENT_BYTES = 16 * 1024 * 1024

/** Reads a request body of at most `limit` bytes: the server's bounded reader. */
export type BodyReader = (c: Context, limit: number) => Promise<Uint8Array>

/**
 * Reads and checks a JSON:API request document.
 *
 * @throws TfeError 400 for a body that is empty or not JSON, 422 for one that is not the document
 *   expected
 */
export async function readDocument<T>(
  c: Context,
  read: BodyReader,
  schema: v.GenericSchema<unknown, T>,
  limit = MAX_DOCUMENT_BYTES,
): Promise<T> {
  const document = await readOptionalDocument(c, read, schema, limit)
  if (document === undefined)
    throw new TfeError(400, 'bad request', 'the request needs a JSON:API document')
  return document
}

/** Like `readDocument`, but an empty body gives undefined. */
export async function readOptionalDocument<T>(
  c: Context,
  read: BodyReader,
  schema: v.GenericSchema<unknown, T>,
  limit = MAX_DOCUMENT_BYTES,
): Promise<T | undefined> {
  const text = Buffer.from(await read(c, limit)).toString('utf8')
  if (text.trim() === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new TfeError(400, 'bad request', 'the request body is not JSON')
  }
  const result = v.safeParse(schema, parsed)
  if (!result.success) {
    const issue = result.issues[0]
    const path = issue.path?.map((item) => String(item.key)).join('.') ?? 'document'
    throw new TfeError(422, 'invalid attribute', `${path}: ${issue.message}`)
  }
  return result.output
}
