#!/usr/bin/env bash
# script/pin-images.sh IMAGE TARGET=DIGEST...
#
# Writes the digests the release workflow pushed into the action files: each action file names its image
# as <registry>/<name>:<tag>@sha256:<digest> (three times: the where and view steps' RALPH_IMAGE and the plain step's
# docker://), which this rewrites to IMAGE:<tag>@DIGEST for the file of TARGET (slim: action.yml; an agent:
# <agent>/action.yml). It fails, changing nothing, when a digest is not sha256:<64 hex> or a file does not
# name its image exactly three times.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:?usage: script/pin-images.sh IMAGE TARGET=DIGEST...}"
shift
[ "$#" -gt 0 ] || { echo "script/pin-images.sh: no TARGET=DIGEST given" >&2; exit 2; }
version="$(cat VERSION)"
declare -A new=()
for td in "$@"; do
  target="${td%%=*}" digest="${td#*=}"
  if ! [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
    echo "script/pin-images.sh: $target's digest \"$digest\" is not sha256:<64 hex digits>" >&2
    exit 2
  fi
  file="$target/action.yml" tag="$version-$target"
  if [ "$target" = slim ]; then file=action.yml tag="$version"; fi
  [ -f "$file" ] || { echo "script/pin-images.sh: no $file for target $target" >&2; exit 2; }
  pattern="[a-z0-9][a-z0-9./_-]*:$tag@sha256:[0-9a-f]\{64\}"
  if [ "$(grep -o "$pattern" "$file" | wc -l)" -ne 3 ]; then
    echo "script/pin-images.sh: $file does not name an image :$tag@sha256:... three times (the where and view steps' RALPH_IMAGE, the plain step's docker://)" >&2
    exit 2
  fi
  new[$file]="s#$pattern#$image:$tag@$digest#g"
done
for file in "${!new[@]}"; do
  sed -i "${new[$file]}" "$file"
done
