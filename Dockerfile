# syntax=docker/dockerfile:1
# Production image of the booking service: one image, two processes.
#   gateway: node dist/schema/gateway.js        (the default command; REST + GraphQL + WebSocket on PORT)
#   worker:  node dist/worker/main.js           (outbox relay, mail, hold expiry, maintenance; health on WORKER_HEALTH_PORT)
#   migrate: node dist/scripts/migrate.js up     (a one-shot job before a rollout; `status` lists pending migrations)
# Build where a Docker engine exists: `docker build -t booking-service .` (or `docker compose build`).

ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Compile TypeScript to dist/ (needs the dev dependencies: typescript).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY services ./services
COPY schema ./schema
COPY worker ./worker
COPY scripts ./scripts
RUN node scripts/build.mjs

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. The runtime: compiled code and production dependencies, owned by root and read-only for the
#    unprivileged user that runs it; only the mail folder (used when SMTP_URL is unset) is writable.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=4000 \
    WORKER_HEALTH_PORT=4001 \
    MAIL_DIR=/app/.mail \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The booking page's browser files are served as they are (not compiled), found from package.json.
COPY schema/web/public ./schema/web/public
COPY package.json ./
RUN mkdir -p /app/.mail && chown node:node /app/.mail
# The numeric id of the image's `node` user, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 4000 4001
# node itself is PID 1 and handles SIGTERM/SIGINT (graceful drain); no npm or shell in between.
CMD ["node", "dist/schema/gateway.js"]
