# syntax=docker/dockerfile:1
# The ralph GitHub Action: one static Go binary with git, CA certificates and the agent CLIs. The release
# workflow publishes it for linux/amd64 and linux/arm64 to ghcr.io/ralph-dev/gh-ralph:<VERSION>, which
# action.yml names. The steps are in script/image.sh, which CI runs without a container engine.

# The binary is cross-compiled on the build machine's own platform: no emulation for the Go build.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version is stamped into the binary: the VERSION file (the release workflow checks that a v* tag
# matches it), or the RALPH_VERSION build argument; the commit when the build context has one.
ARG RALPH_VERSION=""
ARG RALPH_COMMIT=""
ARG TARGETARCH
RUN GOARCH="$TARGETARCH" RALPH_VERSION="$RALPH_VERSION" RALPH_COMMIT="$RALPH_COMMIT" script/image.sh binary /out

# Node.js for the agent CLIs of the claude, codex and gemini presets.
FROM node:22-bookworm-slim
COPY script/image.sh /tmp/image.sh
RUN /tmp/image.sh system && /tmp/image.sh clis && rm /tmp/image.sh
COPY --from=build /out/gh-ralph /usr/local/bin/gh-ralph
ENTRYPOINT ["/usr/local/bin/gh-ralph"]
CMD ["action"]
