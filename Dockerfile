# syntax=docker/dockerfile:1
# The ralph GitHub Action: one static Go binary in a small image with git and CA certificates.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/gh-ralph ./cmd/gh-ralph

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/gh-ralph /usr/local/bin/gh-ralph
ENTRYPOINT ["/usr/local/bin/gh-ralph"]
CMD ["action"]
