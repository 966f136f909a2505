# The ralph GitHub Action's images: one static Go binary with git and CA certificates (the target slim, for
# preset: command), and one image per agent (the targets claude, codex, gemini, copilot, opencode and pi) holding that agent's CLI
# only, for the platform it is built for only. The release workflow publishes each for linux/amd64 and
# linux/arm64 to ghcr.io/ralph-dev/gh-ralph:<VERSION>[-<agent>], which action.yml and <agent>/action.yml
# name. The steps are in script/image.sh, which CI runs without a container engine too.
# Built with BuildKit (docker buildx build, or DOCKER_BUILDKIT=1 docker build); nothing is pulled but the
# base images below.

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

# Each agent's CLI is fetched on the build machine's platform too (a download, checked and unpacked: nothing
# of it runs), for the target's platform; only the image being built fetches its own.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS fetch
COPY script/image.sh /usr/local/bin/image.sh
COPY script/agents/ /usr/local/bin/agents/

FROM fetch AS cli-claude
ARG TARGETARCH
RUN image.sh cli claude "$TARGETARCH" /out

FROM fetch AS cli-codex
ARG TARGETARCH
RUN image.sh cli codex "$TARGETARCH" /out

FROM fetch AS cli-gemini
ARG TARGETARCH
RUN image.sh cli gemini "$TARGETARCH" /out

FROM fetch AS cli-copilot
ARG TARGETARCH
RUN image.sh cli copilot "$TARGETARCH" /out

FROM fetch AS cli-opencode
ARG TARGETARCH
RUN image.sh cli opencode "$TARGETARCH" /out

# pi's packages: npm ci of the lockfile in script/agents/pi (each tarball checked against its integrity,
# no package's scripts run), by a pinned node and npm of the build machine's platform.
FROM fetch AS cli-pi
ARG TARGETARCH
RUN image.sh cli pi "$TARGETARCH" /out

# Every image: Debian's git and CA certificates, and ralph, in one layer (what the system step removes of
# Debian's base is not in it). This is the slim image.
FROM debian:bookworm-slim AS system
COPY script/image.sh /tmp/image.sh
RUN /tmp/image.sh system && rm /tmp/image.sh
# ralph and the agent's CLI live in /ralph, which the composite action's view (script/action.sh), mounting
# the runner's /usr, /etc and the like over the image's, leaves alone.
COPY --from=build /out/gh-ralph /ralph/bin/gh-ralph

FROM scratch AS slim
COPY --from=system / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/ralph/bin
# The agent may read and run what is in /ralph (its CLI, and Node.js's modules for Gemini's).
ENV RALPH_AGENT_READABLE=/ralph
ENTRYPOINT ["/ralph/bin/gh-ralph"]
CMD ["action"]

# Claude Code: one native binary.
FROM slim AS claude
COPY --from=cli-claude /out/ /ralph/

# Codex: one native binary, with ripgrep and bubblewrap beside it.
FROM slim AS codex
COPY --from=cli-codex /out/ /ralph/

# The Gemini CLI: JavaScript, run by Node.js (the binary alone: no npm, no headers).
FROM node:22-bookworm-slim AS node

FROM slim AS gemini
COPY --from=node /usr/local/bin/node /ralph/bin/node
COPY --from=cli-gemini /out/ /ralph/

# GitHub Copilot CLI: one native binary.
FROM slim AS copilot
COPY --from=cli-copilot /out/ /ralph/

# opencode: one native binary.
FROM slim AS opencode
COPY --from=cli-opencode /out/ /ralph/

# pi: JavaScript with its node_modules, run by Node.js (the binary alone, as for Gemini's).
FROM slim AS pi
COPY --from=node /usr/local/bin/node /ralph/bin/node
COPY --from=cli-pi /out/ /ralph/
