import { bytes } from './output'

/** Transfers smaller than this show no progress. */
const SHOW_ABOVE = 4 * 1024 * 1024

/**
 * Counts bytes passing through a stream and, when stderr is a terminal and the transfer is large,
 * draws a progress line there. It never writes to stdout, and nothing when stderr is redirected.
 */
export function withProgress(
  label: string,
  total: number | undefined,
  stream: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  if (!process.stderr.isTTY || (total !== undefined && total < SHOW_ABOVE)) return stream
  let done = 0
  let drawn = 0
  const draw = (final: boolean): void => {
    const now = Date.now()
    if (!final && now - drawn < 100) return
    drawn = now
    const part =
      total === undefined
        ? bytes(done)
        : `${bytes(done)} / ${bytes(total)}  ${Math.floor((done / total) * 100)}%`
    process.stderr.write(`\r${label}  ${part}\u001b[K${final ? '\n' : ''}`)
  }
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        done += chunk.byteLength
        draw(false)
        controller.enqueue(chunk)
      },
      flush() {
        draw(true)
      },
    }),
  )
}
