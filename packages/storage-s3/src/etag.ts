import { isPreconditionFailure } from './s3-errors'

/**
 * ETags as callers see them: always the quoted form (`"abc"`), as RFC 9110 writes an entity tag
 * and AWS returns it, whatever quoting the server used, so that put, head, get and list agree.
 */
export function normalizeEtag(etag: string | undefined): string {
  if (etag === undefined || etag === '') throw new Error('the object store returned no ETag')
  return `"${unquote(etag)}"`
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1')
}

/**
 * Sends `If-Match` in the form the server compares. AWS compares the quoted entity tag; some
 * Ceph RGW versions compare the raw value byte for byte, so the quoted form always fails there.
 * Until the server has shown which it wants, a 412 on the quoted form is retried once with the
 * unquoted one: that retry is itself conditional, so a real conflict still fails. The first
 * success fixes the form for the rest of the process.
 */
export class IfMatchForm {
  #form: 'quoted' | 'unquoted' | undefined

  /** The form the server was seen to accept, if any yet. */
  get learned(): 'quoted' | 'unquoted' | undefined {
    return this.#form
  }

  /** Runs `send` with the ETag in the form the server wants; rejects as the request did. */
  async send<T>(etag: string, send: (ifMatch: string) => Promise<T>): Promise<T> {
    const quoted = `"${unquote(etag)}"`
    const bare = unquote(etag)
    if (this.#form !== undefined) return send(this.#form === 'quoted' ? quoted : bare)
    try {
      const result = await send(quoted)
      this.#form = 'quoted'
      return result
    } catch (error) {
      if (!isPreconditionFailure(error)) throw error
      const result = await send(bare)
      this.#form = 'unquoted'
      return result
    }
  }
}
