import { createInterface } from 'node:readline/promises'
import { CLIError, UsageError } from '../cli-error'

/** Where a question can be asked: a person at a terminal, or nobody (a script, a CI job). */
export interface Terminal {
  readonly interactive: boolean
  /** Asks on the terminal and answers the line typed; empty at end of input. */
  ask(question: string): Promise<string>
}

/** The process's own: interactive when standard input and standard error are terminals. */
const processTerminal: Terminal = {
  get interactive() {
    // Each is undefined, so falsy, where it is not a terminal.
    return process.stdin.isTTY && process.stderr.isTTY
  },
  async ask(question) {
    const lines = createInterface({ input: process.stdin, output: process.stderr })
    const ended = new Promise<string>((resolve) => {
      lines.once('close', () => {
        resolve('')
      })
    })
    try {
      return await Promise.race([lines.question(question), ended])
    } finally {
      lines.close()
    }
  },
}

let replaced: Terminal | undefined

/**
 * Asks the questions of every command from now on through `terminal`, or the process's own again
 * when it is undefined: tests answer them. `main` never calls it.
 * @internal
 */
export function askThrough(terminal: Terminal | undefined): void {
  replaced = terminal
}

/**
 * Makes sure a person wants what cannot be undone, as gh does: `--yes` says so; a terminal is
 * asked `<question> [y/N]` (anything but y or yes is no: nothing is done, exit 1); anywhere else
 * it is a usage error naming `--yes` (exit 2), so a script never deletes by accident. Called
 * before anything is sent.
 *
 * @throws UsageError without `--yes` and without a terminal; CLIError when the answer is no
 */
export async function confirm(yes: boolean | undefined, question: string): Promise<void> {
  if (yes === true) return
  const terminal = replaced ?? processTerminal
  if (!terminal.interactive) {
    throw new UsageError(
      `${question} Not done: give --yes to confirm (nobody can be asked: standard input is not a terminal)`,
    )
  }
  const answer = await terminal.ask(`${question} [y/N] `)
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CLIError('not confirmed: nothing was done')
}

/** Whether a person can be asked: the terminal the commands ask through is interactive. */
export function interactive(): boolean {
  return (replaced ?? processTerminal).interactive
}
