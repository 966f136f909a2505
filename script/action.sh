#!/usr/bin/env bash
# The `run:` of ralph's composite action (action.yml, claude/, codex/ and gemini/action.yml): it starts
# ralph's image itself, so that the agent and the verify commands see the toolchains the job set up before
# ralph's step (actions/setup-go, setup-node, ...), which a container action never does.
#
#   script/action.sh where     check that $RALPH_IMAGE is named by digest, and say whether the view
#                              can run here: writes wrap=true or wrap=false to $GITHUB_OUTPUT, and why
#                              not to the log (the composite then runs the plain container step instead)
#   script/action.sh run       docker run ralph's image ($RALPH_IMAGE, by digest) with the view
#   script/action.sh args      print the docker run arguments, one a line, and run nothing (for tests)
#
# The view: the runner's system and tool directories (/usr /bin /sbin /lib* /opt /etc) mounted read-only at
# their own paths over the image's, so that every path a setup step put in PATH, GOROOT or JAVA_HOME is
# there; of the runner's home, only the toolchain homes (~/.cargo, ~/.rustup) and the caches the job
# restored (Go's build and module caches, npm's, pip's), read-only; the workspace,
# RUNNER_TEMP (the file commands, the event) and the tool cache at their own paths. Not the Docker socket,
# not the rest of the runner's home. ralph and the agent's CLI are in the image's /ralph, which no mount
# covers. The step's PATH and an allow-list of toolchain variables go in; the runner's own tokens
# (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*) never do. RALPH_VIEW_DOCKER_ARGS, from the workflow's
# env, adds docker run arguments (a --network, a mount). ralph gets NET_ADMIN beyond Docker's
# defaults, for its owner-match firewall; its supervisor drops every capability before the agent runs.
set -euo pipefail

die() {
  echo "ralph's action: $*" >&2
  exit 2
}

# image checks that RALPH_IMAGE names an image by digest.
image() {
  local img="${RALPH_IMAGE:-}"
  case "$img" in
  *@sha256:0000000000000000000000000000000000000000000000000000000000000000)
    die "this commit of ralph's action names no published image ($img): use a release (ralph-dev/gh-ralph@vX.Y.Z, or its commit), whose action files the release workflow pinned to its images' digests" ;;
  *@sha256:[0-9a-f]* | sha256:[0-9a-f]*) ;; # by digest, or a local image by its id
  *) die "RALPH_IMAGE is \"$img\", not an image named by digest (name@sha256:...): the action pins its image so that pinning the action pins the image" ;;
  esac
  printf '%s\n' "$img"
}

# The variables the view passes on, besides GITHUB_*, RUNNER_*, INPUT_* and RALPH_*: what setup steps
# export for their toolchains. Never the runner's tokens.
toolchain_vars=(PATH CI GOROOT GOPATH GOMODCACHE GOCACHE GOFLAGS GOTOOLCHAIN GOPROXY JAVA_HOME JAVA_HOME_8_X64
  JAVA_HOME_11_X64 JAVA_HOME_17_X64 JAVA_HOME_21_X64 GRADLE_HOME MAVEN_HOME M2_HOME CARGO_HOME RUSTUP_HOME
  RUSTUP_TOOLCHAIN pythonLocation Python_ROOT_DIR Python2_ROOT_DIR Python3_ROOT_DIR PYTHONPATH PIP_CACHE_DIR
  LD_LIBRARY_PATH PKG_CONFIG_PATH NODE_PATH NODE_OPTIONS NPM_CONFIG_CACHE npm_config_cache DOTNET_ROOT
  ANDROID_HOME ANDROID_SDK_ROOT LANG LC_ALL)

# never are the variables that do not go in, whatever their prefix.
never() {
  case "$1" in
  ACTIONS_* | GITHUB_TOKEN | RUNNER_TRACKING_ID) return 0 ;;
  esac
  return 1
}

args() {
  local img
  img="$(image)"
  : "${GITHUB_WORKSPACE:?not set: run ralph's action as a step of a workflow}"
  : "${RUNNER_TEMP:?not set: run ralph's action as a step of a workflow}"
  local a=(run --rm --workdir "$GITHUB_WORKSPACE" --cap-add NET_ADMIN --security-opt no-new-privileges)
  # The runner's system and tool directories, read-only at their own paths; a link (/bin -> usr/bin on
  # a merged /usr) is the image's own and already points into the mounted /usr.
  local d
  for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /opt /etc; do
    if [ -d "$d" ] && [ ! -L "$d" ]; then
      a+=(-v "$d:$d:ro")
    fi
  done
  # Of the runner's home, the toolchain homes only; the agent may read them too (Landlock).
  local readable="/ralph${RALPH_AGENT_READABLE:+:$RALPH_AGENT_READABLE}"
  for d in "${HOME:-/nonexistent}/.cargo" "${HOME:-/nonexistent}/.rustup" "${CARGO_HOME:-}" "${RUSTUP_HOME:-}"; do
    if [ -n "$d" ] && [ -d "$d" ] && [ ! -L "$d" ]; then
      a+=(-v "$d:$d:ro")
      readable="$readable:$d"
    fi
  done
  # The caches the job restored (actions/setup-go's, setup-node's, setup-python's cache: or actions/cache),
  # read-only at their own paths: Go's build and module caches, npm's and pip's, where the step's
  # GOCACHE, GOMODCACHE (GOPATH), npm_config_cache and PIP_CACHE_DIR name them, else their places under
  # the runner's home. The agent may read them (Landlock); ralph gets their paths in the same variables
  # (its HOME is not the runner's), seeds the step's module cache from the job's (GOPROXY=file://) and
  # gives the agent and the verify commands writable caches of the step's own.
  local passed=" "
  local gopath="${GOPATH:-${HOME:-/nonexistent}/go}"
  local cache name
  for cache in "GOCACHE=${GOCACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/go-build}" \
    "GOMODCACHE=${GOMODCACHE:-${gopath%%:*}/pkg/mod}" \
    "npm_config_cache=${npm_config_cache:-${NPM_CONFIG_CACHE:-${HOME:-/nonexistent}/.npm}}" \
    "PIP_CACHE_DIR=${PIP_CACHE_DIR:-${HOME:-/nonexistent}/.cache/pip}"; do
    name="${cache%%=*}"
    d="${cache#*=}"
    case "$d" in
    /*/*) ;;    # an absolute path below the root
    *) continue ;; # relative, empty or the root: never mounted
    esac
    if [ -d "$d" ] && [ ! -L "$d" ] && [ "$d" != "${HOME:-}" ]; then
      a+=(-v "$d:$d:ro" -e "$name=$d")
      readable="$readable:$d"
      passed="$passed$name "
    fi
  done
  # The tool cache when it is not under /opt (RUNNER_TOOL_CACHE on a self-hosted runner).
  if [ -n "${RUNNER_TOOL_CACHE:-}" ] && [ -d "$RUNNER_TOOL_CACHE" ] && [ "${RUNNER_TOOL_CACHE#/opt/}" = "$RUNNER_TOOL_CACHE" ]; then
    a+=(-v "$RUNNER_TOOL_CACHE:$RUNNER_TOOL_CACHE:ro")
    readable="$readable:$RUNNER_TOOL_CACHE"
  fi
  # What a container action gets, at the runner's own paths: the workspace, and RUNNER_TEMP, which holds
  # the file commands (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) and the event. ralph closes them to the agent.
  a+=(-v "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" -v "$RUNNER_TEMP:$RUNNER_TEMP")
  local f
  for f in GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_ENV GITHUB_PATH GITHUB_STATE GITHUB_EVENT_PATH; do
    local p="${!f:-}"
    if [ -n "$p" ] && [ "${p#"$RUNNER_TEMP"/}" = "$p" ] && [ -e "$p" ]; then
      a+=(-v "$p:$p")
    fi
  done
  # ralph's own HOME, not the runner's.
  a+=(-e "HOME=$RUNNER_TEMP/_ralph_home")
  # ralph's and the CLI's directory, read-only for the agent too; after the step's PATH, so that the
  # job's toolchains come first.
  a+=(-e "PATH=${PATH:-/usr/bin:/bin}:/ralph/bin" -e "RALPH_AGENT_READABLE=$readable")
  a+=(-e GITHUB_ACTIONS=true -e CI=true)
  local name
  while IFS= read -r name; do
    case "$name" in
    PATH | HOME | CI | GITHUB_ACTIONS | RALPH_AGENT_READABLE) continue ;;
    esac
    if never "$name"; then
      continue
    fi
    case "$name" in
    GITHUB_* | RUNNER_* | INPUT_* | RALPH_*) a+=(-e "$name") ;;
    esac
  done < <(compgen -e)
  for name in "${toolchain_vars[@]}"; do
    if [ "${passed#* "$name" }" != "$passed" ]; then
      continue # a cache of the job's, passed above
    fi
    if [ "$name" != PATH ] && [ "$name" != CI ] && [ -n "${!name+x}" ]; then
      a+=(-e "$name")
    fi
  done
  # More docker run arguments from the workflow's env (never the agent's): a network (--network), a mount.
  local extra=()
  read -ra extra <<<"${RALPH_VIEW_DOCKER_ARGS:-}"
  a+=("${extra[@]}")
  a+=(--entrypoint /ralph/bin/gh-ralph "$img" action)
  printf '%s\n' "${a[@]}"
}

case "${1:-}" in
where)
  image >/dev/null
  why=""
  if [ "${RUNNER_OS:-$(uname -s)}" != "Linux" ]; then
    why="the runner is not Linux (${RUNNER_OS:-$(uname -s)})"
  elif [ -f /.dockerenv ] || [ -f /run/.containerenv ]; then
    why="the job runs in a container (jobs.<id>.container): the runner's directories are not where docker run would mount them from"
  elif ! command -v docker >/dev/null 2>&1; then
    why="there is no docker command"
  elif ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    why="there is no local Docker daemon"
  fi
  if [ -n "$why" ]; then
    echo "::warning title=ralph::the toolchain view cannot run here: $why. ralph runs as a plain container action instead: the agent and the verify commands see only what ralph's image holds (no actions/setup-* toolchain, no runner tools), and Landlock, not the view, confines them (README: \"The Action's images\")."
    echo "wrap=false" >>"${GITHUB_OUTPUT:-/dev/stdout}"
  else
    echo "wrap=true" >>"${GITHUB_OUTPUT:-/dev/stdout}"
  fi
  ;;
args)
  args
  ;;
run)
  mapfile -t a < <(args)
  [ "${#a[@]}" -gt 0 ] || exit 2
  mkdir -p "$RUNNER_TEMP/_ralph_home"
  exec docker "${a[@]}"
  ;;
*)
  echo "usage: script/action.sh where|run|args" >&2
  exit 2
  ;;
esac
