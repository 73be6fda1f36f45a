# One image for every Node process of the service (api, worker, network simulator); the
# compose file picks the process with `command`.
FROM node:20-bookworm-slim

WORKDIR /app

# The built-in image renderer draws text through sharp/librsvg, which needs a font
# (lib/media/render.ts asks for DejaVu Sans first).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*

# Dependencies first, so editing source does not invalidate the npm layer. tsx is a runtime
# dependency (the processes run TypeScript directly), so dev dependencies can stay out.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Source directories by name rather than `COPY . .`, so a host's node_modules (other platform)
# and .data never end up in the image.
COPY tsconfig.json ./
COPY lib ./lib
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY migrations ./migrations
COPY bin ./bin
COPY admin ./admin
COPY tooling ./tooling
COPY sim ./sim

# The workflow bundle is built with the image, from the very source it holds, and the worker
# loads it instead of bundling at every start (workers/worker.ts, WORKFLOW_BUNDLE_PATH).
RUN npx tsx tooling/bundle-workflows.ts

RUN mkdir -p /app/.data && chown -R node:node /app/.data
USER node

ENV PORT=3000 \
    MCP_PORT=3001 \
    DATA_DIR=/app/.data \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
EXPOSE 3000 3001

CMD ["npm", "run", "start:api"]
