# SPDX-License-Identifier: GPL-2.0
#
# TAP for the guest's shell test programs (tests/*/*_test.sh), sourced
# from /softcm/tests/lib (make copies it into build/tests/lib).  Results
# are numbered by the caller's $n, which starts at 0; skip_rest reads the
# case names from the caller's $cases, whose last entry is its cleanup.
# (No "-" before a name: tests/vm/parse.py would keep it in the name.)

# ok NAME / not_ok NAME [FILE...]: one result, with the files as comments.
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() {
	local f
	n=$((n + 1))
	echo "not ok $n $1"
	shift
	for f in "$@"; do
		[ -e "$f" ] && sed "s|^|# ${f##*/}: |" "$f"
	done
	return 0
}
say() { echo "# $*"; }

# skip_rest WHY: every case still to come but the last, skipped.
skip_rest() {
	while [ "$n" -lt $((${#cases[@]} - 1)) ]; do
		n=$((n + 1))
		echo "ok $n ${cases[$((n - 1))]} # SKIP $1"
	done
}

# nap SECONDS: sleep(1) without starting it, which costs the debug kernel
# about 0.1 s of CPU each time: a read with a timeout, from a pipe this
# shell holds both ends of (opened once), so no line ever comes.
nap() {
	[ -n "${nap_fd:-}" ] || exec {nap_fd}<> <(:)
	read -r -t "$1" -u "$nap_fd"
	return 0
}

# poll TRIES CMD...: run CMD every 0.1 s until it succeeds, at most TRIES
# times (TRIES / 10 seconds).
poll() {
	local i tries=$1 step=0.1
	shift
	# On the debug kernel every program a check starts costs about half
	# a second of CPU (KASAN and kmemleak on each page it maps): look a
	# third as often, for as long.
	if [ "${SOFTCM_KERNEL:-stock}" = debug ]; then
		step=0.3 tries=$(((tries + 2) / 3))
	fi
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		nap $step
	done
	return 1
}

# What the polls look for in a program's output, read by the shell itself:
# on the debug kernel every program a check starts costs about half a
# second of CPU.  has_line FILE LINE: FILE has LINE, whole; has_prefix
# FILE TEXT: a line that begins with TEXT; has_text FILE TEXT: a line
# with TEXT; has_match FILE ERE: a line that matches the extended
# regular expression ERE.
file_has() {
	local l
	# A program's output file may not be there yet; that is a "no".
	[ -r "$2" ] || return 1
	while IFS= read -r l || [ -n "$l" ]; do
		case $1 in
		line) [ "$l" = "$3" ] ;;
		prefix) [ "${l#"$3"}" != "$l" ] ;;
		text) [ "${l#*"$3"}" != "$l" ] ;;
		*) [[ $l =~ $3 ]] ;;
		esac && return 0
	done <"$2"
	return 1
}
has_line() { file_has line "$@"; }
has_prefix() { file_has prefix "$@"; }
has_text() { file_has text "$@"; }
has_match() { file_has match "$@"; }
# value_of FILE KEY: the second column of FILE's line whose first is KEY
# (a /proc/net/softcm_stats counter), by the shell itself.
value_of() {
	local k v
	while read -r k v; do
		[ "$k" = "$2" ] && { echo "$v"; return; }
	done <"$1"
}
