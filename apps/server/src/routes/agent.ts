import { InvalidRequestError, toWebStream } from '@cairn/core'
import type { AgentIdentity, AgentTokens, RunService } from '@cairn/runs'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, readSmallBody, SMALL_BODY_BYTES, stateStream } from '../http/body'
import { HttpError } from '../http/errors'
import { queryInt } from '../http/query'
import { requestSignal } from '../http/request-signal'
import { MAX_CHUNK_BYTES } from '@cairn/runs'

/** The longest an agent's claim waits for a run, in seconds. */
const MAX_WAIT_S = 30
/** How often a claim that waits checks its token again, in milliseconds. */
const RECHECK_MS = 2_000

function tokenOf(c: { req: { header(name: string): string | undefined } }): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1]
}

function refused(): HttpError {
  return new HttpError(
    'unauthorized',
    'this needs an agent token: send Authorization: Bearer <agent token>',
    { 'WWW-Authenticate': 'Bearer realm="cairn-agents"' },
  )
}

/**
 * The agents' routes (`/v1/agent/...`, DESIGN section 14): claim a run (a long poll), fetch its
 * configuration and state, say it is alive (and hear of a cancel or a confirmation), send its log,
 * report its plan, write its state, and end it. Only an agent token opens them, and an agent
 * token opens nothing else (the `/v1` authentication knows no such token). An agent reaches only
 * the runs it holds.
 */
export function agentRoutes(deps: {
  runs: { service: RunService; tokens: AgentTokens } | undefined
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  if (deps.runs === undefined) return app
  const { service, tokens } = deps.runs
  const agents = new WeakMap<Request, AgentIdentity>()

  app.use('/v1/agent/*', async (c, next) => {
    const token = tokenOf(c)
    const agent = token === undefined ? undefined : await tokens.verify(token)
    if (agent === undefined) throw refused()
    agents.set(c.req.raw, agent)
    c.set('principal', {
      subject: `agent:${agent.name}`,
      issuer: 'cairn:agents',
      groups: [],
      roles: [],
    })
    await next()
  })
  const agentOf = (c: Context<AppEnv>): AgentIdentity => agents.get(c.req.raw) as AgentIdentity

  app.post('/v1/agent/jobs', async (c) => {
    const until = performance.now() + Math.min(queryInt(c, 'wait') ?? 0, MAX_WAIT_S) * 1000
    const signal = requestSignal(c)
    // The long poll looks at its token again every few seconds: a revoked agent is refused
    // within them, not at the end of its wait.
    for (;;) {
      const left = until - performance.now()
      const job = await service.claimWithin(agentOf(c), Math.min(left, RECHECK_MS), signal)
      if (job !== undefined) return c.json({ job })
      if (performance.now() >= until || signal.aborted) return c.body(null, 204)
      if ((await tokens.verify(tokenOf(c) ?? '')) === undefined) throw refused()
    }
  })

  app.get('/v1/agent/runs/:id/config', async (c) => {
    const job = await service.job(agentOf(c), c.req.param('id'))
    const config = 'upload' in job.source ? await service.config(job.source.upload) : undefined
    if (config === undefined)
      throw new HttpError('not_found', `run ${job.id} has no uploaded configuration`)
    return c.body(new Uint8Array(config), 200, { 'Content-Type': 'application/gzip' })
  })

  app.get('/v1/agent/runs/:id/state', async (c) => {
    const body = await service.state(agentOf(c), c.req.param('id'))
    if (body === undefined) return c.body(null, 204)
    return c.body(toWebStream(body), 200, { 'Content-Type': 'application/json' })
  })

  app.post('/v1/agent/runs/:id/heartbeat', async (c) =>
    c.json(await service.heartbeat(agentOf(c), c.req.param('id'))),
  )

  app.post('/v1/agent/runs/:id/logs', async (c) => {
    const sequence = queryInt(c, 'sequence')
    if (sequence === undefined) throw new InvalidRequestError('sequence is needed')
    const text = (await readSmallBody(c, MAX_CHUNK_BYTES)).toString('utf8')
    await service.appendLog(agentOf(c), c.req.param('id'), sequence, text)
    return c.body(null, 204)
  })

  app.post('/v1/agent/runs/:id/planned', async (c) => {
    const body = await readJsonObject(c, SMALL_BODY_BYTES)
    const count = (field: string): number => {
      const value = body[field]
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
        throw new InvalidRequestError(`${field} must be a whole number`)
      }
      return value
    }
    const counts = { add: count('add'), change: count('change'), destroy: count('destroy') }
    // An agent of an earlier version sends no split: its log is then the plan's whole.
    const logChunks = body['log_chunks'] === undefined ? undefined : count('log_chunks')
    return c.json(
      await service.planned(
        agentOf(c),
        c.req.param('id'),
        counts,
        body['changes'] === true,
        logChunks,
      ),
    )
  })

  app.put('/v1/agent/runs/:id/state', async (c) => {
    const id = c.req.param('id')
    const job = await service.job(agentOf(c), id)
    noteAudit(c, { unit: job.unit })
    const version = await service.writeState(agentOf(c), id, stateStream(c))
    noteAudit(c, { version })
    return c.json({ version })
  })

  app.post('/v1/agent/runs/:id/finish', async (c) => {
    const body = await readJsonObject(c, SMALL_BODY_BYTES)
    const status = body['status']
    if (status !== 'succeeded' && status !== 'failed' && status !== 'canceled') {
      throw new InvalidRequestError('status must be succeeded, failed or canceled')
    }
    const error = body['error']
    const run = await service.finish(agentOf(c), c.req.param('id'), {
      status,
      ...(typeof error === 'string' ? { error } : {}),
      ...(body['state_diverged'] === true ? { stateDiverged: true } : {}),
    })
    return c.json(run)
  })

  return app
}
