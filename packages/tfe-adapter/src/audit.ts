import type { AuditNote } from '@cairn/audit'
import type { Context } from 'hono'
import type { TfeEnv } from './tfe-env'
import { parseOutputId, parseStateVersionId, unitOfName, unitOfWorkspaceId } from './ids'

const API = '/tfe/api/v2'

/**
 * The audit action of a request to the `cloud` block's API, from its method and path alone, so a
 * request refused before its handler (a bad token) is recorded as what it asked for. Handlers add
 * what only they learn: the unit of a pending state version, the version an upload made.
 * Undefined for what is not audited (reading workspaces, listing versions).
 */
export function tfeAuditNote(method: string, path: string): AuditNote | undefined {
  if (!path.startsWith(`${API}/`)) return undefined
  const parts = path.slice(API.length + 1).split('/')
  const [first, second, third, fourth] = parts
  if (first === 'workspaces' && second !== undefined) {
    const unit = unitOf(second)
    if (method === 'POST' && third === 'actions') {
      const action = ACTIONS[fourth ?? '']
      if (action !== undefined && parts.length === 4) return { action, ...unit }
      if (fourth === 'safe-delete') return { action: 'unit.delete', ...unit }
    }
    if (method === 'POST' && third === 'state-versions' && parts.length === 3) {
      return { action: 'state.write', ...unit }
    }
    if (method === 'GET' && third === 'current-state-version-outputs' && parts.length === 3) {
      return { action: 'outputs.read', ...unit }
    }
    if (method === 'DELETE' && parts.length === 2) return { action: 'unit.delete', ...unit }
  }
  if (first === 'organizations' && third === 'workspaces') {
    if (method === 'POST' && parts.length === 3) return { action: 'unit.create' }
    const unit = fourth === undefined ? {} : unitOfNamed(fourth)
    if (method === 'DELETE' && parts.length === 4) return { action: 'unit.delete', ...unit }
    if (method === 'POST' && parts.length === 6 && parts[5] === 'safe-delete') {
      return { action: 'unit.delete', ...unit }
    }
  }
  if (first === 'state-versions' && second !== undefined) {
    const committed = parseStateVersionId(second)
    const at = committed === undefined ? {} : { unit: committed.unit, version: committed.timestamp }
    if (method === 'GET' && third === 'download' && parts.length === 3) {
      return { action: 'state.read', ...at }
    }
    if (method === 'GET' && third === 'outputs' && parts.length === 3) {
      return { action: 'outputs.read', ...at }
    }
    if (method === 'PUT' && third === 'upload') return { action: 'state.write' }
  }
  if (first === 'runs' && method === 'POST') {
    if (parts.length === 1) return { action: 'run.create' }
    if (third === 'actions' && parts.length === 4) {
      return { action: fourth === 'apply' ? 'run.confirm' : 'run.cancel' }
    }
  }
  if (first === 'state-version-outputs' && second !== undefined && method === 'GET') {
    const output = parseOutputId(second)
    return {
      action: 'outputs.read',
      ...(output === undefined ? {} : { unit: output.unit, version: output.timestamp }),
    }
  }
  return undefined
}

const ACTIONS: Record<string, AuditNote['action']> = {
  lock: 'lock',
  unlock: 'unlock',
  'force-unlock': 'force_unlock',
}

function unitOf(workspace: string): { unit?: string } {
  try {
    return { unit: unitOfWorkspaceId(decodeURIComponent(workspace)) }
  } catch {
    return {}
  }
}

function unitOfNamed(name: string): { unit?: string } {
  try {
    return { unit: unitOfName(decodeURIComponent(name)) }
  } catch {
    return {}
  }
}

/** Adds what a handler learned to the request's audit record, when the server keeps one. */
export function noteAudit(c: Context<TfeEnv>, fields: Partial<AuditNote>): void {
  const note = c.var.audit
  if (note !== undefined) Object.assign(note, fields)
}
