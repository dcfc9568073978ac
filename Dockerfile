# Cairn in a container: `docker build -t cairn .` then
#   docker run -p 8080:8080 -v cairn-data:/data cairn
# The data directory is a volume; local mode's admin token is in it (/data/admin.token).
FROM node:20-bookworm-slim AS build
WORKDIR /cairn
COPY . .
# Installs the pinned pnpm and the dependencies, then builds (what `npm start` does first).
RUN npm run build && rm -rf .turbo

FROM node:20-bookworm-slim
WORKDIR /cairn
COPY --from=build /cairn /cairn
RUN mkdir /data && chown node:node /data
USER node
ENV SVC_DATA_DIR=/data PORT=8080 SVC_HOST=0.0.0.0
EXPOSE 8080
VOLUME ["/data"]
# The server itself, not npm: it handles SIGTERM (docker stop), finishing requests in flight. The
# first heap of 64 MiB keeps V8 out of back-to-back full collections during large uploads.
CMD ["node", "--initial-heap-size=64", "apps/server/dist/main.js"]
