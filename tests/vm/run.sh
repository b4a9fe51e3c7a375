#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a test kernel under QEMU with our module, library and test programs,
# run the programs, and report one line per test case.
#
#   tests/vm/run.sh [options] [PROGRAM...]
#
#   PROGRAM            test programs from build/tests (default: all *_test)
#   --kernel K         stock (Debian's kernel, default) or debug (ours, with
#                      KASAN, lockdep, kmemleak; built on first use)
#   --tests-dir DIR    where the programs are (default build/tests)
#   --timeout S        whole-guest limit in seconds (default 1800 on the
#                      stock kernel, 4800 on the debug kernel: the debug
#                      run measures about 2300 s in one guest, and the
#                      other kernel's guest runs beside it)
#   --test-timeout S   per-program limit inside the guest, 0 = none
#                      (default 600 stock, 1800 debug)
#   --counts FILE      append "passed failed skipped" to FILE
#   --inventory FILE   every program and case FILE lists for this kernel
#                      must report, and nothing else (make check passes
#                      tests/vm/inventory); with no PROGRAM, those it
#                      marks "-" for this kernel are not run
#   --skips FILE       the skips allowed, each with its reason (default
#                      tests/vm/skips; any other skip fails the run)
#   --leftover-wait S  how long a program's ids, files and namespaces may
#                      take to go after it ends (default 30 s stock,
#                      120 s debug: timewait is 8x longer there)
#   --artifacts DIR    copy the files the programs left in $SOFTCM_ARTIFACTS
#                      (captures, benchmark results) to DIR
#   --shards N         run the programs in N guests side by side, each
#                      taking the next one when it is free, the longest
#                      first by their time in tests/vm/budget (default 1:
#                      one guest, the programs in the order given)
#   --join-after FILE  boot every guest but the first once FILE exists
#                      (make check: once the other kernel's run is over),
#                      or after the guest limit at the latest
#   --no-leak-scan     skip the closing kmemleak scan and its wait (the
#                      runner's self-checks that do not test for leaks)
#   --demo             run tests/vm/demo.sh instead of tests (make run)
#   --keep             keep the run directory (console log, results)
#   --discard          remove it even when the run is red
#
# Exit status 0 only when every case passed, the guest finished, and the
# kernel console shows no report.  Runs `make` first if the build is
# missing.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

kernel=stock tests_dir=$top/build/tests timeout= test_timeout=
counts= demo=0 keep=0 programs=() artifacts_out=
inventory= skips=$here/skips leftover_wait= leak_scan=1 shards=1
join_after=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--tests-dir) tests_dir=$(cd "$2" && pwd); shift ;;
	--timeout) timeout=$2; shift ;;
	--test-timeout) test_timeout=$2; shift ;;
	--counts) counts=$2; shift ;;
	--inventory) inventory=$2; shift ;;
	--skips) skips=$2; shift ;;
	--leftover-wait) leftover_wait=$2; shift ;;
	--artifacts) artifacts_out=$2; shift ;;
	--no-leak-scan) leak_scan=0 ;;
	--shards) shards=$2; shift ;;
	--join-after) join_after=$2; shift ;;
	--demo) demo=1 ;;
	--keep) keep=1 ;;
	--discard) keep=-1 ;;
	-h | --help) sed -n '4,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) programs+=("$1") ;;
	esac
	shift
done

extra_cmdline= wflag=
# The debug kernel runs everything several times slower under TCG.
# boot_limit: seconds a guest may take to reach init (run.sh boots it
# again once if it does not).
boot_limit=120
if [ "$kernel" = debug ]; then
	boot_limit=300
	timeout=${timeout:-4800} test_timeout=${test_timeout:-1800}
	leftover_wait=${leftover_wait:-120}
else
	timeout=${timeout:-1800} test_timeout=${test_timeout:-600}
	leftover_wait=${leftover_wait:-30}
fi
case "$kernel" in
stock)
	kver=$(stock_kver) || die "no Debian kernel with headers installed (tests/vm/install-deps.sh)"
	image="$SOFTCM_CACHE/kernels/vmlinux-$kver"
	if [ ! -e "$image" ]; then
		# The uncompressed ELF boots through PVH and saves the ~3 s
		# of XZ decompression that TCG charges on every boot.
		mkdir -p "$(dirname "$image")"
		# A temporary file of its own: the self-check and the VM run
		# of make check may both get here on a cold machine.
		tmp=$(mktemp "$image.XXXXXX")
		"$(source_tree)/scripts/extract-vmlinux" "/boot/vmlinuz-$kver" >"$tmp"
		mv "$tmp" "$image"
	fi
	modroot=/
	kdir=/lib/modules/$kver/build
	;;
debug)
	kbuild=$("$here/build-debug-kernel.sh")
	kver=$(cat "$kbuild/include/config/kernel.release")
	image=$kbuild/arch/x86/boot/bzImage
	modroot=$kbuild/mods
	kdir=$kbuild
	wflag=W=1
	# Warnings are bugs; kmemleak scans are triggered by init.
	# no5lvl: with -cpu max the guest has LA57, and 6.12's KASAN took an
	# interrupt during identify_cpu() on a direct-map address (five-level
	# layout) whose shadow was not mapped yet: a wild-memory-access
	# report, then a hung boot, on a loaded host.
	extra_cmdline="panic_on_warn=1 kasan_multi_shot kmemleak=on no5lvl"
	;;
*) die "unknown kernel '$kernel' (stock or debug)" ;;
esac

ko=$top/build/kmod/$kernel/drivers/softcm/softcm.ko
if [ ! -e "$top/build/lib/libsoftcm.so.1" ] || [ ! -d "$tests_dir" ]; then
	make -C "$top" --no-print-directory userspace tests >&2
fi
mkdir -p "$top/build/vm"
# make check runs the self-check and the VM run of one kernel at once:
# one builds the module, the other waits and finds it built.
if ! flock "$top/build/vm/module-$kernel.lock" \
	make -C "$top" --no-print-directory module KDIR="$kdir" KTAG="$kernel" $wflag \
	>"$top/build/vm/module-$kernel.log" 2>&1; then
	cat "$top/build/vm/module-$kernel.log" >&2
	die "module build for the $kernel kernel failed"
fi

kunit_ko=$top/build/kmod/$kernel/tests/kunit/softcm_kunit.ko
bugs_ko=$top/build/kmod/$kernel/tests/vm/bugs/softcm_bugs.ko
kunit_suites=$(sed -n 's/^[[:space:]]*\.name = "\(softcm_[a-z0-9_]*\)",$/\1/p' \
	"$top"/tests/kunit/*_test.c | paste -sd, -)

if [ ${#programs[@]} -eq 0 ] && [ "$demo" = 0 ]; then
	# KUnit first, on kernels that have it.
	[ -e "$kunit_ko" ] && programs+=(kunit)
	# Every program built, but those the inventory marks "-" for this
	# kernel (one that is built and not listed still runs, and fails).
	not_here=
	[ -n "$inventory" ] && not_here=$(awk -v c="$([ "$kernel" = debug ] && echo 3 || echo 2)" \
		'$1 !~ /^#/ && NF == 3 && $c == "-" { print $1 }' "$inventory")
	for p in "$tests_dir"/*_test "$tests_dir"/*_test.sh; do
		[ -x "$p" ] || continue
		grep -qxF "$(basename "$p")" <<<"$not_here" && continue
		programs+=("$(basename "$p")")
	done
fi

base=$("$here/initramfs.sh" "$kernel" "$kver" "$modroot")
run=$(mktemp -d "$top/build/vm/$kernel.XXXXXX")
mkdir -p "$run/artifacts" "$run/host"

# boot_guest DIR: one guest running the programs it takes from the queue; its
# console, results and wall time in DIR, its artifacts unpacked into the
# run's shared directory (each program names its own files).
boot_guest() {
	local dir=$1 stage status=0 t0 p f try qemu dispatcher
	stage=$dir/overlay
	mkdir -p "$stage/softcm"/{bin,lib,tests}
	install -m 0755 "$here/init.sh" "$stage/init"
	install -m 0755 "$here/demo.sh" "$stage/softcm/demo.sh"
	cp "$ko" "$stage/softcm/softcm.ko"
	cp -P "$top"/build/lib/libsoftcm.so* "$stage/softcm/lib/"
	# glibc's pthread_cancel() unwinds through libgcc_s, which it
	# dlopen()s; the base image has it only if one of its binaries
	# links it.
	for f in /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 /lib/x86_64-linux-gnu/libgcc_s.so.1; do
		[ -e "$f" ] && { cp -L "$f" "$stage/softcm/lib/"; break; }
	done
	# softcm exec's compat libraries, where the tool looks: next to
	# libsoftcm.
	cp -r "$top/build/lib/softcm" "$stage/softcm/lib/"
	cp "$top/build/bin/softcm" "$stage/softcm/bin/"
	[ -e "$kunit_ko" ] && cp "$kunit_ko" "$stage/softcm/"
	[ -e "$bugs_ko" ] && cp "$bugs_ko" "$stage/softcm/"
	# every program: which of them this guest runs, the queue says
	for p in "${programs[@]}"; do
		[ "$p" = kunit ] && continue
		cp "$tests_dir/$p" "$stage/softcm/tests/"
	done
	# Helpers the programs may source or run (netns scripts, fixtures).
	[ -d "$tests_dir/lib" ] && cp -r "$tests_dir/lib" "$stage/softcm/tests/"
	cat >"$stage/softcm/run.conf" <<-CONF
	SOFTCM_TEST_TIMEOUT=$test_timeout
	SOFTCM_MODE=$([ "$demo" = 1 ] && echo demo || echo test)
	SOFTCM_KERNEL=$kernel
	SOFTCM_SLOW_SHIFT=${SOFTCM_SLOW_SHIFT:-}
	SOFTCM_LEFTOVER_WAIT=$leftover_wait
	SOFTCM_LEAK_SCAN=$leak_scan
	CONF
	(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0) >"$dir/overlay.cpio"
	# The kernel unpacks concatenated newc archives in order; ours
	# overrides.
	cat "$base" "$dir/overlay.cpio" >"$dir/initrd.cpio"

	t0=$(date +%s)
	for try in 1 2; do
		status=0
		rm -f "$dir/results.log" "$dir/res.in" "$dir/res.out"
		mkfifo "$dir/res.in" "$dir/res.out"
		timeout -k 5 "$timeout" qemu-system-x86_64 \
			-nodefaults -display none -no-reboot \
			-machine pc -cpu max -smp 2 -m 2G \
			-kernel "$image" -initrd "$dir/initrd.cpio" \
			-append "console=ttyS0 panic=-1 oops=panic no_hash_pointers $extra_cmdline" \
			-chardev "pipe,id=results,path=$dir/res" \
			-serial "file:$dir/console.log" -serial chardev:results \
			-serial "file:$dir/artifacts.b64" \
			</dev/null &
		qemu=$!
		# The results port: the guest's lines to results.log, its
		# requests for the next program answered from the queue.
		python3 "$here/dispatch.py" serve --queue "$run/queue" --pid "$qemu" \
			"$dir/res" "$dir/results.log" &
		dispatcher=$!
		# A guest that has not reached init after boot_limit seconds
		# never will (a kernel that hung while booting, before any of
		# ours ran): it is booted once more, and the run says so, with
		# that console kept, instead of waiting out the whole limit.
		while kill -0 "$qemu" 2>/dev/null &&
			! grep -qa '^SOFTCM-BOOT' "$dir/results.log" 2>/dev/null; do
			if [ $(($(date +%s) - t0)) -ge "$boot_limit" ]; then
				kill "$qemu" 2>/dev/null
				break
			fi
			sleep 1
		done
		wait "$qemu" || status=$?
		wait "$dispatcher" || true
		grep -qa '^SOFTCM-BOOT' "$dir/results.log" 2>/dev/null && break
		[ "$try" = 2 ] && break
		echo "# guest $dir did not reach init in ${boot_limit}s; booting it again" \
		     "(its console: $dir/console.boot$try.log)"
		mv "$dir/console.log" "$dir/console.boot$try.log"
		rm -f "$dir/artifacts.b64"
		t0=$(date +%s)
	done
	[ "$status" = 124 ] && echo "# guest killed after ${timeout}s" >&2
	echo "$(($(date +%s) - t0))" >"$dir/secs"
	# What the guest cost the host: the CPU time of this subshell's
	# children (QEMU above all, its dispatcher, the waits for it),
	# which a loaded host's guest cannot see (under TCG its clock runs
	# on while its vCPU waits for a host CPU).
	times >"$dir/times"
	awk 'NR == 2 { split($1, u, "m"); split($2, s, "m")
		printf "%d\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$dir/times" >"$dir/cpu"

	# The guest's artifacts; parse.py checks each announced file
	# arrived whole.
	if [ -s "$dir/artifacts.b64" ]; then
		tr -d '\r' <"$dir/artifacts.b64" | base64 -d 2>/dev/null |
			tar -C "$run/artifacts" -xf - 2>/dev/null || true
	fi
}

for p in "${programs[@]}"; do
	[ "$p" = kunit ] || [ -x "$tests_dir/$p" ] || die "no test program $tests_dir/$p"
done
# The queue the guests take their programs from (tests/vm/dispatch.py):
# with several guests the longest first, so that the last ones taken are
# short; with one, in the order given.
[ "$demo" = 1 ] && shards=1
if [ "$shards" -gt 1 ]; then
	python3 "$here/dispatch.py" order "$kernel" "$here/budget" "${programs[@]}" >"$run/queue"
else
	printf '%s\n' "${programs[@]}" >"$run/queue"
fi
# join_wait: until $join_after exists, or the guest limit has passed.
join_wait() {
	local t0
	t0=$(date +%s)
	while [ ! -e "$join_after" ] && [ $(($(date +%s) - t0)) -lt "$timeout" ]; do
		sleep 2
	done
}
guest_logs=()
for ((g = 0; g < shards; g++)); do
	mkdir -p "$run/g$g"
	{
		[ "$g" -gt 0 ] && [ -n "$join_after" ] && join_wait
		boot_guest "$run/g$g"
	} &
	guest_logs+=("$run/g$g/results.log" "$run/g$g/console.log")
done
wait
if [ "$shards" -gt 1 ]; then
	for ((g = 0; g < shards; g++)); do
		echo "# guest $((g + 1)) of $kernel ran:" \
			$(sed -n 's/^SOFTCM-BEGIN //p' "$run/g$g/results.log" | tr -d '\r')
	done
fi

if [ -n "$artifacts_out" ]; then
	mkdir -p "$artifacts_out"
	cp -a "$run/artifacts/." "$artifacts_out/"
fi
# Host-side checks of what the guests captured: every packet capture is
# dissected by tshark, one TAP program each: CM traffic by
# tests/interop/dissect.py, RC data traffic (a capture named *_data) by
# tests/interop/dissect_data.py.
for f in "$run"/artifacts/*.pcap; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .pcap)
	checker=dissect.py
	case $name in *_data) checker=dissect_data.py ;; esac
	rc=0
	python3 "$top/tests/interop/$checker" "$f" >"$run/host/$name.tap" 2>&1 || rc=$?
	echo "$rc" >"$run/host/$name.rc"
done

if [ "$demo" = 1 ]; then
	tr -d '\r' <"$run/g0/results.log" >"$run/demo.log"
	sed -n '/^SOFTCM-BOOT/,/^SOFTCM-DEMO-EXIT/p' "$run/demo.log" | grep -v '^SOFTCM-'
	rc=$(sed -n 's/^SOFTCM-DEMO-EXIT //p' "$run/demo.log")
	if [ "$rc" != 0 ] || grep -qE 'BUG: |WARNING: |Oops|Kernel panic' "$run/g0/console.log"; then
		echo "softcm: demo failed; console: $run/g0/console.log" >&2
		exit 1
	fi
	[ "$keep" = 1 ] || rm -rf "$run"
	exit 0
fi

rc=0
python3 "$here/parse.py" "$kernel" "${guest_logs[@]}" \
	${counts:+--counts "$counts"} \
	${inventory:+--inventory "$inventory"} --skips "$skips" \
	--artifacts-dir "$run/artifacts" --host-dir "$run/host" \
	--kunit-py "$(source_tree)/tools/testing/kunit/kunit.py" \
	$(for p in "${programs[@]}"; do [ "$p" = kunit ] && echo --kunit-suites "$kunit_suites"; done) \
	$([ "$kernel" = debug ] && echo --debug-kernel) \
	$([ "$leak_scan" = 0 ] && echo --no-leak-scan) || rc=$?
for ((g = 0; g < shards; g++)); do
	echo "# time $kernel guest$([ "$shards" -gt 1 ] && echo $((g + 1))) $(cat "$run/g$g/secs")" \
		"(limit $timeout; host CPU $(cat "$run/g$g/cpu" 2>/dev/null) s)"
done
if [ "$rc" != 0 ] && [ "$keep" != -1 ]; then
	for ((g = 0; g < shards; g++)); do
		echo "# console log: $run/g$g/console.log (last lines below)"
		tail -n 30 "$run/g$g/console.log" | sed 's/^/#   /'
	done
elif [ "$keep" != 1 ]; then
	rm -rf "$run"
fi
exit "$rc"
