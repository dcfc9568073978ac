import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import {
  AgentTokenNotFoundError,
  demandAdmin,
  InvalidRequestError,
  iso,
  listAllKeys,
  readRecord,
  writeRecord,
  type Authorizer,
  type Clock,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import * as v from 'valibot'
import { RUN_KEYS } from './run-keys'

/** Every agent token begins so: never an API token's prefix, so neither is taken for the other. */
export const AGENT_TOKEN_PREFIX = 'cairn_agent_'
const TOKEN_SHAPE = /^cairn_agent_[A-Za-z0-9_-]{43}$/
const NAME_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

const AgentTokenSchema = v.object({
  id: v.string(),
  name: v.string(),
  sha256: v.string(),
  created: v.string(),
  created_by: v.string(),
})
type AgentTokenRecord = v.InferOutput<typeof AgentTokenSchema>

/** An agent token as listed: never its secret. */
export interface AgentTokenView {
  id: string
  name: string
  created: string
  created_by: string
}

/** Who an agent token speaks for: an agent, by the name its token was given. */
export interface AgentIdentity {
  tokenId: string
  name: string
}

/**
 * Agent tokens (DESIGN section 14): their own kind, made and revoked by administrators, accepted
 * only by the agents' routes. A token is `cairn_agent_` and 32 random bytes; the store keeps its
 * SHA-256 under an ID made from that hash, so a lookup is one read and the comparison is
 * constant-time.
 */
export class AgentTokens {
  readonly #store: ObjectStore
  readonly #authorizer: Authorizer
  readonly #clock: Clock

  constructor(options: { store: ObjectStore; authorizer: Authorizer; clock: Clock }) {
    this.#store = options.store
    this.#authorizer = options.authorizer
    this.#clock = options.clock
  }

  /** Makes a token; its secret is in this answer and nowhere else. */
  async create(principal: Principal, name: unknown): Promise<AgentTokenView & { token: string }> {
    await demandAdmin(this.#authorizer, principal, 'create agent tokens')
    if (typeof name !== 'string' || !NAME_SHAPE.test(name)) {
      throw new InvalidRequestError(
        'name: an agent token needs a name of 1 to 63 letters, digits, dots, dashes or underscores',
      )
    }
    const token = `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
    const sha256 = hashOf(token)
    const record: AgentTokenRecord = {
      id: idOf(sha256),
      name,
      sha256,
      created: iso(this.#clock.now()),
      created_by: principal.subject,
    }
    await writeRecord(this.#store, keyOf(record.id), record, { ifNoneMatch: '*' })
    return { ...viewOf(record), token }
  }

  async list(principal: Principal): Promise<AgentTokenView[]> {
    await demandAdmin(this.#authorizer, principal, 'list agent tokens')
    const found: AgentTokenView[] = []
    for await (const key of listAllKeys(this.#store, RUN_KEYS.agentTokens)) {
      const stored = await readRecord(this.#store, key, AgentTokenSchema, `agent token ${key}`)
      if (stored !== undefined) found.push(viewOf(stored.value))
    }
    return found.sort((a, b) => a.created.localeCompare(b.created))
  }

  /** @throws AgentTokenNotFoundError */
  async revoke(principal: Principal, id: string): Promise<void> {
    await demandAdmin(this.#authorizer, principal, 'revoke agent tokens')
    if (!/^[a-f0-9]{24}$/.test(id) || (await this.#store.head(keyOf(id))) === undefined) {
      throw new AgentTokenNotFoundError(id)
    }
    await this.#store.delete(keyOf(id))
  }

  /** The agent a token speaks for, or undefined for anything that is not a live agent token. */
  async verify(token: string): Promise<AgentIdentity | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined
    const actual = Buffer.from(hashOf(token), 'hex')
    const stored = await readRecord(
      this.#store,
      keyOf(idOf(actual.toString('hex'))),
      AgentTokenSchema,
    )
    if (stored === undefined) return undefined
    const expected = Buffer.from(stored.value.sha256, 'hex')
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined
    return { tokenId: stored.value.id, name: stored.value.name }
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** The record's ID: a hash of the token's hash, so the ID (which is listed) says nothing of it. */
function idOf(sha256: string): string {
  return createHash('sha256').update(`agent-token:${sha256}`).digest('hex').slice(0, 24)
}

function keyOf(id: string): string {
  return `${RUN_KEYS.agentTokens}${id}.json`
}

function viewOf(record: AgentTokenRecord): AgentTokenView {
  return {
    id: record.id,
    name: record.name,
    created: record.created,
    created_by: record.created_by,
  }
}
