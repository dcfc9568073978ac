/**
 * An `If-Match` header as a test of the current entity tag (RFC 9110, section 13.1.1): `*`
 * matches any, otherwise one of a comma-separated list of entity tags, a weak one (`W/"..."`)
 * compared by its opaque part. Core compares with it and never reads the header's grammar.
 */
export function ifMatchOf(header: string): (etag: string) => boolean {
  const tags = header.split(',').map((tag) => tag.trim().replace(/^W\//, ''))
  return (etag) => tags.some((tag) => tag === '*' || tag === etag)
}
