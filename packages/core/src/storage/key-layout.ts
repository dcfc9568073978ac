/**
 * Every key in the object store, by the prefix it lives under and the package that owns it: the
 * one place to look before adding a kind of record. Each owner writes only under its own prefixes,
 * so drivers, backups and a person with `ls` can tell what any object is. `docs/storage.md` shows
 * the same layout on disk.
 *
 * | prefix                   | owner                     | what                                              |
 * | ------------------------ | ------------------------- | ------------------------------------------------- |
 * | `layout.json`            | core, storage             | which layout the store is in (see layout-upgrade) |
 * | `unit-records/`          | core, units               | unit records: lock, current version, tags, edges  |
 * | `units/`                 | core, units               | states, versions, history; the state index's      |
 * |                          | (state-index)             | `indexes/` beside each epoch's `states/`          |
 * | `consumers/`             | core, dependency graph    | who consumes each unit: an empty object per edge  |
 * | `graph-changes/`         | core, dependency graph    | units each instance changed, for the other ones   |
 * | `snapshots/`             | core, units               | every unit record at once, for a cold instance    |
 * | `auth/api-tokens/`       | auth                      | API token records (hashes, never the tokens)      |
 * | `auth/refresh-families/` | auth                      | refresh-token families, one per login             |
 * | `auth/used-codes/`       | auth                      | spent authorization codes, until they expire      |
 * | `auth/local-admin.json`  | server, local mode        | which token `admin.token` holds                   |
 * | `tfe/state-versions/`    | tfe-adapter               | state versions waiting for their upload (staged)  |
 * | `s3/multipart-uploads/`  | server, S3 surface        | multipart uploads and their parts (staged)        |
 * | `rbac/policy.json`       | rbac                      | custom roles and every assignment                 |
 * | `rbac/users/`            | rbac                      | users seen at login, one record each              |
 * | `ops/freezes.json`       | core, freezes             | freezes: prefixes no lock or write may touch      |
 * | `ops/sweeps/`            | core, uploads             | who sweeps each staged folder, and until when     |
 * | `audit/`                 | audit                     | the audit trail: records by day, as appended      |
 * | `webhooks/hooks.json`    | webhooks                  | webhook subscriptions, with their secrets         |
 * | `webhooks/queue/`        | webhooks                  | deliveries to make, per subscription and event   |
 * | `webhooks/done/`         | webhooks                  | deliveries finished, newest first, kept 7 days    |
 * | `search/changes/`        | state-index, search       | units changed, for every instance's search index  |
 * | `runs/`                  | runs                      | runs, their logs and configurations; agent tokens |
 * | `encryption/`            | encryption                | a canary per key-encryption key that encrypted    |
 * | `auth/trust-policies/`   | ci-identity               | trust policies for CI jobs' tokens, one each      |
 *
 * A folder marked "staged" is kept through core's `StagedUploads` (`uploads/staged-uploads.ts`):
 * `<id>.json` per upload, and the upload's own objects, if its owner has any (an S3 multipart
 * upload's parts), under `<id>/` beside it; all swept together, on a timer, once past the owner's
 * time to live and a grace (`uploads/staged-sweeper.ts`, which keeps its leases in `ops/sweeps/`).
 */
export const STORE_KEYS = {
  layout: 'layout.json',
  unitRecords: 'unit-records/',
  units: 'units/',
  consumers: 'consumers/',
  graphChanges: 'graph-changes/',
  recordsSnapshot: 'snapshots/unit-records.json',
  apiTokens: 'auth/api-tokens/',
  refreshFamilies: 'auth/refresh-families/',
  usedCodes: 'auth/used-codes/',
  localAdmin: 'auth/local-admin.json',
  pendingStateVersions: 'tfe/state-versions/',
  s3MultipartUploads: 's3/multipart-uploads/',
  rbacPolicy: 'rbac/policy.json',
  rbacUsers: 'rbac/users/',
  freezes: 'ops/freezes.json',
  sweepLeases: 'ops/sweeps/',
  audit: 'audit/',
  webhooks: 'webhooks/hooks.json',
  webhookQueue: 'webhooks/queue/',
  webhookDone: 'webhooks/done/',
  searchChanges: 'search/changes/',
  runs: 'runs/',
  encryption: 'encryption/',
  trustPolicies: 'auth/trust-policies/',
} as const

/** Keys of layout 1 that layout 2 no longer writes: read once by the upgrade, then deleted. */
export const LEGACY_KEYS = {
  graph: 'graph/graph.json',
  graphPending: 'graph/pending/',
} as const
