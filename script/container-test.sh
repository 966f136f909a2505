#!/usr/bin/env bash
# The Action's images tested in a real Docker engine, as a GitHub runner uses them (.ci/run calls this):
#   1. installs Debian's Docker engine (docker.io) and starts dockerd, with its own data root and socket,
#      stopping it at the end;
#   2. builds stand-ins for the Dockerfile's base images from Debian packages (no registry is reachable in
#      CI): debian:bookworm-slim is a debootstrapped minimal Debian, golang:1.26-bookworm that plus curl, git
#      and this machine's Go, node:22-bookworm-slim that plus the node binary of npm's node-linux-<arch>;
#   3. builds each image of the Dockerfile as the release does (BuildKit, one target per image);
#   4. runs real steps inside them with the runner's mounts and ownership against the GitHub test server
#      (e2e/container_test.go), and one through the composite action's view of the runner's toolchains
#      (e2e/view_test.go), and checks each agent's CLI starts in its image;
#   5. builds each image for linux/arm64 too, under qemu (Debian's qemu-user-static with binfmt_misc), on an
#      arm64 stand-in base, and runs ralph's and the agent's CLI --version in each (skipped, saying so, where
#      no emulation can be set up);
#   6. prints each image's compressed and unpacked size, its cold load time and the time from docker run to
#      ralph's first line (README: "What a step costs").
# Where no engine can start (not root, no apt, dockerd fails) it says so and exits 0; once one runs, any
# failure fails. RALPH_CONTAINER_KEEP=1 keeps the engine's data (under $RALPH_CONTAINER_DIR) for a rerun.
# RALPH_CONTAINER_AGENTS="pi codex" tests those agents' images only (and the slim image), not all.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

t0=$SECONDS
phase_start=$SECONDS
phase() { # name: ends the previous phase, printing its time
  echo "   ($(( SECONDS - phase_start )) s)"
  phase_start=$SECONDS
  echo "== container: $1"
}
skip() {
  echo "container-test: SKIPPED: $*" >&2
  exit 0
}

echo "== container: engine"
if [ "$(id -u)" != 0 ]; then
  skip "needs root to run a Docker engine"
fi
# pigz as on GitHub's Ubuntu runners (their image installs it): dockerd unpacks gzip layers with unpigz when
# it finds one, so the cold load below is measured as a runner loads an image.
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null || ! command -v unpigz >/dev/null; then
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap pigz >/dev/null; }; then
    skip "could not install docker.io, debootstrap and pigz from Debian"
  fi
fi
# Debian's own docker CLI (20.10) has BuildKit built in; a newer CLI on PATH may want the buildx plugin.
docker_cli=/usr/bin/docker
dir="${RALPH_CONTAINER_DIR:-$(mktemp -d /var/tmp/ralph-container.XXXXXX)}"
mkdir -p "$dir"
sock="$dir/docker.sock"
dockerd_pid=""
data_root="$dir/data"
start_engine() {
  dockerd --data-root "$data_root" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" -H "unix://$sock" \
    --bridge none >"$dir/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 100); do
    if docker version >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$dockerd_pid" 2>/dev/null; then break; fi
    sleep 0.2
  done
  tail -20 "$dir/dockerd.log" >&2
  return 1
}
stop_engine() {
  if [ -n "$dockerd_pid" ]; then
    kill "$dockerd_pid" 2>/dev/null || true
    wait "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
  fi
}
cleanup() {
  stop_engine
  # dockerd leaves its network namespace mounted under its exec root.
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
  if [ "${RALPH_CONTAINER_KEEP:-}" != 1 ]; then
    rm -rf "$dir" || true
  fi
}
trap cleanup EXIT
docker() { "$docker_cli" -H "unix://$sock" "$@"; }
start_engine || skip "dockerd did not start (its log is above)"
echo "dockerd $(docker version --format '{{.Server.Version}}') (storage $(docker info --format '{{.Driver}}'))"

phase "stand-in base images"
arch="$(dpkg --print-architecture)"
case "$arch" in
amd64) nodearch=x64 ;;
arm64) nodearch=arm64 ;;
*) skip "the images are built for amd64 and arm64, not $arch" ;;
esac
have() { docker image inspect "$1" >/dev/null 2>&1; }
# slim_down ROOT: what Debian's -slim images leave out of a debootstrapped root: documentation but each
# package's copyright file, manuals, translations, apt's lists and caches.
slim_down() {
  chroot "$1" apt-get clean
  find "$1"/usr/share/doc -type f ! -name copyright -delete
  find "$1"/usr/share/doc -depth -mindepth 1 -type d -empty -delete
  rm -rf "$1"/usr/share/man/* "$1"/usr/share/info/* "$1"/usr/share/locale/* "$1"/var/lib/apt/lists/* \
    "$1"/var/cache/debconf/*-old "$1"/var/log/*.log "$1"/var/log/apt/*
}
# debian_root ARCH ROOT: a minimal Debian bookworm for ARCH in ROOT, slimmed down (a kept one, with
# RALPH_CONTAINER_KEEP, is reused).
debian_root() {
  if [ ! -x "$2/bin/sh" ]; then
    rm -rf "$2"
    debootstrap --arch="$1" --variant=minbase bookworm "$2" http://deb.debian.org/debian >"$dir/debootstrap-$1.log" 2>&1 ||
      { tail -20 "$dir/debootstrap-$1.log" >&2; return 1; }
  fi
  slim_down "$2"
}
# node_standin NODEARCH PLATFORM: node:22-bookworm-slim for PLATFORM, debian:bookworm-slim (whichever
# platform's holds that name now) plus the node binary of npm's node-linux-NODEARCH.
node_standin() {
  local d="$dir/node-$1"
  mkdir -p "$d"
  (cd "$d" && rm -rf package ./*.tgz && npm pack --silent "node-linux-$1@22" >/dev/null && tar -xzf node-linux-*.tgz)
  printf 'FROM debian:bookworm-slim\nCOPY package/bin/node /usr/local/bin/node\n' >"$d/Dockerfile"
  DOCKER_BUILDKIT=1 docker build -q --platform "$2" -t node:22-bookworm-slim "$d" >/dev/null
}
root="$dir/rootfs"
if ! have debian:bookworm-slim; then
  debian_root "$arch" "$root"
  tar -C "$root" -c . | docker import - debian:bookworm-slim >/dev/null
fi
if ! have golang:1.26-bookworm; then
  # This machine's CA certificates: a CI machine may reach the Go proxy and npm through a proxy of its own.
  cat >"$dir/golang.Dockerfile" <<'EOF2'
FROM debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates curl git >/dev/null && rm -rf /var/lib/apt/lists/*
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF2
  cp /etc/ssl/certs/ca-certificates.crt "$dir/ca-certificates.crt"
  goroot="$(go env GOROOT)"
  tar -C "$dir" -cf - golang.Dockerfile ca-certificates.crt -C "$(dirname "$goroot")" \
    --transform "s|^$(basename "$goroot")|go|" "$(basename "$goroot")" |
    DOCKER_BUILDKIT=1 docker build -q --network host -f golang.Dockerfile -t golang:1.26-bookworm - >/dev/null
fi
if ! have node:22-bookworm-slim; then
  node_standin "$nodearch" "linux/$arch"
fi
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -v '<none>'

phase "build (BuildKit, as the release does)"
version="$(cat VERSION)"
# The agents' images are those of script/image.sh agents (internal/preset's list, which its test checks).
mapfile -t agents < <(script/image.sh agents)
if [ -n "${RALPH_CONTAINER_AGENTS:-}" ]; then
  chosen=()
  for a in ${RALPH_CONTAINER_AGENTS//,/ }; do
    if ! printf '%s\n' "${agents[@]}" | grep -qx -- "$a"; then
      echo "container-test: RALPH_CONTAINER_AGENTS names $a, which has no image (agents: ${agents[*]})" >&2
      exit 2
    fi
    chosen+=("$a")
  done
  agents=("${chosen[@]}")
fi
targets=(slim "${agents[@]}")
# build PLATFORM TARGET TAG: the Dockerfile's TARGET for PLATFORM, as the release builds it.
build() {
  DOCKER_BUILDKIT=1 docker build -q --network host --platform "$1" --target "$2" \
    --build-arg RALPH_VERSION="$version" --build-arg RALPH_COMMIT="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    -t "$3" . >/dev/null
}
for target in "${targets[@]}"; do
  start=$SECONDS
  build "linux/$arch" "$target" "ralph-ci:$target"
  echo "built ralph-ci:$target in $(( SECONDS - start )) s"
done

phase "each agent's CLI starts in its image, and no other agent's is there"
# What script/image.sh system keeps for the agent and the verify commands: each program runs in every image.
for target in "${targets[@]}"; do
  got="$(docker run --rm --network none --entrypoint sh "ralph-ci:$target" -c '
    set -e
    for p in bash grep sed awk find diff tar gzip cat ls sort xargs git; do "$p" --version >/dev/null 2>&1 || "$p" -W version >/dev/null 2>&1 || { echo "$p does not run"; exit 1; }; done
    cd /tmp && git init -q t && cd t && git -c user.name=r -c user.email=r@example.com commit -q --allow-empty -m m
    git ls-remote https://127.0.0.1:9/x 2>&1 | grep -q "Failed to connect" || { echo "git has no HTTPS transport"; exit 1; }
    for p in git bash coreutils libc6; do [ -s "/usr/share/doc/$p/copyright" ] || { echo "no copyright file for $p"; exit 1; }; done
    [ -s /usr/share/common-licenses/GPL-2 ] || { echo "no /usr/share/common-licenses"; exit 1; }
    suid="$(find / -xdev -type f -perm /6000 2>/dev/null)"
    [ -z "$suid" ] || { echo "setuid or setgid programs: $suid"; exit 1; }' 2>&1)" ||
    { echo "ralph-ci:$target: $got" >&2; exit 1; }
done
echo "every image runs bash, grep, sed, awk, find, diff, tar, gzip, coreutils and git (with HTTPS), holds their copyright files, and no setuid or setgid program"
for target in "${agents[@]}"; do
  got="$(docker run --rm --network none --entrypoint "$target" "ralph-ci:$target" --version 2>&1)" ||
    { echo "$target --version in ralph-ci:$target failed: $got" >&2; exit 1; }
  echo "ralph-ci:$target: $target --version: $got"
  for other in "${agents[@]}" node npm; do
    case "$target/$other" in "$target/$target" | gemini/node | pi/node) continue ;; esac
    if docker run --rm --network none --entrypoint sh "ralph-ci:$target" -c "command -v $other" >/dev/null 2>&1; then
      echo "ralph-ci:$target holds $other too" >&2
      exit 1
    fi
  done
done

phase "a step in each image, as a runner runs it (e2e/container_test.go)"
# The slim image with a scripted agent that probes the boundary from inside; each agent's image with its
# real CLI against a scripted model of its vendor.
# The slim image once more through the composite action's view (script/action.sh run), named by its id (a
# local image has no registry digest), with Go and Node placed in the tool cache (TestToolchainView).
agent_images=""
for a in "${agents[@]}"; do agent_images="${agent_images:+$agent_images }$a=ralph-ci:$a"; done
RALPH_CONTAINER_DOCKER="$docker_cli -H unix://$sock" RALPH_CONTAINER_IMAGE=ralph-ci:slim RALPH_CONTAINER_SOCKET="$sock" \
  RALPH_CONTAINER_AGENT_IMAGES="$agent_images" \
  RALPH_CONTAINER_VIEW_IMAGE="$(docker image inspect --format '{{.Id}}' ralph-ci:slim)" \
  go test -count=1 ./e2e -run '^(TestContainerStep|TestAgentImageStep|TestToolchainView)$' -v >"$dir/go-test.log" 2>&1 ||
  { cat "$dir/go-test.log"; exit 1; }
grep -E '^\s*(--- |ok|PASS)' "$dir/go-test.log"
if grep -q -- '--- SKIP' "$dir/go-test.log"; then
  cat "$dir/go-test.log"
  echo "a container test skipped with an engine running" >&2
  exit 1
fi

phase "the linux/arm64 images, emulated, as the release builds them"
# The release builds every image for linux/arm64 too. Here that runs under qemu (Debian's qemu-user-static,
# registered with binfmt_misc): the stand-in bases for arm64, the four targets, and in each ralph's and the
# agent's CLI --version. The arm64 stand-ins take the base images' names for these builds only; the amd64
# ones get them back after.
arm64_images() {
  if [ "$arch" != amd64 ]; then
    echo "SKIPPED: this machine is $arch; the emulated build is done from amd64"
    return 0
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static binfmt-support >/dev/null 2>&1 || true
    update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    echo "SKIPPED: no arm64 emulation here (qemu-user-static and binfmt_misc could not be set up)"
    return 0
  fi
  local root64="$dir/rootfs-arm64" load="$dir/arm64-base"
  debian_root arm64 "$root64"
  # docker import cannot say arm64 (20.10 records the engine's own): an image archive of one layer can.
  rm -rf "$load" && mkdir -p "$load"
  tar -C "$root64" -cf "$load/layer.tar" .
  local diff config id
  diff="$(sha256sum "$load/layer.tar" | cut -d' ' -f1)"
  config="{\"architecture\":\"arm64\",\"os\":\"linux\",\"config\":{\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Cmd\":[\"bash\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff\"]}}"
  id="$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)"
  printf '%s' "$config" >"$load/$id.json"
  printf '[{"Config":"%s.json","RepoTags":["debian:bookworm-slim"],"Layers":["layer.tar"]}]' "$id" >"$load/manifest.json"
  # (not local: the trap restores them if the script ends here)
  base_amd64="$(docker image inspect --format '{{.Id}}' debian:bookworm-slim)"
  node_amd64="$(docker image inspect --format '{{.Id}}' node:22-bookworm-slim)"
  restore() {
    docker tag "$base_amd64" debian:bookworm-slim
    docker tag "$node_amd64" node:22-bookworm-slim
  }
  trap 'restore; cleanup' EXIT
  tar -C "$load" -c manifest.json "$id.json" layer.tar | docker load -q >/dev/null
  rm -rf "$load"
  node_standin arm64 linux/arm64
  for target in "${targets[@]}"; do
    local start=$SECONDS
    build linux/arm64 "$target" "ralph-ci:$target-arm64"
    local got
    got="$(docker image inspect --format '{{.Os}}/{{.Architecture}}' "ralph-ci:$target-arm64")"
    [ "$got" = linux/arm64 ] || { echo "ralph-ci:$target-arm64 is for $got" >&2; return 1; }
    got="$(docker run --rm --network none --platform linux/arm64 "ralph-ci:$target-arm64" --version 2>/dev/null | head -1)"
    case "$got" in "gh ralph version $version"*) ;; *) echo "ralph-ci:$target-arm64: ralph --version: $got" >&2; return 1 ;; esac
    if [ "$target" != slim ]; then
      got="$(docker run --rm --network none --platform linux/arm64 --entrypoint "$target" "ralph-ci:$target-arm64" --version 2>&1)" ||
        { echo "ralph-ci:$target-arm64: $target --version failed: $got" >&2; return 1; }
    fi
    echo "built ralph-ci:$target-arm64 in $(( SECONDS - start )) s: $got"
  done
  restore
  trap cleanup EXIT
}
arm64_images

phase "figures"
# Compressed: the image as docker save writes it, gzipped (about what a registry's gzip layers hold).
# Unpacked: docker image inspect's Size. Cold load: the compressed image loaded into an engine with an empty
# store, with the page cache dropped first, the median of three; as on GitHub's Ubuntu runners, whose image
# has pigz (dockerd unpacks with unpigz), and with Go's gzip (MOBY_DISABLE_PIGZ=1: a machine without pigz).
# First line: from docker run to ralph's first line of output.
for target in "${targets[@]}"; do
  docker save "ralph-ci:$target" | gzip -c >"$dir/$target.tar.gz"
  docker image inspect --format '{{.Size}}' "ralph-ci:$target" >"$dir/$target.size"
done
stop_engine
ms() { echo $(( $(date +%s%N) / 1000000 )); }
mb() { echo "$(( $1 / 1000000 )).$(( $1 / 100000 % 10 ))"; }
secs() { printf '%d.%02d' $(( $1 / 1000 )) $(( $1 % 1000 / 10 )); }
# cold_load TARGET: loads it into an engine with an empty store of its own (what a stopped engine left
# mounted is unmounted at the end), setting load (ms) and note.
cold_load() {
  data_root="$dir/load-$1"
  rm -rf "$data_root"
  start_engine
  sync
  note=""
  echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || note=" (the page cache could not be dropped here)"
  local start
  start=$(ms)
  docker load -q -i "$dir/$1.tar.gz" >/dev/null
  load=$(( $(ms) - start ))
}
# cold_loads TARGET: the median of three cold loads (this machine's disk is shared: one load can be off by a
# second), with unpigz and with Go's gzip, into pigz and gozip (ms); the engine of the last stays up.
cold_loads() {
  local with=() without=() i
  for i in 1 2 3; do
    MOBY_DISABLE_PIGZ=1 cold_load "$1"
    without+=("$load")
    stop_engine
    cold_load "$1"
    with+=("$load")
    [ "$i" = 3 ] || stop_engine
  done
  pigz="$(printf '%s\n' "${with[@]}" | sort -n | sed -n 2p)"
  gozip="$(printf '%s\n' "${without[@]}" | sort -n | sed -n 2p)"
}
printf '%-8s %13s %11s %10s %12s %11s\n' image compressed unpacked "cold load" "(Go's gzip)" "first line"
for target in "${targets[@]}"; do
  cold_loads "$target"
  start=$(ms)
  docker run --rm --network none "ralph-ci:$target" --version | head -1 >/dev/null
  first=$(( $(ms) - start ))
  printf '%-8s %10s MB %8s MB %8s s %10s s %9s s%s\n' "$target" "$(mb "$(stat -c %s "$dir/$target.tar.gz")")" \
    "$(mb "$(cat "$dir/$target.size")")" "$(secs "$pigz")" "$(secs "$gozip")" "$(secs "$first")" "$note"
  rm "$dir/$target.tar.gz"
  stop_engine
done

phase "done"
echo "container-test: passed in $(( SECONDS - t0 )) s"
