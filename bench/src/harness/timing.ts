/** Timing helpers: one call, and rounds of several jobs in turn. */

/** How long `job` took, in milliseconds. */
export async function timed(job: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await job()
  return performance.now() - started
}

export interface AlternateOptions<K extends string> {
  readonly rounds: number
  /** Rounds run first and not counted: fresh processes and sockets are slower at first. */
  readonly warmUp?: number
  /** Reverse the order of the jobs every other round, so no job always goes first. */
  readonly swap?: boolean
  readonly jobs: Readonly<Record<K, (round: number) => Promise<unknown>>>
}

/**
 * `rounds` rounds of every job in turn (A B A B), so that whatever the machine does meanwhile falls
 * on all of them: each job's times in milliseconds, by the job's key. Warm-up rounds are numbered
 * below 0.
 */
export async function alternate<K extends string>(
  options: AlternateOptions<K>,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(options.jobs) as K[]
  const times = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>
  const warmUp = options.warmUp ?? 0
  for (let round = -warmUp; round < options.rounds; round += 1) {
    const order = options.swap === true && round % 2 !== 0 ? [...keys].reverse() : keys
    for (const key of order) {
      const ms = await timed(() => options.jobs[key](round))
      if (round >= 0) times[key].push(ms)
    }
  }
  return times
}
