# syntax=docker/dockerfile:1
# Tributary: one image for every role. `docker run … tributary` is `npm start` (the API and the
# delivery in one process, with an embedded Redis under /data unless REDIS_URL is set);
# `… tributary api` and `… tributary worker` run the roles apart (docs/operating.md).
# Where no image registry can be reached, scripts/container/local-base.sh builds the base image
# below from Debian's packages (it is how the tests build this image).

# ---- build: install everything, compile, keep the production dependencies only
FROM docker.io/library/node:20-bookworm-slim AS build
WORKDIR /app
# The lockfile first: this layer is reused until a dependency changes. No install scripts run
# (esbuild and DuckDB ship their binaries in per-platform packages), and the build below is
# what `prepare` would run.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY src ./src
COPY connectors ./connectors
COPY jobs ./jobs
# googleapis ships a client for each of Google's ~330 APIs (210 MB); the Sheets connector loads
# only its own (googleapis/build/src/apis/sheets), so the others go.
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && find node_modules/googleapis/build/src/apis -mindepth 1 -maxdepth 1 ! -name sheets -exec rm -rf {} +

# ---- runtime: Node.js 20, redis-server for the embedded default, tini as PID 1
FROM docker.io/library/node:20-bookworm-slim
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server tini \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# The console's page and stylesheet are served from their source folder.
COPY --from=build /app/src/console/public ./src/console/public
RUN mkdir -p /data && chown node:node /data && ln -s /app/bin/tributary.js /usr/local/bin/tributary
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
VOLUME /data
USER node
EXPOSE 8080
# /readyz answers 200 once Redis answers (and 503 while it does not).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# tini forwards SIGTERM to the relay, which drains (stops accepting, finishes its writes) and exits,
# and reaps the embedded redis-server's zombie if it ever has one.
ENTRYPOINT ["tini", "--", "node", "--max-semi-space-size=32", "--heap-growing-percent=100", "dist/src/boot/server.js"]
CMD ["all"]
