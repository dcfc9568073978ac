import type { ListOptions, ListPage, ObjectInfo } from './object-store'

/** The default and largest page a local driver returns, as in S3. */
export const MAX_LIST_LIMIT = 1000

/**
 * Cuts one page out of objects already sorted by key, applying the prefix, `startAfter`, the
 * cursor, delimiter roll-up and the limit with S3's ListObjectsV2 semantics. Shared by the drivers
 * that list locally (memory, fs); `objects` may be lazy and is read only as far as the page needs.
 *
 * @internal
 */
export async function collectPage(
  objects: Iterable<ObjectInfo> | AsyncIterable<ObjectInfo>,
  options: ListOptions,
): Promise<ListPage> {
  const limit = Math.min(Math.max(options.limit ?? MAX_LIST_LIMIT, 1), MAX_LIST_LIMIT)
  const after = decodeCursor(options.cursor)
  const page: ListPage = { objects: [], prefixes: [] }
  let last: { kind: 'key' | 'prefix'; value: string } | undefined
  for await (const object of objects) {
    const { key } = object
    if (!key.startsWith(options.prefix)) continue
    if (options.startAfter !== undefined && key <= options.startAfter) continue
    if (after !== undefined) {
      if (key <= after.value) continue
      if (after.kind === 'prefix' && key.startsWith(after.value)) continue
    }
    const rolled = rollUp(key, options)
    if (rolled !== undefined && last?.kind === 'prefix' && rolled === last.value) continue
    if (last !== undefined && page.objects.length + page.prefixes.length === limit) {
      page.cursor = encodeCursor(last)
      return page
    }
    if (rolled !== undefined) {
      page.prefixes.push(rolled)
      last = { kind: 'prefix', value: rolled }
    } else {
      page.objects.push(object)
      last = { kind: 'key', value: key }
    }
  }
  return page
}

function rollUp(key: string, options: ListOptions): string | undefined {
  if (options.delimiter === undefined || options.delimiter === '') return undefined
  const at = key.indexOf(options.delimiter, options.prefix.length)
  return at === -1 ? undefined : key.slice(0, at + options.delimiter.length)
}

function encodeCursor(last: { kind: 'key' | 'prefix'; value: string }): string {
  return `${last.kind === 'key' ? 'k' : 'p'}:${last.value}`
}

function decodeCursor(
  cursor: string | undefined,
): { kind: 'key' | 'prefix'; value: string } | undefined {
  if (cursor === undefined) return undefined
  const kind = cursor.startsWith('p:') ? 'prefix' : 'key'
  return { kind, value: cursor.slice(2) }
}
