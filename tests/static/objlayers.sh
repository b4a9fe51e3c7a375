#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The file-level call graph of a program's object files, exactly as the
# linker sees it (what each object leaves undefined that another defines),
# checked against a layering:
#
#   tests/static/objlayers.sh [-g] LAYERS OBJ...
#
#   LAYERS  the objects' basenames without .o, lowest layer first, layers
#           separated by '|', names by blanks: "abi | id | event | cma conn"
#   -g      print the graph ("a -> b: sym sym...") and succeed
#
# Fails, saying why, when an object calls (or refers to) one in a higher
# layer, when the objects' references form a cycle (files of one layer
# may refer to each other, but not in a loop), or when an object is not in
# LAYERS or a name in LAYERS has no object: a new file must be placed.

set -u
graph_only=0
if [ "${1:-}" = -g ]; then
	graph_only=1
	shift
fi
[ $# -ge 2 ] || { sed -n '7,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
layers=$1
shift

# "obj sym" per reference of @obj to a global @sym another object defines
edges=$(nm -P -A -g "$@" | awk '
	{ obj = $1; sub(/:$/, "", obj); sub(/.*\//, "", obj); sub(/\.o$/, "", obj) }
	$3 == "U" { use[++n] = obj " " $2; next }
	$3 ~ /^[A-Za-z]$/ && $3 != "w" && $3 != "v" { def[$2] = obj }
	END {
		for (i = 1; i <= n; i++) {
			split(use[i], u, " ")
			if ((u[2] in def) && def[u[2]] != u[1])
				print u[1], def[u[2]], u[2]
		}
	}' | sort -u) || exit 2

if [ "$graph_only" = 1 ]; then
	awk '{ k = $1 " -> " $2; s[k] = s[k] " " $3 } END { for (k in s) print k ":" s[k] }' \
		<<<"$edges" | sort
	exit 0
fi

objs=$(for o in "$@"; do basename "$o" .o; done | sort -u)
fail=0

# Every object in exactly one layer, and every layer's name an object.
placed=$(tr '|' '\n' <<<"$layers" | tr -s ' \t' '\n' | sed '/^$/d' | sort)
dup=$(uniq -d <<<"$placed")
[ -z "$dup" ] || { echo "in more than one layer: $dup"; fail=1; }
for o in $(comm -23 <(echo "$objs") <(uniq <<<"$placed")); do
	echo "$o.o is in no layer"
	fail=1
done
for o in $(comm -13 <(echo "$objs") <(uniq <<<"$placed")); do
	echo "no object for $o in the layers"
	fail=1
done

# No reference upwards.
up=$(awk -v layers="$layers" '
	BEGIN {
		n = split(layers, l, "|")
		for (i = 1; i <= n; i++) {
			m = split(l[i], f, " ")
			for (j = 1; j <= m; j++)
				level[f[j]] = i
		}
	}
	NF == 3 && ($1 in level) && ($2 in level) && level[$2] > level[$1] {
		print $1 ".o calls " $2 ".o (" $3 "), a higher layer"
	}' <<<"$edges")
[ -z "$up" ] || { echo "$up"; fail=1; }

# No cycle: tsort names the files of each loop it breaks on stderr.
loops=$(awk 'NF == 3 { print $1, $2 }' <<<"$edges" | sort -u | tsort 2>&1 >/dev/null |
	awk '/contains a loop/ { if (l != "") print l; l = ""; next }
	     { sub(/^tsort: /, ""); l = l " " $0 }
	     END { if (l != "") print l }')
if [ -n "$loops" ]; then
	sed 's/^/a cycle through:/' <<<"$loops"
	fail=1
fi

exit $fail
