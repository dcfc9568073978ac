import type { Config } from '../config/config'

/** What the app enforces of the server's limits, per request. */
export function requestLimits(config: Config) {
  const { limits } = config
  return {
    smallBodyTimeoutMs: limits.smallBodyTimeoutMs,
    minUploadRate:
      limits.uploadMinRate === 0
        ? undefined
        : { bytesPerSecond: limits.uploadMinRate, windowMs: limits.uploadRateWindowMs },
    maxUploads: limits.maxUploads,
    maxUploadsPerPrincipal: limits.maxUploadsPerPrincipal,
    maxHeavyReads: limits.maxHeavyReads,
    maxHeavyReadsPerPrincipal: limits.maxHeavyReadsPerPrincipal,
  }
}
