/**
 * `@cairn/state-scan`: bytes to facts. One pass over a state body, chunk by chunk, that checks it
 * is JSON, reads the Terraform header (`version`, `serial`, `lineage`, `terraform_version`) and
 * the raw `outputs`, finds where the serial sits, and collects the resource index's entries or a
 * diff's attributes. The byte loop is WebAssembly (`wasm/json-scan.ts`); DESIGN.md explains it.
 *
 * @module
 */
export type {
  ChunkScanner,
  InlineScanner,
  ScannerSource,
  SourceScan,
  SourceScanOptions,
} from './chunk-scanner'
export { inlineScanners, scannerFor } from './chunk-scanner'
export type { IndexEntry } from './entry-format'
export { IDENTITY_ATTRIBUTES, MAX_IDENTITY_CHARS, MAX_INDEXED_INSTANCES } from './entry-format'
export type { CollectedResources, InstanceDetail } from './instance-collector'
export { compare } from './instance-collector'
export { MAX_STATE_DEPTH } from './wasm-constants'
export { StateScanError } from './scan-error'
export type {
  ClientEncryptedHeader,
  ScannedState,
  ScanOptions,
  TerraformHeader,
} from './state-scanner'
export { CLIENT_ENCRYPTED, MAX_OUTPUTS_BYTES, StateScanner } from './state-scanner'
