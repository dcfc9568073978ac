// What indexing each state's resources as it streams in costs an upload and the server's scan
// thread (against the same server with -resource-index=false and a bare node:http server in the
// same run), and how fast the index answers: the diff of two large versions and search across many
// units, all through the built server's /v1 API. See bench/README.md.
import { defineBench } from '../../harness/bench-definition'
import type { Figure } from '../../harness/report'
import type { Table } from '../../harness/table'
import { stateFile } from '../../transfer/state-file'
import { diffFigures, diffTables, runDiff } from './diff'
import { runScan, scanFigures, scanTable } from './scan'
import { runSearch, searchFigures, searchTables } from './search'
import { flags } from './shared'
import { runUpload, uploadFigures, uploadTables } from './upload'
import type { UploadResult } from './upload'

export const resourceIndex = defineBench({
  name: 'resource-index',
  script: 'bench:index',
  summary:
    "What the resource index costs an upload (against -resource-index=false and a bare node:http server in the same run) and the server's scan thread, and how fast the index answers: the diff of two large versions, and search across many units, also after a restart.",
  flags,
  quick: {
    'size-mib': 5,
    'small-mib': 0,
    rounds: 2,
    warmup: 1,
    'diff-rounds': 2,
    units: 50,
    instances: 80,
    queries: 5,
  },
  inAll: true,
  check: (values) =>
    values['small-mib'] >= values['size-mib']
      ? '--small-mib must be below --size-mib (or 0 to skip it)'
      : undefined,
  run: async (values) => {
    const parts = new Set(values.parts)
    const tables: Table[] = []
    const figures: Figure[] = []
    const sizes =
      values['small-mib'] > 0 ? [values['small-mib'], values['size-mib']] : [values['size-mib']]
    if (parts.has('upload')) {
      const results: UploadResult[] = []
      for (const size of sizes) results.push(await runUpload(await stateFile(size), values))
      tables.push(...uploadTables(results))
      figures.push(...uploadFigures(results))
    }
    if (parts.has('scan')) {
      const result = await runScan(await stateFile(values['size-mib']), values)
      tables.push(scanTable(result))
      figures.push(...scanFigures(result))
    }
    if (parts.has('diff')) {
      const result = await runDiff(await stateFile(values['size-mib']), values)
      tables.push(...diffTables(result))
      figures.push(...diffFigures(result))
    }
    if (parts.has('search')) {
      const result = await runSearch(values)
      tables.push(...searchTables(result))
      figures.push(...searchFigures(result))
    }
    return {
      title: 'Cairn resource index benchmark: upload cost, scan thread, diff and search',
      facts: ['fs store, authentication off'],
      tables,
      notes: [],
      figures,
    }
  },
})
