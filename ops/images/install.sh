#!/bin/sh
# The image's build stage (ops/images/Dockerfile runs it in /app; ops/helm/test/image-build-stage.test.ts runs it in a temp copy of the
# repository): the workspace's production dependencies from the committed lockfile, nothing else. A lockfile out of
# date with a package.json fails here, as in CI (`--frozen-lockfile`).
set -eu
bun install --frozen-lockfile --production --no-progress
