#!/usr/bin/env bash
# The build steps of the Action's image, in one place: the Dockerfile runs them, and CI (which has no
# container engine) runs `binary` and `clis` into directories, so a change here is tested without Docker.
#
#   script/image.sh binary OUT     build gh-ralph for linux/$GOARCH (default: this machine's) into OUT/gh-ralph,
#                                  stamped with VERSION (or $RALPH_VERSION) and the commit (or $RALPH_COMMIT)
#   script/image.sh system         install what the image needs from Debian (as root, in the image)
#   script/image.sh clis [PREFIX]  install the agent CLIs from npm: globally, or under PREFIX
#   script/image.sh packages       print the npm packages, one a line
set -euo pipefail

# The agent CLIs of the claude, codex and gemini presets, at the versions the presets were proven with
# (README: "Installing the CLIs" has their sizes and times).
npm_packages=(@anthropic-ai/claude-code@2.1.330 @openai/codex@0.169.0 @google/gemini-cli@0.61.0)
# git for the worktree, CA certificates for the API; nothing else (ralph pushes over HTTPS).
debian_packages=(ca-certificates git)

case "${1:-}" in
binary)
  out="${2:?usage: script/image.sh binary OUT}"
  cd "$(dirname "$0")/.."
  version="${RALPH_VERSION:-$(cat VERSION)}"
  commit="${RALPH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}"
  mkdir -p "$out"
  GOOS=linux CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${version} -X main.commit=${commit}" -o "$out/gh-ralph" ./cmd/gh-ralph
  ;;
system)
  apt-get update
  apt-get install -y --no-install-recommends "${debian_packages[@]}"
  rm -rf /var/lib/apt/lists/*
  ;;
clis)
  if [ -n "${2:-}" ]; then
    npm install --no-audit --no-fund --loglevel=error --prefix "$2" "${npm_packages[@]}"
  else
    npm install -g --no-audit --no-fund --loglevel=error "${npm_packages[@]}"
    npm cache clean --force
  fi
  ;;
packages)
  printf '%s\n' "${npm_packages[@]}"
  ;;
*)
  echo "usage: script/image.sh binary OUT | system | clis [PREFIX] | packages" >&2
  exit 2
  ;;
esac
