/** Stops the process at start with one line on stderr. */
export function refuse(message: string): never {
  process.stderr.write(`cairn: ${message}\n`)
  process.exit(2)
}

/** An error's first line, for a refusal of one line. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return text.split('\n')[0] ?? text
}
