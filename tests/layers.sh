#!/bin/sh
# The include layering docs/development.md's layout section states: each folder
# includes only folders below it (or itself), folders on one level never
# include each other, and no two files include each other.
#   core < io < attn < nn < model, datasets < train < results < experiment < bench
# Usage: tests/layers.sh [SOURCE_ROOT]; exit 1 naming every include that
# runs up or across, 0 when there is none.
root=${1:-.}
cd "$root" || exit 2
rank() {
    case $1 in
    core) echo 0 ;; io) echo 1 ;; attn) echo 2 ;; nn) echo 3 ;;
    model | datasets) echo 4 ;; train) echo 5 ;; results) echo 6 ;;
    experiment) echo 7 ;; bench) echo 8 ;; *) echo "" ;;
    esac
}
bad=0
includes=$(mktemp)
trap 'rm -f "$includes"' EXIT
for file in $(find src bench -name '*.c' -o -name '*.h' | sort); do
    case $file in
    src/*) from=$(echo "$file" | cut -d/ -f2) ;;
    *) from=bench ;;
    esac
    from_rank=$(rank "$from")
    if [ -z "$from_rank" ]; then
        echo "$file: folder '$from' has no place in the layering (add it to tests/layers.sh)"
        bad=1
        continue
    fi
    grep -o '^#include "[^"]*"' "$file" | sed 's/#include "\(.*\)"/\1/' |
        while read -r target; do
            echo "$file $target" >>"$includes"
            case $target in */*) ;; *) continue ;; esac
            to=${target%%/*}
            to_rank=$(rank "$to")
            [ -z "$to_rank" ] && continue # a system-like or generated header
            if [ "$to_rank" -gt "$from_rank" ] ||
                { [ "$to_rank" -eq "$from_rank" ] && [ "$to" != "$from" ]; }; then
                echo "$file includes $target: $from may include only folders below it"
                echo x >>"$includes.bad"
            fi
        done
done
[ -f "$includes.bad" ] && bad=1 && rm -f "$includes.bad"
# two files that include each other (paths as written: "dir/name.h")
while read -r file target; do
    name=${file#src/}
    grep -q "^src/$target $name\$" "$includes" 2>/dev/null &&
        echo "$file and src/$target include each other" && bad=1
done <"$includes"
[ "$bad" -eq 0 ] && echo "layers: every include runs down"
exit "$bad"
