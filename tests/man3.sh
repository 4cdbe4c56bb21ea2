#!/bin/bash
# The section 3 manual pages (scripts/gen-man3.py, target man3): one page
# per exported function of both libraries, each naming its library and
# header; every page renders without a groff warning, and man(1) renders
# imc_mcast_join(3) with its declaration and its comment.
# Arguments: build directory, source directory.
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
dir=$build/man3
[ -f "$dir/report.txt" ] || { echo "SKIP: no $dir (python3 was not found at configure time)"; exit 77; }
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff not installed"; exit 77; }
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

head -n 1 "$dir/report.txt"
exported=$(cat "$build/ibmcast.syms" "$build/ibmcast-sim.syms" | sort -u)
pages=$(cd "$dir" && ls -- *.3 | sed 's/\.3$//' | sort -u)
check "a page for every exported function and no other ($(echo "$exported" | wc -l))" \
	'[ "$pages" = "$exported" ]'
check "no declaration missed" '! grep -q "^no declaration found" "$dir/report.txt"'
documented=$(sed -n 's/.*documented by a comment of their own \([0-9]*\),.*/\1/p' "$dir/report.txt")
check "most pages carry their own comment ($documented)" \
	'[ "$documented" -ge $(( $(echo "$exported" | wc -l) * 3 / 4 )) ]'
warn=$(cd "$dir" && for p in *.3; do groff -man -ww -z "$p" 2>&1 | sed "s|^|$p: |"; done)
check "every page renders without a groff warning" '[ -z "$warn" ]'
[ -z "$warn" ] || echo "$warn" | head -n 20
check "imc_mcast_join: libibmcast, <ibmcast/mcast.h>" \
	'grep -q "^libibmcast (" "$dir/imc_mcast_join.3" && grep -q "#include <ibmcast/mcast.h>" "$dir/imc_mcast_join.3"'
check "imc_fabric_create: libibmcast-sim" 'grep -q "^libibmcast-sim (" "$dir/imc_fabric_create.3"'
if command -v man >/dev/null 2>&1; then
	out=$(MANWIDTH=80 man --warnings -l "$dir/imc_mcast_join.3" 2>"$build/man3.err")
	check "man -l imc_mcast_join.3: no warnings" '[ ! -s "$build/man3.err" ]'
	check "... its declaration" 'echo "$out" | grep -q "int imc_mcast_join(struct imc_mcast \*t,"'
	check "... its comment" 'echo "$out" | grep -q "Every successful join has exactly one"'
	rm -f "$build/man3.err"
fi
exit $fail
