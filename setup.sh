#!/usr/bin/env bash
# One-step set-up for ltbench on Debian 12: installs the Debian packages the
# build needs (only those missing), then configures and compiles into build/.
# Safe to run again: every step skips what is already done.
#
#   ./setup.sh           set up and build
#   ./setup.sh --test    set up, build and run the whole test suite
set -euo pipefail
cd "$(dirname "$0")"

run_tests=0
case "${1:-}" in
  "") ;;
  --test) run_tests=1 ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown argument '$1' (expected nothing or --test)" >&2; exit 2 ;;
esac

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

# -march=native (meson option `native`): the build runs where it was built,
# and the attention kernels' element-wise loops (exponentials, feature maps,
# softmax rows, recurrent steps) then use the CPU's full SIMD width. Measured
# on a 2-core AVX-512 Xeon, attention forward+backward ran 13-28% faster
# (linear causal and not, softmax causal and not); matrix products are
# OpenBLAS's and do not change. LTBENCH_NATIVE=false builds portable binaries.
if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release -Dnative="${LTBENCH_NATIVE:-true}"
fi
meson compile -C build

if [ "$run_tests" -eq 1 ]; then
  status=0
  meson test -C build --print-errorlogs || status=$?
  # Criterion counts its cases per executable; add them up into one line.
  awk '/Synthesis: Tested:/ { for (i = 1; i <= NF; i++) {
         if ($i == "Passing:") p += $(i + 1); if ($i == "Failing:") f += $(i + 1);
         if ($i == "Crashing:") f += $(i + 1) } }
       END { printf "tests: %d passed, %d failed\n", p, f }' build/meson-logs/testlog.txt
  exit "$status"
fi
