import { InvalidUnitIdError, parseUnitId, type UnitId } from '@cairn/core'
import { S3Error } from './s3-errors'

/** The object name Terraform's `s3` backend gives a state: `key = "<unit>/terraform.tfstate"`. */
export const STATE_NAME = 'terraform.tfstate'
/** What Terraform appends to a state's key for its lock object (`use_lockfile = true`). */
export const LOCK_SUFFIX = '.tflock'

/** What an S3 key names: a unit's state, or its lock. */
export interface S3Object {
  unit: UnitId
  kind: 'state' | 'lock'
}

/**
 * Maps an S3 key to the object it names, one to one (DESIGN section 11):
 *
 * | key                                   | unit                   |
 * | ------------------------------------- | ---------------------- |
 * | `app/prod/terraform.tfstate`          | `app/prod`             |
 * | `env:/dev/app/terraform.tfstate`      | `env:/dev/app`         |
 * | `prod/network.tfstate`                | `prod/network.tfstate` |
 * | `terraform.tfstate`                   | `terraform.tfstate`    |
 * | `<any of the above>.tflock`           | that unit's lock       |
 *
 * A key ending in `/terraform.tfstate` names the unit before it; any other key whose last segment
 * ends in `.tfstate` names the unit of exactly that name. `keyOf` is the inverse, so every unit
 * has one key and every key one unit; other keys are refused with `InvalidArgument`.
 *
 * @throws S3Error `InvalidArgument`
 */
export function objectOfKey(key: string): S3Object {
  const lock = key.endsWith(LOCK_SUFFIX)
  const stateKey = lock ? key.slice(0, -LOCK_SUFFIX.length) : key
  return { unit: unitOfStateKey(stateKey, key), kind: lock ? 'lock' : 'state' }
}

/** The key of a unit's state object: the inverse of `objectOfKey`. */
export function keyOf(unit: string): string {
  if (unit === STATE_NAME) return unit
  const last = unit.slice(unit.lastIndexOf('/') + 1)
  if (last.endsWith('.tfstate') && last !== STATE_NAME) return unit
  return `${unit}/${STATE_NAME}`
}

/** The key of a unit's lock object. */
export function lockKeyOf(unit: string): string {
  return `${keyOf(unit)}${LOCK_SUFFIX}`
}

/**
 * The unit-ID prefix under which every unit whose key starts with `keyPrefix` lies: a key
 * `<unit>/terraform.tfstate` starts with the prefix either because the unit does, or because the
 * prefix ends inside `/terraform.tfstate`, whose only `/` is its first character.
 */
export function unitPrefixOf(keyPrefix: string): string {
  const slash = keyPrefix.lastIndexOf('/')
  return slash === -1 ? '' : keyPrefix.slice(0, slash)
}

function unitOfStateKey(stateKey: string, key: string): UnitId {
  let unit: string
  if (stateKey === STATE_NAME) unit = stateKey
  else if (stateKey.endsWith(`/${STATE_NAME}`)) unit = stateKey.slice(0, -STATE_NAME.length - 1)
  else if (stateKey.slice(stateKey.lastIndexOf('/') + 1).endsWith('.tfstate')) unit = stateKey
  else {
    throw new S3Error(
      'InvalidArgument',
      `the key ${JSON.stringify(key)} names no unit: Cairn's keys are <unit>/terraform.tfstate, <name>.tfstate, and either followed by .tflock`,
    )
  }
  try {
    return parseUnitId(unit)
  } catch (error) {
    if (!(error instanceof InvalidUnitIdError)) throw error
    throw new S3Error('InvalidArgument', `the key ${JSON.stringify(key)}: ${error.message}`)
  }
}
