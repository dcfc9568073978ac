import { STORE_KEYS } from '@cairn/core'

/**
 * Where runs keep what they keep, under core's `runs/`:
 *
 * | key                                   | what                                                  |
 * | ------------------------------------- | ----------------------------------------------------- |
 * | `runs/records/<run>.json`             | the run                                               |
 * | `runs/active/<run>`                   | an empty object per run that has not ended: the queue |
 * | `runs/units/<unit>/<newest>_<run>`    | an empty object per run of a unit, for its listing    |
 * | `runs/all/<newest>_<run>`             | an empty object per run, for the listing of all       |
 * | `runs/logs/<run>/<sequence>`          | the run's log, in chunks as the agent sent them       |
 * | `runs/configs/<upload>.tar.gz`        | configurations uploaded for runs                      |
 * | `runs/config-versions/<id>.json`      | the `cloud` block's configuration versions            |
 * | `runs/settings/<unit>.json`           | a unit's execution mode, when not `local`             |
 * | `runs/agent-tokens/<id>.json`         | agent tokens (their hashes, never the tokens)         |
 *
 * Run IDs begin with the time they were made, so a listing of `active/` is the order runs came in;
 * `<newest>` is the time inverted, so the listings of a unit's runs and of all begin with the newest.
 */
export const RUN_KEYS = {
  records: `${STORE_KEYS.runs}records/`,
  active: `${STORE_KEYS.runs}active/`,
  units: `${STORE_KEYS.runs}units/`,
  all: `${STORE_KEYS.runs}all/`,
  logs: `${STORE_KEYS.runs}logs/`,
  configs: `${STORE_KEYS.runs}configs/`,
  configVersions: `${STORE_KEYS.runs}config-versions/`,
  settings: `${STORE_KEYS.runs}settings/`,
  agentTokens: `${STORE_KEYS.runs}agent-tokens/`,
} as const

export function recordKey(id: string): string {
  return `${RUN_KEYS.records}${id}.json`
}

export function activeKey(id: string): string {
  return `${RUN_KEYS.active}${id}`
}

export function unitRunKey(unit: string, id: string): string {
  return `${RUN_KEYS.units}${unit}/${id}`
}

export function logChunkKey(id: string, sequence: number): string {
  return `${RUN_KEYS.logs}${id}/${String(sequence).padStart(9, '0')}`
}

export function configKey(upload: string): string {
  return `${RUN_KEYS.configs}${upload}.tar.gz`
}

export function configVersionKey(id: string): string {
  return `${RUN_KEYS.configVersions}${id}.json`
}

export function settingsKey(unit: string): string {
  return `${RUN_KEYS.settings}${unit}.json`
}
