// Rewrites scripts/test-durations.json from the output of a full `npm test` on standard input:
// the seconds each integration suite took, which vitest.config.ts starts longest first.
//   npm test 2>&1 | tee /tmp/test.log; node scripts/test-durations.mjs < /tmp/test.log
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const file = join(fileURLToPath(new URL('.', import.meta.url)), 'test-durations.json')
// vitest's line for a finished file: "✓  integration  <path> (N tests) <ms>ms", with colours.
const line = /\s+integration\s+(\S+\.test\.ts) \(.*\) (\d+)ms$/
const seconds = {}
// eslint-disable-next-line no-control-regex
for (const text of readFileSync(0, 'utf8')
  .replace(/\x1b\[[0-9;]*m/g, '')
  .split('\n')) {
  const match = line.exec(text)
  if (match !== null) seconds[match[1]] = Math.round(Number(match[2]) / 1000)
}
if (Object.keys(seconds).length === 0) {
  process.stderr.write(
    'test-durations: no integration suite found in the output; nothing written\n',
  )
  process.exit(1)
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a))
const about = JSON.parse(readFileSync(file, 'utf8')).about
writeFileSync(file, `${JSON.stringify({ about, seconds: sorted }, null, 2)}\n`)
process.stdout.write(`test-durations: ${Object.keys(sorted).length} suites written to ${file}\n`)
