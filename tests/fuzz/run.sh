#!/usr/bin/env bash
# Runs libFuzzer harnesses from build-fuzz/, one at a time, at the lowest
# CPU priority (other work on the machine keeps its timings):
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     default: 300 s, every target
#
# Seeds come from tests/fuzz/corpus/TARGET/ (read only); what the fuzzer adds
# goes to build-fuzz/fuzz-work/TARGET/, and a crashing input to
# build-fuzz/fuzz-work/TARGET/crash-*. Prints one line per target with its
# executions; exits 1 if any target crashed.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${LTBENCH_FUZZ_BUILD:-build-fuzz}
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy checkpoint checkpoint_crc csv idx idx_gz cifar cifar_subset speech_cache)

if [ ! -d "$build/tests/fuzz" ]; then
  echo "run.sh: no $build/tests/fuzz: set it up with ./setup.sh --fuzz" >&2
  exit 2
fi

status=0
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz_$t
  [ -x "$exe" ] || { echo "run.sh: no harness $exe" >&2; exit 2; }
  work=$build/fuzz-work/$t
  mkdir -p "$work"
  log=$build/fuzz-work/$t.log
  # malloc_limit_mb: an allocation that large from an input of a few KiB is
  # a reader trusting a length it should have checked.
  rc=0
  nice -n 19 "$exe" "$work" "tests/fuzz/corpus/$t" -max_total_time="$seconds" \
    -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "$t: ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}, no crash"
  else
    echo "$t: CRASH after ${execs:-?} executions (exit $rc); see $log and $work/"
    status=1
  fi
done
exit "$status"
