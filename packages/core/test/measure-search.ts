/**
 * Measures the search index at 10,000 units of 200 instances: heap held, and the latency of each
 * kind of query. Not a test (it takes a minute and half a gigabyte); run it by hand:
 *
 *   esbuild packages/core/test/measure-search.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/measure-search.mjs && node --expose-gc /tmp/measure-search.mjs
 */
import { SearchIndex, type SearchQuery } from '../src/resources/search-index'
import { syntheticIndex } from '../src/resources/search-test-fixtures'

const UNITS = 10_000
const PER_UNIT = 200

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const unitId = (u: number) => `team${u % 40}/env${u % 3}/stack-${String(u).padStart(5, '0')}`

gc()
const before = process.memoryUsage().heapUsed
const index = new SearchIndex()
const started = performance.now()
for (let u = 0; u < UNITS; u += 1)
  index.put(unitId(u), `2026-01-01T00:00:00.${u}Z`, syntheticIndex(u, PER_UNIT))
const built = performance.now() - started
gc()
const after = process.memoryUsage().heapUsed
console.log(`${index.stats().instances} instances in ${index.stats().units} units`)
console.log(
  `built in ${(built / 1000).toFixed(1)} s; heap ${mb(before)} -> ${mb(after)} (+${mb(after - before)})`,
)

const probe = syntheticIndex(5000, PER_UNIT).resources
const id = probe[17]?.identity['id'] ?? ''
const arn = probe[18]?.identity['arn'] ?? ''
const canRead = () => true
const canReadAsync = () => Promise.resolve(true)
const deep = await index.search({
  type: 'aws_subnet',
  limit: 1,
  cursor: undefined,
  canRead,
  unitPrefix: unitId(9000),
})

const cases: [string, Omit<SearchQuery, 'canRead'> & { canRead?: SearchQuery['canRead'] }][] = [
  ['exact id (1 hit, every unit probed)', { q: id, limit: 100 }],
  ['exact arn (1 hit)', { q: arn, limit: 100 }],
  ['exact id, async canRead', { q: id, limit: 100, canRead: canReadAsync }],
  ['miss (no hit anywhere)', { q: 'no-such-thing', limit: 100 }],
  ['address prefix, limit 100', { q: 'module.app["svc4"].aws_subnet', limit: 100 }],
  ['address prefix matching no unit', { q: 'module.app["svc4"].aws_vpc', limit: 100 }],
  ['address prefix, short, partial word', { q: 'module.ap', limit: 100 }],
  [
    'exact address in every unit, limit 100',
    { q: 'module.app["svc0"].aws_instance.main[0]', limit: 100 },
  ],
  ['type=aws_lambda_function, limit 100', { type: 'aws_lambda_function', limit: 100 }],
  ['q=type, limit 100', { q: 'aws_lambda_function', limit: 100 }],
  [
    'type + unit_prefix team7/, limit 100',
    { type: 'aws_iam_role', unitPrefix: 'team7/', limit: 100 },
  ],
  [
    'type, limit 100, cursor near the end',
    { type: 'aws_subnet', limit: 100, cursor: deep.nextCursor ?? undefined },
  ],
  ['type + rare q (id of one aws_s3_bucket)', { q: id, type: 'aws_s3_bucket', limit: 100 }],
]

for (const [name, query] of cases) {
  const times: number[] = []
  let hits = 0
  for (let run = 0; run < 220; run += 1) {
    const t = performance.now()
    const page = await index.search({ canRead, ...query })
    if (run >= 20) times.push(performance.now() - t)
    hits = page.results.length
  }
  times.sort((a, b) => a - b)
  const at = (p: number) => (times[Math.floor(times.length * p)] ?? 0).toFixed(2)
  console.log(
    `${name.padEnd(42)} hits ${String(hits).padStart(3)}  median ${at(0.5)} ms  p99 ${at(0.99)} ms`,
  )
}
