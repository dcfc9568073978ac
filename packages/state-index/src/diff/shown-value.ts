/** What an answer shows in place of a sensitive value. */
export const SENSITIVE = '(sensitive)'

/** The longest string an answer shows whole; a longer one is cut here. */
export const MAX_SHOWN_STRING = 1024

/**
 * A state value as an answer shows it: a copy in which every string longer than
 * `MAX_SHOWN_STRING` is cut, saying how much is left out, and every string in `hidden` (a value
 * known to be sensitive) is `(sensitive)`.
 */
export function shownValue(value: unknown, hidden?: ReadonlySet<string>): unknown {
  if (typeof value === 'string') return hidden?.has(value) === true ? SENSITIVE : cut(value)
  if (Array.isArray(value)) return value.map((element: unknown) => shownValue(element, hidden))
  if (typeof value === 'object' && value !== null) {
    // fromEntries defines each key, so a `__proto__` key stays a key and sets no prototype.
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [key, shownValue(member, hidden)]),
    )
  }
  return value
}

function cut(text: string): string {
  if (text.length <= MAX_SHOWN_STRING) return text
  let end = MAX_SHOWN_STRING
  // Never split a surrogate pair: the kept text stays valid UTF-16.
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}… (${text.length - end} more characters)`
}
