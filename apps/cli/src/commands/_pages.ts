/** One page of a listing, as the commands see it. */
export interface Page<T> {
  items: readonly T[]
  /** Where the next page starts; null when nothing is left. */
  nextCursor: string | null
}

/**
 * The first `wanted` items of a paginated listing (all of them for `Infinity`). Each page asks
 * only for what is still missing, at most `maxPage`, so the last cursor continues right after the
 * items answered; pages are followed even when one comes back short, since a server may bound its
 * work per page.
 */
export async function firstItems<T>(
  wanted: number,
  maxPage: number,
  page: (query: { limit: number; cursor?: string }) => Promise<Page<T>>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const items: T[] = []
  let cursor: string | null = null
  do {
    const next = await page({
      limit: Math.min(maxPage, wanted - items.length),
      ...(cursor === null ? {} : { cursor }),
    })
    items.push(...next.items)
    cursor = next.nextCursor
  } while (cursor !== null && items.length < wanted)
  return { items, nextCursor: cursor }
}
