/** A line of progress on stderr: the report alone goes to stdout. */
export function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`)
}
