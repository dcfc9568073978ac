import { randomBytes, randomUUID } from 'node:crypto'

/** Where core gets identifiers, injected so tests can make them predictable. */
export interface IdSource {
  /** A random UUID, for lock IDs. */
  uuid(): string
  /** A short random lower-case string, for object names. */
  token(): string
}

export const randomIds: IdSource = {
  uuid: () => randomUUID(),
  token: () => randomBytes(8).toString('hex'),
}
