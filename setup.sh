#!/usr/bin/env bash
# One-step set-up for ltbench on Debian 12: installs the Debian packages the
# build and `ltbench plot` need (only those missing), then configures and
# compiles into build/.
# Safe to run again: every step skips what is already done.
#
#   ./setup.sh           set up and build
#   ./setup.sh --test    set up, build and run the whole test suite
#   ./setup.sh --asan    also build into build-asan/ with AddressSanitizer and
#                        UBSan and run the whole suite there (a few minutes)
#   ./setup.sh --fuzz    also install clang and libFuzzer and build the
#                        fuzz harnesses into build-fuzz/ (tests/fuzz/README.md)
#   ./setup.sh --portable  also build portable binaries into build-portable/
#                        (a kernel set per x86-64 level, picked at run time)
#                        and run the whole suite under each set this CPU runs
set -euo pipefail
cd "$(dirname "$0")"

mode=build
case "${1:-}" in
  "") ;;
  --test) mode=test ;;
  --asan) mode=asan ;;
  --fuzz) mode=fuzz ;;
  --portable) mode=portable ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown argument '$1' (expected nothing, --test, --asan, --fuzz or --portable)" >&2
     exit 2 ;;
esac

# gnuplot-nox draws `ltbench plot`'s figures (pngcairo, no X11); valgrind
# counts instructions for `ltbench ab --measure instructions`.
packages=(build-essential meson ninja-build pkg-config
          libpng-dev zlib1g-dev libcriterion-dev libopenblas-openmp-dev gnuplot-nox
          libespeak-ng-dev espeak-ng-data libfftw3-dev wordnet-base
          libopenmpi-dev openmpi-bin valgrind)
# Fuzzing only: clang, its libFuzzer and sanitizer runtimes, its OpenMP.
# (The sanitizer build uses gcc's runtimes, which build-essential brings.)
[ "$mode" != fuzz ] || packages+=(clang libclang-rt-dev libomp-dev)

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

# Runs the suite in build folder $1, with test setup $2 if given.
run_suite() {
  local dir=$1 setup=${2:-} log=testlog.txt status=0
  local args=(-C "$dir" --print-errorlogs)
  if [ -n "$setup" ]; then
    args+=(--setup "$setup")
    log=testlog-$setup.txt
  fi
  meson test "${args[@]}" || status=$?
  # Criterion counts its cases per executable; add them up into one line.
  awk '/Synthesis: Tested:/ { for (i = 1; i <= NF; i++) {
         if ($i == "Passing:") p += $(i + 1); if ($i == "Failing:") f += $(i + 1);
         if ($i == "Crashing:") f += $(i + 1) } }
       END { printf "tests: %d passed, %d failed\n", p, f }' "$dir/meson-logs/$log"
  return "$status"
}

case "$mode" in
  test) run_suite build ;;
  asan)
    # Every ASan, LeakSanitizer or UBSan report fails its test (the 'asan'
    # test setup in tests/meson.build).
    if [ ! -f build-asan/build.ninja ]; then
      meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined
    fi
    meson compile -C build-asan
    run_suite build-asan asan ;;
  portable)
    # What a distribution or a container ships: no -march, the kernels
    # compiled per x86-64 level and chosen from cpuid. The suite runs once
    # per set this CPU runs, LTBENCH_KERNELS choosing it (its tests also
    # switch sets in-process and in child processes).
    if [ ! -f build-portable/build.ninja ]; then
      meson setup build-portable --buildtype=release -Dnative=false
    fi
    meson compile -C build-portable
    status=0
    for set in $(build-portable/ltbench --kernel-sets); do
      echo "setup: the suite under LTBENCH_KERNELS=$set (build-portable/)" >&2
      LTBENCH_KERNELS=$set run_suite build-portable || status=1
    done
    exit "$status" ;;
  fuzz)
    if [ ! -f build-fuzz/build.ninja ]; then
      CC=clang meson setup build-fuzz -Dfuzz=true
    fi
    meson compile -C build-fuzz
    echo "setup: fuzz harnesses in build-fuzz/tests/fuzz/; run them with tests/fuzz/run.sh" >&2 ;;
esac
