/** Exit codes (DESIGN section 12): 0 success, 1 failure, 2 bad usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const

/**
 * A failure shown to the user as one message, without a stack trace: it says what went wrong and,
 * where it can, what to run instead.
 */
export class CLIError extends Error {
  readonly exitCode: number

  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message)
    this.name = 'CLIError'
    this.exitCode = exitCode
  }
}

/** The command line itself is wrong: an unknown flag, a missing argument. Exit code 2. */
export class UsageError extends CLIError {
  constructor(message: string) {
    super(message, EXIT.usage)
    this.name = 'UsageError'
  }
}

/**
 * The answer to a yes-or-no command is no (`cairn rbac check`): exit 1, so scripts can branch on
 * it. The command has already said so on stdout, so nothing more is printed.
 */
export class NegativeAnswer extends CLIError {
  constructor(message: string) {
    super(message, EXIT.failure)
    this.name = 'NegativeAnswer'
  }
}
