/**
 * Polls `probe` until it returns something other than undefined or false, or fails after
 * `timeoutMs` saying what it waited for. For conditions nothing notifies about, such as a line in a
 * process's log: the one way a suite waits, never a sleep and a hope.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 10_000,
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
