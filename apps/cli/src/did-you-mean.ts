/**
 * The name among `candidates` that `typed` most likely meant, as git and gh suggest one: the
 * nearest by edit distance (insertions, deletions, substitutions and swaps of two neighbours) when
 * it is at most two edits away and closer than the typed word is long, else the first that
 * starts with what was typed; undefined when none is near.
 */
export function didYouMean(typed: string, candidates: Iterable<string>): string | undefined {
  const word = typed.toLowerCase()
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  const starting: string[] = []
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
    if (word.length > 0 && candidate.toLowerCase().startsWith(word)) starting.push(candidate)
  }
  if (best !== undefined && bestDistance <= 2 && bestDistance < word.length) return best
  return starting.sort()[0]
}

/** Optimal string alignment distance: Levenshtein's, with a swap of neighbours as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1
  const columns = b.length + 1
  const d: number[] = new Array<number>(rows * columns).fill(0)
  const at = (i: number, j: number): number => d[i * columns + j] ?? 0
  for (let i = 0; i < rows; i += 1) d[i * columns] = i
  for (let j = 0; j < columns; j += 1) d[j] = j
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < columns; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, at(i - 2, j - 2) + 1)
      }
      d[i * columns + j] = value
    }
  }
  return at(a.length, b.length)
}
