# Cairn in a container: `docker build -t cairn .` then
#   docker run -d -p 8080:8080 -v cairn-data:/data --name cairn cairn
# The data directory is a volume; local mode's admin token is in it (/data/admin.token).

# The build: the whole workspace, its development tools included.
FROM node:20-bookworm-slim AS build
WORKDIR /cairn
COPY . .
# Installs the pinned pnpm and the dependencies, then builds (what `npm start` does first).
RUN npm run build
# The server alone, as a package with its production dependencies only: its build bundles the
# workspace's packages, so no compiler, test runner, linter or source reaches the image (nor the
# scanners' reports). valibot names TypeScript as an optional peer, for its types, and pnpm links
# the workspace's compiler there: nothing runs it, so it goes too.
RUN node .tools/node_modules/pnpm/bin/pnpm.cjs --filter @cairn/server deploy --legacy --prod /deploy \
  && rm -rf /deploy/node_modules/.pnpm/typescript@*

# What runs: Node.js, the built server and the packages it imports.
FROM node:20-bookworm-slim
WORKDIR /cairn
COPY --from=build /deploy /cairn/apps/server
RUN mkdir /data && chown node:node /data
USER node
# Metrics listen on every address of the container (SVC_METRICS_HOST), where only the container's
# network reaches them: a Prometheus on that network scrapes http://<container>:9464/metrics.
# Publish that port to the host's loopback at most (-p 127.0.0.1:9464:9464), never publicly.
ENV SVC_DATA_DIR=/data PORT=8080 SVC_HOST=0.0.0.0 SVC_METRICS_HOST=0.0.0.0 SVC_METRICS_PORT=9464
EXPOSE 8080
VOLUME ["/data"]
# Liveness from inside, with the Node.js already there (the image has no curl): /healthz over the
# loopback address, over HTTPS when the server has a certificate. Nothing secret is sent, so the
# certificate (issued for the public name) is not checked here.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const https = Boolean(process.env.SVC_TLS_CERT_PATH); require(https ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.PORT || 8080, path: '/healthz', rejectUnauthorized: false, timeout: 4000 }, (answer) => process.exit(answer.statusCode === 200 ? 0 : 1)).on('timeout', () => process.exit(1)).on('error', () => process.exit(1))"]
# The server itself, not npm: it handles SIGTERM (docker stop), finishing requests in flight. The
# first heap of 64 MiB keeps V8 out of back-to-back full collections during large uploads.
CMD ["node", "--initial-heap-size=64", "apps/server/dist/main.js"]
