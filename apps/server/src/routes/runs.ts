import { demand, InvalidRequestError, parseUnitId, type Core } from '@cairn/core'
import type { AgentTokens, RunService } from '@cairn/runs'
import { Hono } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, readSmallBody, SMALL_BODY_BYTES } from '../http/body'
import { queryFlag, queryInt, queryText } from '../http/query'
import { requestSignal } from '../http/request-signal'

export interface RunRoutesDeps {
  core: Core
  runs: { service: RunService; tokens: AgentTokens } | undefined
}

/** How long `follow` waits between looks at a run's log. */
const FOLLOW_POLL_MS = 250
/** The longest one `follow` answer streams before it ends and the client asks again. */
const FOLLOW_MAX_MS = 10 * 60_000

/**
 * `/v1/runs` (DESIGN section 14, docs/runs.md): upload a configuration, submit a run, read it and
 * its log, confirm a planned apply, cancel; and `/v1/agents/tokens`, where administrators make and
 * revoke the agents' tokens. Present only when runs are on.
 */
export function runRoutes(deps: RunRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const runs = deps.runs
  if (runs === undefined) return app
  const { service, tokens } = runs
  const { core } = deps

  app.post('/v1/runs/uploads', async (c) => {
    const body = await readSmallBody(c, service.maxConfigBytes)
    return c.json(await service.uploadConfig(body), 201)
  })

  // A unit's run settings: where the `cloud` block's runs of it happen.
  app.get('/v1/runs/settings', async (c) => {
    const unit = parseUnitId(queryText(c, 'unit') ?? '')
    await demand(core.authorizer, c.var.principal, 'unit:read', unit)
    return c.json({ unit, execution_mode: await service.workspaces.executionMode(unit) })
  })

  app.put('/v1/runs/settings', async (c) => {
    const body = await readJsonObject(c, SMALL_BODY_BYTES)
    const unit = parseUnitId(typeof body['unit'] === 'string' ? body['unit'] : '')
    noteAudit(c, { unit })
    const mode = body['execution_mode']
    if (typeof mode !== 'string') {
      throw new InvalidRequestError('execution_mode must be local, remote or agent')
    }
    await service.workspaces.setExecutionMode(c.var.principal, unit, mode)
    return c.json({ unit, execution_mode: await service.workspaces.executionMode(unit) })
  })

  app.post('/v1/runs', async (c) => {
    const run = await service.submit(c.var.principal, await readJsonObject(c, SMALL_BODY_BYTES))
    noteAudit(c, { unit: run.unit, detail: { run_id: run.id, operation: run.operation } })
    return c.json(run, 201)
  })

  app.get('/v1/runs', async (c) => {
    const limit = queryInt(c, 'limit')
    const unit = queryText(c, 'unit')
    const status = queryText(c, 'status')
    const cursor = queryText(c, 'cursor')
    return c.json(
      await service.list(c.var.principal, {
        ...(limit === undefined ? {} : { limit }),
        ...(unit === undefined ? {} : { unit }),
        ...(status === undefined ? {} : { status }),
        ...(cursor === undefined ? {} : { cursor }),
      }),
    )
  })

  app.get('/v1/runs/:id', async (c) =>
    c.json(await service.get(c.var.principal, c.req.param('id'))),
  )

  app.delete('/v1/runs/:id', async (c) => {
    const run = await service.cancel(c.var.principal, c.req.param('id'), {
      force: queryFlag(c, 'force'),
    })
    noteAudit(c, { unit: run.unit })
    return c.json(run)
  })

  app.post('/v1/runs/:id/apply', async (c) => {
    const run = await service.confirm(c.var.principal, c.req.param('id'))
    noteAudit(c, { unit: run.unit })
    return c.json(run)
  })

  app.get('/v1/runs/:id/logs', async (c) => {
    const id = c.req.param('id')
    const offset = queryInt(c, 'offset') ?? 0
    if (offset < 0) throw new InvalidRequestError('offset must be 0 or more')
    const principal = c.var.principal
    const first = await service.readLog(principal, id, offset)
    c.header('X-Log-Offset', String(first.next))
    if (!queryFlag(c, 'follow')) {
      c.header('X-Run-Ended', String(first.ended))
      return c.body(new Uint8Array(first.bytes), 200, {
        'Content-Type': 'text/plain; charset=utf-8',
      })
    }
    // Follows the log until the run ends: each new piece as it is stored.
    const signal = requestSignal(c)
    // The record is read before the log each time: once it says the run ended, the log read
    // after it holds everything the run wrote.
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        let read = first
        const until = Date.now() + FOLLOW_MAX_MS
        try {
          for (;;) {
            if (read.bytes.length > 0) controller.enqueue(read.bytes)
            if (read.ended || signal.aborted || Date.now() > until) break
            await new Promise((done) => setTimeout(done, FOLLOW_POLL_MS))
            read = await service.readLog(principal, id, read.next)
          }
          controller.close()
        } catch (error) {
          controller.error(error)
        }
      },
    })
    return c.body(stream, 200, { 'Content-Type': 'text/plain; charset=utf-8' })
  })

  app.post('/v1/agents/tokens', async (c) => {
    const body = await readJsonObject(c, SMALL_BODY_BYTES)
    const created = await tokens.create(c.var.principal, body['name'])
    noteAudit(c, { detail: { token_id: created.id, name: created.name } })
    return c.json(created, 201)
  })

  app.get('/v1/agents/tokens', async (c) => c.json({ tokens: await tokens.list(c.var.principal) }))

  app.delete('/v1/agents/tokens/:id', async (c) => {
    await tokens.revoke(c.var.principal, c.req.param('id'))
    return c.body(null, 204)
  })

  return app
}
