export type { MigrationSource, SourceUnit, SourceVersion, UnitMetadata } from './source'
export { SourceError } from './source'
export { Mapping, MappingError } from './mapping'
export type { MappingRule } from './mapping'
export { importSource, MappingConflictError, gapsOf } from './importer'
export type { ImportOptions, ImportProgress, ImportSummary, UnitReport } from './importer'
export { clientSource, exportArchive, exportToS3, keyOfUnit } from './exporter'
export type { ExportOptions, ExportSource, S3ExportReport } from './exporter'
export { sourceOf, SourceUrlError, terraformTokenVariable } from './source-url'
export type { SourceSettings } from './source-url'
export { ArchiveSource } from './sources/archive'
export { DirectorySource } from './sources/directory'
export { GitlabSource } from './sources/gitlab'
export { S3Source, unitOfKey } from './sources/s3'
export type { S3Location } from './sources/s3'
export { TfeSource } from './sources/tfe'
export {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  ManifestSchema,
  UnitFileSchema,
  VersionLineSchema,
} from './archive-format'
export type { Manifest, UnitFile, VersionLine } from './archive-format'
export { tarEntries } from './tar'
export type { TarEntry } from './tar'
