#!/usr/bin/env bash
# One-step set-up for ltbench on Debian 12: installs the Debian packages the
# build needs (only those missing), then configures and compiles into build/.
# Safe to run again: every step skips what is already done.
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential meson ninja-build pkg-config
          libpng-dev zlib1g-dev libcriterion-dev libopenblas-openmp-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release
fi
meson compile -C build
