import * as v from 'valibot'

/** `POST /v1/units` */
export const CreateUnitRequestSchema = v.object({
  id: v.string('id must be a unit ID string'),
  tags: v.optional(v.unknown()),
})
export type CreateUnitRequest = v.InferOutput<typeof CreateUnitRequestSchema>

/**
 * `DELETE /v1/units/{id}/unlock`: the lock ID (the rest of a LockInfo body is ignored), and for a
 * forced unlock the reason to record (its length is checked by the lock service).
 */
export const UnlockRequestSchema = v.object({
  ID: v.optional(v.string('ID must be the lock ID string')),
  reason: v.optional(v.string('reason must be a string')),
})
export type UnlockRequest = v.InferOutput<typeof UnlockRequestSchema>

/** `POST /v1/units/{id}/restore` */
export const RestoreRequestSchema = v.object({
  timestamp: v.string('timestamp must be the RFC 3339 time of a version'),
  lock_id: v.optional(v.string('lock_id must be the lock ID string')),
})
export type RestoreRequest = v.InferOutput<typeof RestoreRequestSchema>

/** The most dependencies one unit may declare. */
export const MAX_DEPENDENCIES = 1000

/** One dependency: an upstream unit, and optionally the one output of it that is consumed. */
export const DependencySchema = v.strictObject(
  {
    from: v.string('from must be the upstream unit ID'),
    output: v.optional(
      v.pipe(
        v.string('output must be an output name'),
        v.regex(
          /^[A-Za-z_][A-Za-z0-9_-]{0,255}$/,
          'output must be a Terraform output name (a letter or _, then letters, digits, _ or -)',
        ),
      ),
    ),
  },
  'each dependency must be {"from", "output"?} and nothing else',
)
export type Dependency = v.InferOutput<typeof DependencySchema>

/** `PUT /v1/units/{id}/dependencies`, and what it and `GET` answer. */
export const DependenciesSchema = v.object({
  dependencies: v.pipe(
    v.array(DependencySchema, 'dependencies must be a list'),
    v.maxLength(MAX_DEPENDENCIES, `a unit may have at most ${MAX_DEPENDENCIES} dependencies`),
  ),
})
export type Dependencies = v.InferOutput<typeof DependenciesSchema>
