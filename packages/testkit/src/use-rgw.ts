import { afterAll, beforeAll } from 'vitest'

import { startRgw, type RunningRgw, type StartRgwOptions } from './rgw'
import { sharedRgw } from './shared-rgw'

export interface UseRgwOptions extends StartRgwOptions {
  /**
   * Use the run's one shared cluster (the integration tier starts it at the first ask) rather than
   * a new one: for suites that use buckets of their own and never pause the gateways. Other
   * options are then ignored; without a shared cluster in the run, the suite starts its own.
   */
  shared?: boolean
}

/** Long enough for a first run that installs Ceph with apt-get (about 40 s) and starts it. */
const START_HOOK_TIMEOUT_MS = 10 * 60_000
const STOP_HOOK_TIMEOUT_MS = 60_000

/**
 * A throwaway Ceph RGW cluster for the current suite (`describe` block or file): started with
 * `startRgw` in `beforeAll` and stopped in `afterAll`, even when a test fails; or, with `shared`,
 * the run's shared cluster, which the run stops. The handle's fields
 * are those of the running cluster; read before its start or after its stop, they throw.
 */
export function useRgw(options: UseRgwOptions = {}): RunningRgw {
  const { shared = false, ...startOptions } = options
  let running: RunningRgw | undefined

  const current = () => {
    if (running === undefined) {
      throw new Error(
        'useRgw: no RGW is running; read its handle in a test or in a hook after its start',
      )
    }
    return running
  }

  beforeAll(async () => {
    running = (shared ? await sharedRgw() : undefined) ?? (await startRgw(startOptions))
  }, START_HOOK_TIMEOUT_MS)
  afterAll(async () => {
    const stopping = running
    running = undefined
    await stopping?.stop()
  }, STOP_HOOK_TIMEOUT_MS)

  return {
    get endpoints() {
      return current().endpoints
    },
    get endpoint() {
      return current().endpoint
    },
    get region() {
      return current().region
    },
    get accessKeyId() {
      return current().accessKeyId
    },
    get secretAccessKey() {
      return current().secretAccessKey
    },
    get dir() {
      return current().dir
    },
    get pids() {
      return current().pids
    },
    get gatewayPids() {
      return current().gatewayPids
    },
    pause: () => {
      current().pause()
    },
    resume: () => {
      current().resume()
    },
    createBucket: (name) => current().createBucket(name),
    perf: (gatewayIndex) => current().perf(gatewayIndex),
    stop: async () => {
      const stopping = running
      running = undefined
      await stopping?.stop()
    },
  }
}
