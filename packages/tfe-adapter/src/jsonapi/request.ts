import type { Context } from 'hono'
import * as v from 'valibot'
import { TfeError } from './errors'

/** JSON:API request bodies are small documents; anything larger is refused unread. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

/**
 * Reads and checks a JSON:API request document.
 *
 * @throws TfeError 400 for a body that is empty or not JSON, 422 for one that is not the document
 *   expected
 */
export async function readDocument<T>(c: Context, schema: v.GenericSchema<unknown, T>): Promise<T> {
  const document = await readOptionalDocument(c, schema)
  if (document === undefined)
    throw new TfeError(400, 'bad request', 'the request needs a JSON:API document')
  return document
}

/** Like `readDocument`, but an empty body gives undefined. */
export async function readOptionalDocument<T>(
  c: Context,
  schema: v.GenericSchema<unknown, T>,
): Promise<T | undefined> {
  const text = await readText(c)
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

async function readText(c: Context): Promise<string> {
  const length = Number(c.req.header('content-length') ?? '0')
  if (length > MAX_DOCUMENT_BYTES)
    throw new TfeError(413, 'payload too large', 'the document is too large')
  const text = await c.req.text()
  if (text.length > MAX_DOCUMENT_BYTES)
    throw new TfeError(413, 'payload too large', 'the document is too large')
  return text
}
