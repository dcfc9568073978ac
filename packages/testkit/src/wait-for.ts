/**
 * Polls `probe` until it returns (or resolves to) something other than undefined or false, or fails
 * after `timeoutMs` saying what it waited for. For conditions nothing notifies about, such as a line in a process's log or an answer of the server
 * that changes with time: the one way a suite waits, never a sleep and a hope. An async probe is
 * awaited before the next one starts; one that throws ends the wait with its error.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
