import type { RunEvent } from '@cairn/runs'
import type { ServerMetrics } from '../metrics/server-metrics'

/** Counts a run's end in the metrics: by status, with how long it waited and ran. */
export function countRun(metrics: ServerMetrics, event: RunEvent): void {
  const { run } = event
  if (event.type !== 'run.completed' && event.type !== 'run.canceled') return
  metrics.runsEnded.inc({ operation: run.operation, status: run.status })
  const created = Date.parse(run.created)
  const started = run.started === null ? undefined : Date.parse(run.started)
  const finished = run.finished === null ? undefined : Date.parse(run.finished)
  if (started !== undefined) {
    metrics.runQueueWait.observe({ operation: run.operation }, (started - created) / 1000)
    if (finished !== undefined) {
      metrics.runDuration.observe(
        { operation: run.operation, status: run.status },
        (finished - started) / 1000,
      )
    }
  }
}
