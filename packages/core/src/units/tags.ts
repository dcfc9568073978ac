import { InvalidRequestError } from '../errors'

const TAG = /^[A-Za-z0-9._~:@+=/-]{1,255}$/
const MAX_TAGS = 100

/**
 * Checks a unit's tags: up to 100 strings of the characters of unit IDs and `/`, 1 to 255 long
 * (`env:prod` and `team/app` shapes both fit). Duplicates are dropped, order is kept.
 *
 * @throws InvalidRequestError naming the bad tag.
 */
export function parseTags(input: unknown): string[] {
  if (!Array.isArray(input)) throw new InvalidRequestError('tags must be a list of strings')
  if (input.length > MAX_TAGS) throw new InvalidRequestError(`a unit has at most ${MAX_TAGS} tags`)
  const tags: string[] = []
  for (const tag of input) {
    if (typeof tag !== 'string' || !TAG.test(tag)) {
      throw new InvalidRequestError(
        `tag ${JSON.stringify(tag)} must be 1 to 255 of A-Z a-z 0-9 . _ ~ : @ + = / -`,
      )
    }
    if (!tags.includes(tag)) tags.push(tag)
  }
  return tags
}
