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
 * staged uploads, and the loading of the search index.
 */
export function startBackgroundWork(options: {
  config: Config
  services: Services
  webhookTargets: WebhookTargets
  metrics: ServerMetrics
  log: Logger
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
  return {
    stop: async () => {
      await deliveries.stop()
      await sweeper.stop()
    },
  }
}
