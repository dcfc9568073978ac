import { InvalidUnitIdError, unitIdFromPath, unitIdToSegment, type UnitId } from '@cairn/core'
import { notFound, TfeError } from './jsonapi/errors'

/**
 * Workspaces map one to one to units (service spec): the workspace named `team__app` is unit
 * `team/app` (go-tfe allows no `/` in a name, so `__` stands for it), and its ID is `ws-<name>`.
 */
export function workspaceName(unit: UnitId): string {
  return unitIdToSegment(unit)
}

export function workspaceId(unit: UnitId): string {
  return `ws-${workspaceName(unit)}`
}

/** The unit of a workspace name. @throws TfeError 404 for a name no unit can have */
export function unitOfName(name: string): UnitId {
  try {
    return unitIdFromPath(encodeURIComponent(name))
  } catch (error) {
    if (error instanceof InvalidUnitIdError) throw notFound(`no workspace ${name}`)
    throw error
  }
}

/** The unit of a workspace about to be created. @throws TfeError 422 for a name no unit can have */
export function unitOfNewName(name: string): UnitId {
  try {
    return unitIdFromPath(encodeURIComponent(name))
  } catch (error) {
    if (error instanceof InvalidUnitIdError) {
      throw new TfeError(422, 'invalid attribute', `name: ${error.message}`)
    }
    throw error
  }
}

/** The unit of a workspace ID (`ws-<name>`). @throws TfeError 404 */
export function unitOfWorkspaceId(id: string): UnitId {
  if (!id.startsWith('ws-')) throw notFound(`no workspace ${id}`)
  return unitOfName(id.slice(3))
}

/**
 * A committed version's state-version ID: `sv-` then base64url of `<ms>:<unit>`, so the ID says
 * which unit and which version without any lookup, and carries no `/`.
 */
export function stateVersionId(unit: UnitId, timestamp: string): string {
  return `sv-${Buffer.from(`${Date.parse(timestamp)}:${unit}`).toString('base64url')}`
}

/** The unit and version of a committed state-version ID, or undefined for another kind of ID. */
export function parseStateVersionId(id: string): { unit: UnitId; timestamp: string } | undefined {
  if (!id.startsWith('sv-') || id.startsWith(PENDING_VERSION_ID_PREFIX)) return undefined
  const text = Buffer.from(id.slice(3), 'base64url').toString('utf8')
  const colon = text.indexOf(':')
  const ms = Number(text.slice(0, colon))
  if (colon < 1 || !Number.isSafeInteger(ms)) return undefined
  try {
    return {
      unit: unitIdFromPath(encodeURIComponent(text.slice(colon + 1))),
      timestamp: new Date(ms).toISOString(),
    }
  } catch {
    return undefined
  }
}

/** Pending state versions (created, not yet uploaded) have IDs of their own. */
export const PENDING_VERSION_ID_PREFIX = 'sv-p-'

/** A state-version output's ID: base64url of the unit, the version and the output name. */
export function outputId(unit: UnitId, timestamp: string, name: string): string {
  return `wsout-${Buffer.from(JSON.stringify([unit, Date.parse(timestamp), name])).toString('base64url')}`
}

export function parseOutputId(
  id: string,
): { unit: UnitId; timestamp: string; name: string } | undefined {
  if (!id.startsWith('wsout-')) return undefined
  try {
    const [unit, ms, name] = JSON.parse(Buffer.from(id.slice(6), 'base64url').toString('utf8')) as [
      unknown,
      unknown,
      unknown,
    ]
    if (typeof unit !== 'string' || typeof ms !== 'number' || typeof name !== 'string')
      return undefined
    return {
      unit: unitIdFromPath(encodeURIComponent(unit)),
      timestamp: new Date(ms).toISOString(),
      name,
    }
  } catch {
    return undefined
  }
}
