export type { TfeDeps, TfeEnv, TfeLog } from './tfe-env'
export { TFP_API_VERSION, tfeRoutes } from './tfe-routes'
export { loggablePath, UploadUrls, UPLOAD_URL_TTL_MS } from './state-versions/upload-urls'
export { stateVersionId, workspaceId, workspaceName } from './ids'
