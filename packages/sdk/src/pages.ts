/** One page of a listing: how many at most, and where the last page left off. */
export interface PageQuery {
  limit?: number
  cursor?: string
}

/** What the `all` helpers take: a prefix, and how many items to ask for a page. */
export interface AllQuery {
  prefix?: string
  pageSize?: number
}

/**
 * Every item of a paginated `/v1` listing: asks `list` for page after page with the query's
 * filters (all of it but `pageSize`), passing each page's `next_cursor` on, and yields the items
 * `itemsOf` picks from it.
 */
export async function* everyItem<
  P extends { next_cursor: string | null },
  T,
  F extends object = Omit<AllQuery, 'pageSize'>,
>(
  query: F & { pageSize?: number },
  defaultPageSize: number,
  list: (page: F & PageQuery) => Promise<P>,
  itemsOf: (page: P) => readonly T[],
): AsyncGenerator<T> {
  const { pageSize, ...filters } = query
  let cursor: string | undefined
  do {
    const page = await list({
      ...(filters as F),
      limit: pageSize ?? defaultPageSize,
      ...(cursor === undefined ? {} : { cursor }),
    })
    yield* itemsOf(page)
    cursor = page.next_cursor ?? undefined
  } while (cursor !== undefined)
}
