# One image for both processes; docker-compose.yml picks the command per service.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=development \
    PORT=4000

# Dependencies first, so a code change does not reinstall them (TypeScript, a dev dependency, builds dist/).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .
RUN npm run build

EXPOSE 4000
# One gateway process by default; the worker service runs `node dist/worker/main.js`.
CMD ["node", "dist/schema/gateway.js"]
