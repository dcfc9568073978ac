/**
 * A failure a bench reports in one line, with exit status 1: a request answered with another
 * status than expected, other bytes back than were sent, a server that died. Anything else that
 * escapes a bench is a bug of the bench, reported with its stack.
 */
export class BenchError extends Error {
  readonly code = 'bench_failed' as const

  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'BenchError'
  }
}
