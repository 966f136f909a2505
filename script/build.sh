#!/usr/bin/env bash
# Builds gh-ralph for the platforms gh extensions are installed on, into dist/, named as
# cli/gh-extension-precompile expects: gh-ralph_<tag>_<os>-<arch>[.exe] (gh matches the <os>-<arch> suffix).
# Usage: script/build.sh <tag>
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${1:?usage: script/build.sh <tag>}"
# The commit is stamped too: gh ralph init pins ralph's action to it in the workflow it writes.
commit="$(git rev-parse HEAD)"
if [ "${tag#v}" != "$(cat VERSION)" ]; then
  echo "script/build.sh: the tag $tag does not match VERSION ($(cat VERSION)): update VERSION first" >&2
  exit 1
fi
platforms=(
  darwin-amd64 darwin-arm64
  freebsd-amd64 freebsd-arm64
  linux-386 linux-amd64 linux-arm linux-arm64
)
# No Windows build: ralph runs the agent in POSIX process groups and confines it with Unix users and Linux
# Landlock, which have no Windows counterpart. On Windows, use gh ralph from WSL.

rm -rf dist
mkdir -p dist
for p in "${platforms[@]}"; do
  goos="${p%-*}"
  goarch="${p#*-}"
  ext=""
  if [ "$goos" = windows ]; then ext=".exe"; fi
  out="dist/gh-ralph_${tag}_${p}${ext}"
  echo "building $out"
  GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${tag#v} -X main.commit=${commit}" -o "$out" ./cmd/gh-ralph
done
