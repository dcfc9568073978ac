import { jsonWithVisibleControls } from '@cairn/contract'

/** Log levels, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export type LogFields = Record<string, unknown>

/** A structured logger: one JSON object per line. */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger
}

/**
 * Writes JSON lines (`time`, `level`, `msg`, then the fields) at `level` and above. Callers pass
 * only what is safe to keep: never a token, a state body or a query string.
 *
 * No field, whoever chose its text (a path, an error's message, a client's header), can put a
 * control character on the terminal or in the tool that shows the log: JSON escapes U+0000 to
 * U+001F, and the rest (DEL, C1, the bidirectional ones) are escaped after it.
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(line),
  base: LogFields = {},
): Logger {
  const threshold = LOG_LEVELS.indexOf(level)
  const emit = (at: LogLevel, message: string, fields?: LogFields): void => {
    if (LOG_LEVELS.indexOf(at) < threshold) return
    const entry = { time: new Date().toISOString(), level: at, msg: message, ...base, ...fields }
    write(`${jsonWithVisibleControls(JSON.stringify(entry, errorsAsObjects))}\n`)
  }
  return {
    debug: (message, fields) => {
      emit('debug', message, fields)
    },
    info: (message, fields) => {
      emit('info', message, fields)
    },
    warn: (message, fields) => {
      emit('warn', message, fields)
    },
    error: (message, fields) => {
      emit('error', message, fields)
    },
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  }
}

function errorsAsObjects(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack, cause: value.cause }
  }
  return value
}
