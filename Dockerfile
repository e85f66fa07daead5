# One image for both processes; docker-compose.yml picks the command per service.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=development \
    PORT=4000

# Dependencies first, so a code change does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .

EXPOSE 4000
# The gateway by default; the worker service runs `npx tsx worker/main.ts`.
CMD ["npx", "tsx", "schema/gateway.ts"]
