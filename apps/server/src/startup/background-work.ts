import { tmpdir } from 'node:os'
import { Agent, LocalAgentApi } from '@cairn/runs'
import type { AuthService } from '@cairn/auth'
import type { WebhookTargets } from '@cairn/webhooks'
import type { Config } from '../config/config'
import type { Logger } from '../log/logger'
import type { ServerMetrics } from '../metrics/server-metrics'
import type { Services } from '../services'
import { createHttpSender } from '../webhooks/http-sender'

/** How long past `-request-timeout` an expired upload is kept: clocks of instances differ. */
const SWEEP_GRACE_MS = 10 * 60_000

/** What runs beside the requests, once the app answers; stopped when the server stops. */
export interface BackgroundWork {
  stop(): Promise<void>
}

/**
 * Starts what runs beside the requests: the webhook delivery worker, the sweeper of expired
 * staged uploads, the loading of the search index, and with runs on their reconciler and the
 * local agent.
 */
export function startBackgroundWork(options: {
  config: Config
  services: Services
  webhookTargets: WebhookTargets
  metrics: ServerMetrics
  log: Logger
  /** Identity, when authentication is on: its CI jobs' expired tokens are swept. */
  auth?: AuthService | undefined
}): BackgroundWork {
  const { config, services, webhookTargets, metrics, log } = options
  const deliveries = services.webhooks.worker({
    send: createHttpSender({ targets: webhookTargets }),
    onOutcome: (event, outcome) => {
      metrics.webhookDeliveries.inc({ event, outcome })
    },
    // The subscription's URL may carry credentials: the log names the subscription instead. The
    // failure's detail (ECONNREFUSED, the address refused) is here and nowhere else.
    onFailure: (failure) => {
      log.warn('a webhook delivery failed', { ...failure })
    },
    onError: (error) => {
      log.warn('the webhook delivery worker could not read its queue; retrying', { error })
    },
  })
  deliveries.start()
  // Expired staged uploads (S3 multipart uploads and their parts, TFE's pending state versions)
  // are deleted on a timer, on one instance at a time; kept past their lifetime for as long as a
  // request begun within it may still run, and some minutes for the instances' clocks.
  const sweeper = services.core.stagedSweeper({
    graceMs: config.limits.requestTimeoutMs + SWEEP_GRACE_MS,
    onError: (error) => {
      log.warn('a sweep of expired uploads failed; the next one tries again', { error })
    },
  })
  sweeper.start()
  // Searches answer from memory: load the index now rather than on the first one.
  services.resources.warm((error) => {
    log.warn('the search index could not be loaded; the first search tries again', { error })
  })
  const runs = startRuns(options)
  const ciTokens = sweepCiTokens(options.auth, log)
  return {
    stop: async () => {
      ciTokens.stop()
      await runs.stop()
      await deliveries.stop()
      await sweeper.stop()
    },
  }
}

/** How often the API tokens of CI jobs that expired are swept. */
const CI_TOKEN_SWEEP_MS = 3_600_000

/**
 * Every hour, on every instance (each delete is conditional, so instances sweeping at once do no
 * harm), the tokens CI jobs were given that expired are deleted: one per job, they would pile up.
 */
function sweepCiTokens(auth: AuthService | undefined, log: Logger): { stop(): void } {
  if (auth === undefined) return { stop: () => undefined }
  let sweeping: Promise<void> | undefined
  const sweep = () => {
    sweeping ??= auth
      .sweepExpiredCiTokens()
      .then((removed) => {
        if (removed > 0) log.info('expired CI job tokens swept', { removed })
      })
      .catch((error: unknown) => {
        log.warn('a sweep of expired CI job tokens failed; the next one tries again', { error })
      })
      .finally(() => {
        sweeping = undefined
      })
  }
  const timer = setInterval(sweep, CI_TOKEN_SWEEP_MS)
  timer.unref()
  return {
    stop: () => {
      clearInterval(timer)
    },
  }
}

/** An agent inside the server has this name, which no agent token can have (they take no `:`). */
const LOCAL_AGENT = 'local:server'

/**
 * With runs on: the reconciler, on every instance (each change it makes is a conditional write),
 * and the local agent when asked for.
 */
function startRuns(options: { config: Config; services: Services; log: Logger }): BackgroundWork {
  const { config, services, log } = options
  const runs = services.runs
  if (runs === undefined || config.runs === undefined) return { stop: () => Promise.resolve() }
  const every = Math.max(1000, Math.floor(config.runs.heartbeatTimeoutMs / 4))
  let reconciling: Promise<void> | undefined
  const timer = setInterval(() => {
    // One at a time: on a slow bucket a reconcile may outlast the interval.
    reconciling ??= runs.service
      .reconcile()
      .catch((error: unknown) => {
        log.warn('the runs reconciler failed; it tries again', { error })
      })
      .finally(() => {
        reconciling = undefined
      })
  }, every)
  timer.unref()
  let agent: Agent | undefined
  if (config.runs.localAgent) {
    agent = new Agent({
      api: new LocalAgentApi(runs.service, { tokenId: LOCAL_AGENT, name: LOCAL_AGENT }),
      name: LOCAL_AGENT,
      terraform: process.env['TERRAFORM_BIN'] ?? 'terraform',
      workRoot: tmpdir(),
      path: process.env['PATH'] ?? '',
      onError: (error) => {
        log.warn('the local agent could not reach the runs', { error })
      },
      onRun: ({ run, outcome }) => {
        log.info(outcome === undefined ? 'run started' : 'run ended', {
          run: run.id,
          unit: run.unit,
          operation: run.operation,
          ...(outcome === undefined ? {} : { status: outcome }),
        })
      },
    })
    agent.start()
    log.warn('the local agent runs configurations on this host (-runs-local-agent)')
  }
  return {
    stop: async () => {
      clearInterval(timer)
      await agent?.stop()
      await reconciling
    },
  }
}
