import type { PageQuery } from './units'

/** What the `all` helpers take: a prefix, and how many items to ask for a page. */
export interface AllQuery {
  prefix?: string
  pageSize?: number
}

/**
 * Every item of a paginated `/v1` listing under a prefix: asks `list` for page after page,
 * passing each page's `next_cursor` on, and yields the items `itemsOf` picks from it.
 */
export async function* everyItem<P extends { next_cursor: string | null }, T>(
  query: AllQuery,
  defaultPageSize: number,
  list: (page: PageQuery & { prefix?: string }) => Promise<P>,
  itemsOf: (page: P) => readonly T[],
): AsyncGenerator<T> {
  let cursor: string | undefined
  do {
    const page = await list({
      ...(query.prefix === undefined ? {} : { prefix: query.prefix }),
      limit: query.pageSize ?? defaultPageSize,
      ...(cursor === undefined ? {} : { cursor }),
    })
    yield* itemsOf(page)
    cursor = page.next_cursor ?? undefined
  } while (cursor !== undefined)
}
