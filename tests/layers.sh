#!/bin/sh
# The include layering docs/development.md's layout section states: each folder
# includes only folders below it (or itself), folders on one level never
# include each other, and no two files include each other.
#   src:   core < io < attn < nn < model, datasets < train < results < experiment
#   bench: common < each experiment's folder < the registry (bench/*.c, *.h)
#          < tools, all above src
# Usage: tests/layers.sh [SOURCE_ROOT]; exit 1 naming every include that
# runs up or across, 0 when there is none.
root=${1:-.}
cd "$root" || exit 2
# "file target" for every quoted include, then one pass that ranks both ends
grep -o '^#include "[^"]*"' -r src bench --include='*.c' --include='*.h' |
    sed 's/:#include "\(.*\)"$/ \1/' | sort |
    awk -v bench_dirs="$(find bench -mindepth 1 -maxdepth 1 -type d -printf '%f ')" \
        -v bench_files="$(find bench -maxdepth 1 -name '*.h' -printf '%f ')" '
    BEGIN {
        split("core io attn nn model datasets train results experiment", names, " ")
        split("0 1 2 3 4 4 5 6 7", ranks, " ")
        for (i in names) rank[names[i]] = ranks[i]
        n = split(bench_dirs, dirs, " ")
        for (i = 1; i <= n; i++)
            rank["bench/" dirs[i]] = dirs[i] == "common" ? 8 : dirs[i] == "tools" ? 11 : 9
        rank["bench"] = 10
        bad = 0
    }
    # the folder a file sits in, as a layer: "attn", "bench/copy", "bench"
    function layer_of_file(path,   p) {
        split(path, p, "/")
        if (p[1] == "src") return p[2]
        return p[3] == "" ? "bench" : "bench/" p[2]
    }
    # the folder an include names, seen from a file in layer `from`: "x.h"
    # is bench/x.h (the registry) if there is one, else beside the file
    function layer_of_target(target, from,   p) {
        if (split(target, p, "/") == 1)
            return from ~ /^bench/ && index(" " bench_files " ", " " target " ") ? "bench" : ""
        if (p[1] in rank) return p[1]
        if (("bench/" p[1]) in rank) return "bench/" p[1]
        return ""
    }
    {
        file = $1; target = $2
        from = layer_of_file(file)
        if (!(from in rank)) {
            print file ": folder " from " has no place in the layering (add it to tests/layers.sh)"
            bad = 1; next
        }
        to = layer_of_target(target, from)
        if (target ~ /\// && from !~ /^bench/) included[file " " target] = 1
        if (to == "" || to == from) next
        if (rank[to] >= rank[from]) {
            print file " includes " target ": " from " may include only folders below it"
            bad = 1
        }
    }
    END {
        # two files that include each other (paths as written: "dir/name.h")
        for (k in included) {
            split(k, f, " ")
            name = f[1]; sub(/^src\//, "", name)
            if (("src/" f[2] " " name) in included) {
                print f[1] " and src/" f[2] " include each other"; bad = 1
            }
        }
        if (!bad) print "layers: every include runs down"
        exit bad
    }'
