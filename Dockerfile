# syntax=docker/dockerfile:1
#
# workqueue-doctor container image.
#
#   docker build -t workqueue-doctor:0.1.0 .
#   docker run --rm -p 9808:9808 --read-only --user 65532:65532 workqueue-doctor:0.1.0 \
#     serve --target http://host.docker.internal:8080/metrics
#
# No image is published: for a cluster, tag it with your registry (docker build -t <registry>/workqueue-doctor:0.1.0),
# push it, and set that name in the kustomization's `images:` entry (newName) of deploy/standalone or
# deploy/sidecar/*, whose manifests name the local `workqueue-doctor:0.1.0` (docs/install.md).
#
# Three stages: `build` compiles TypeScript to dist/, `prod-deps` installs the production dependencies only,
# and the runtime stage holds nothing but Node, those dependencies, dist/, package.json (the CLI reads its
# version from it) and schemas/ (the report's published JSON Schema). The runtime runs as uid/gid 65532,
# writes nothing (works with a read-only root filesystem) and never calls npm. No secret is built in: tokens
# and CA files are mounted at run time.
#
# Base image: Node 22 LTS on Debian 12 (bookworm), slim variant, pinned to a release tag. Bump the three FROM
# lines together; pin by digest too (`node:22.23.3-bookworm-slim@sha256:...`) when the registry you build
# with is fixed.

FROM node:22.23.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts are needed to compile (the TypeScript compiler ships as a platform package).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

FROM node:22.23.3-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; none of them has an install script.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM node:22.23.3-bookworm-slim
LABEL org.opencontainers.image.title="workqueue-doctor" \
      org.opencontainers.image.description="Diagnoses Kubernetes controller work queues from their client-go metrics and serves the findings over REST." \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/workqueue-doctor/workqueue-doctor" \
      org.opencontainers.image.base.name="docker.io/library/node:22.23.3-bookworm-slim"
# A small young generation keeps the service's memory flat: each evaluation allocates in bursts, and with the
# default semi-space V8 keeps up to 32 MiB more committed (measured: 50 queues x 30 min of history stay under
# 100 MiB with it, reach 126 MiB without). Override NODE_OPTIONS in the pod spec to change it.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=2
# The service never runs npm, npx, yarn or corepack: remove them from the runtime image.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
      /opt/yarn-v*
WORKDIR /app
# Owned by root and not writable by the runtime user.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY schemas ./schemas
USER 65532:65532
EXPOSE 9808
ENTRYPOINT ["node", "/app/dist/cli/bin.js"]
CMD ["serve"]
