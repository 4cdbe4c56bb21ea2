#!/bin/sh
# ibmcast bench: finds the build's benchmark programs, runs one with its
# arguments and gives back its figures, and refuses unknown names and
# options with exit 2.
set -u
build=$1
ib="$build/ibmcast"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check WHAT EXPECTED ACTUAL
	[ "$2" = "$3" ] || { echo "FAIL: $1: expected '$2', got '$3'"; fail=1; }
}
"$ib" bench --list >"$tmp/list"
check "list exit" 0 $?
for b in timers sa mtree; do
	grep -qx "  $b" "$tmp/list" || { echo "FAIL: $b not listed"; fail=1; }
done
# A small run: its table ends with the 1M/1k ratio line.
"$ib" bench timers 2000 >"$tmp/out" 2>&1
check "run exit" 0 $?
grep -q '^ 1M/1k ratio' "$tmp/out" || { echo "FAIL: no ratio line"; cat "$tmp/out"; fail=1; }
"$ib" bench bench_timers 1000 >/dev/null 2>&1
check "full name exit" 0 $?
"$ib" bench nosuch >/dev/null 2>"$tmp/err"
check "unknown benchmark exit" 2 $?
grep -q "no benchmark 'nosuch'" "$tmp/err" || { echo "FAIL: message"; fail=1; }
"$ib" bench ../ibmcast >/dev/null 2>&1
check "path as name exit" 2 $?
"$ib" bench --bogus >/dev/null 2>&1
check "bad option exit" 2 $?
IBMCAST_BENCH_DIR="$tmp" "$ib" bench --list >/dev/null 2>&1
check "empty bench dir exit" 1 $?
# On a terminal (a pty from script(1)): a progress line while the program
# is silent, its rows still whole, its exit status kept.
if command -v script >/dev/null 2>&1; then
	script -qec "'$ib' bench timers 2000" /dev/null >"$tmp/pty" 2>&1
	check "pty run exit" 0 $?
	grep -q '\[bench_timers running, [0-9]* s\]' "$tmp/pty" ||
		{ echo "FAIL: no progress line on the pty"; cat -A "$tmp/pty"; fail=1; }
	grep -q '1M/1k ratio' "$tmp/pty" ||
		{ echo "FAIL: no ratio line on the pty"; cat -A "$tmp/pty"; fail=1; }
	script -qec "'$ib' bench nosuch" /dev/null >/dev/null 2>&1
	check "pty unknown benchmark exit" 2 $?
else
	echo "SKIP part: no script(1) (bsdutils) for a pty: progress not checked"
fi
exit $fail
