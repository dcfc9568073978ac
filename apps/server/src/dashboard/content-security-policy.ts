/**
 * The Content Security Policy of every dashboard page: nothing but this server's own style sheet
 * and script (no inline code, no other origin), forms that post only here, no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')
