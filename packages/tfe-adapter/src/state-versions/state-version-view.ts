import type { UnitId } from '@cairn/core'
import type { Version } from '@cairn/contract'
import type { Context } from 'hono'
import { workspaceId } from '../ids'
import { document, timestamp, type Resource } from '../jsonapi/document'
import type { TfeDeps, TfeEnv } from '../tfe-env'

/**
 * How often Terraform may write intermediate snapshots during a long apply (seconds): the
 * `X-Terraform-Snapshot-Interval` header (terraform-wire.md A3).
 */
const SNAPSHOT_INTERVAL_SECONDS = 300

/** A state version as go-tfe reads it, with a link to the bytes and, while pending, the uploads. */
export interface StateVersionView {
  id: string
  unit: UnitId
  version: Version | null
  created: string
  declared?: { serial: number; lineage: string; md5: string }
  uploads?: { state: string; json: string }
  outputsOnly?: OutputsOnly
}

/**
 * For a caller with `unit:outputs` but not `unit:read`: what its download serves in place of the
 * state (core's outputs-only view), with that body's own MD5.
 */
export interface OutputsOnly {
  body: Uint8Array<ArrayBuffer>
  md5: string
}

/** Answers one state version, with the snapshot interval Terraform reads from its header. */
export function showStateVersion(
  c: Context<TfeEnv>,
  deps: TfeDeps,
  view: StateVersionView,
  status: 200 | 201 = 200,
): Response {
  c.header('X-Terraform-Snapshot-Interval', String(SNAPSHOT_INTERVAL_SECONDS))
  return document(c, { data: stateVersionResource(deps.baseUrl(c.req.raw), view) }, status)
}

/** A state version as a JSON:API resource: pending until its state is uploaded, then finalized. */
export function stateVersionResource(base: string, view: StateVersionView): Resource {
  const { version, declared, outputsOnly } = view
  return {
    id: view.id,
    type: 'state-versions',
    attributes: {
      'created-at': timestamp(view.created),
      status: version === null ? 'pending' : 'finalized',
      serial: version?.serial ?? declared?.serial ?? null,
      lineage: version?.lineage ?? declared?.lineage ?? null,
      md5: outputsOnly?.md5 ?? version?.md5 ?? declared?.md5 ?? null,
      size: outputsOnly?.body.byteLength ?? version?.size ?? 0,
      'state-version': 4,
      'resources-processed': version !== null,
      'vcs-commit-sha': null,
      'vcs-commit-url': null,
      'hosted-state-download-url':
        version === null ? null : `${base}/tfe/api/v2/state-versions/${view.id}/download`,
      'hosted-json-state-download-url': null,
      ...(view.uploads === undefined
        ? {}
        : {
            'hosted-state-upload-url': view.uploads.state,
            'hosted-json-state-upload-url': view.uploads.json,
          }),
    },
    relationships: { workspace: { data: { id: workspaceId(view.unit), type: 'workspaces' } } },
    links: { self: `/tfe/api/v2/state-versions/${view.id}` },
  }
}
