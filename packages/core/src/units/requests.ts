import * as v from 'valibot'

/** `POST /v1/units` */
export const CreateUnitRequestSchema = v.object({
  id: v.string('id must be a unit ID string'),
  tags: v.optional(v.unknown()),
})
export type CreateUnitRequest = v.InferOutput<typeof CreateUnitRequestSchema>

/** `DELETE /v1/units/{id}/unlock`: the lock ID (the rest of a LockInfo body is ignored). */
export const UnlockRequestSchema = v.object({
  ID: v.optional(v.string('ID must be the lock ID string')),
})
export type UnlockRequest = v.InferOutput<typeof UnlockRequestSchema>

/** `POST /v1/units/{id}/restore` */
export const RestoreRequestSchema = v.object({
  timestamp: v.string('timestamp must be the RFC 3339 time of a version'),
  lock_id: v.optional(v.string('lock_id must be the lock ID string')),
})
export type RestoreRequest = v.InferOutput<typeof RestoreRequestSchema>
