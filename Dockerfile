# syntax=docker/dockerfile:1
# The ralph GitHub Action: one static Go binary with git, CA certificates and the agent CLIs.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version is stamped into the binary: the VERSION file (the release workflow checks that a v* tag
# matches it), or the RALPH_VERSION build argument; the commit when the build context has one.
ARG RALPH_VERSION=""
ARG RALPH_COMMIT=""
RUN version="${RALPH_VERSION:-$(cat VERSION)}" \
 && commit="${RALPH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}" \
 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${version} -X main.commit=${commit}" -o /out/gh-ralph ./cmd/gh-ralph

# Node.js for the agent CLIs of the claude, codex and gemini presets, installed from npm at the versions
# the presets were proven with (README: "Installing the CLIs" has the sizes and times).
FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g --no-audit --no-fund \
      @anthropic-ai/claude-code@2.1.330 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 \
 && npm cache clean --force
COPY --from=build /out/gh-ralph /usr/local/bin/gh-ralph
ENTRYPOINT ["/usr/local/bin/gh-ralph"]
CMD ["action"]
