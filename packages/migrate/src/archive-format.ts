import { VersionSchema } from '@cairn/contract'
import * as v from 'valibot'

/**
 * The export archive (docs/export-format.md): a POSIX tar of
 *
 *     manifest.json                         the format, when, from where, and every unit's ID
 *     units/<unit>/unit.json                the unit: created, tags, dependencies
 *     units/<unit>/versions.ndjson          its versions, oldest first, one JSON object a line
 *     units/<unit>/versions/<n>.tfstate     the bytes of version n (1 the oldest), as stored
 *
 * in that order, unit after unit as the manifest lists them.
 */
export const EXPORT_FORMAT = 'cairn-export'
export const EXPORT_FORMAT_VERSION = 1

export const ManifestSchema = v.object({
  format: v.literal(EXPORT_FORMAT),
  format_version: v.number(),
  exported_at: v.string(),
  /** The server exported, as the exporter reached it; null when not known. */
  server: v.nullable(v.string()),
  /** The unit prefix the export was limited to ('' for all). */
  prefix: v.string(),
  units: v.array(v.string()),
})
export type Manifest = v.InferOutput<typeof ManifestSchema>

export const UnitFileSchema = v.object({
  id: v.string(),
  created: v.string(),
  tags: v.array(v.string()),
  dependencies: v.array(v.object({ from: v.string(), output: v.optional(v.string()) })),
})
export type UnitFile = v.InferOutput<typeof UnitFileSchema>

export const VersionLineSchema = v.object({
  ...VersionSchema.entries,
  /** The archive entry holding the bytes. */
  file: v.string(),
  /** Any surface's name: an archive from a newer server may name one this reader does not know. */
  source: v.string(),
})
export type VersionLine = v.InferOutput<typeof VersionLineSchema>

export function unitFolder(unit: string): string {
  return `units/${unit}`
}

export function versionFile(unit: string, index: number): string {
  return `${unitFolder(unit)}/versions/${String(index).padStart(6, '0')}.tfstate`
}
