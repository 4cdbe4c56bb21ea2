#!/bin/sh
# ibmcast mcast tree: the tree of ff15::1 at the end of examples/sa-groups.scn
# has exactly the ports of its three members at the end (the SA's view,
# from --sa-show) as receiving ports, no one-sided edge, and renders with
# Graphviz; bad MGIDs, absent groups and scenarios without an sa line are
# refused with the documented exit codes.
set -u
build=$1
src=$2
ib="$build/ibmcast"
scn="$src/examples/sa-groups.scn"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check WHAT EXPECTED ACTUAL
	[ "$2" = "$3" ] || { echo "FAIL: $1: expected '$2', got '$3'"; fail=1; }
}

"$ib" mcast tree ff15::1 --dot "$scn" >"$tmp/dot" 2>"$tmp/err"
check "exit" 0 $?
check "receiving ports" "H-000002:1 H-000006:1 H-000007:1" \
	"$(grep -o '"H-[0-9]*:[0-9]*" \[shape=ellipse\]' "$tmp/dot" | cut -d'"' -f2 | sort | xargs)"
# The same ports as the members the SA lists for the group at the end.
"$ib" run "$scn" --sa-show --quiet >"$tmp/show" 2>&1
check "SA's members at the end" "H-000002:1 H-000006:1 H-000007:1" \
	"$(awk '/at the end of the run/{e=1} e && /NodeDescription/{print $NF}' "$tmp/show" | sed 's/.*\.//' | sort | xargs)"
grep -q 'one-sided 0' "$tmp/dot" || { echo "FAIL: one-sided edges"; fail=1; }
grep -q '^graph "mlid_0xc010" {$' "$tmp/dot" || { echo "FAIL: MLID 0xc010 not named"; fail=1; }
if command -v dot >/dev/null 2>&1; then
	dot -Tsvg "$tmp/dot" >"$tmp/svg" 2>"$tmp/doterr" || { echo "FAIL: dot rejects it"; cat "$tmp/doterr"; fail=1; }
	grep -q '000006:1' "$tmp/svg" || { echo "FAIL: svg lacks a member"; fail=1; }
else
	echo "note: graphviz dot not installed; the rendering check is skipped"
fi

"$ib" mcast tree ff15::99 "$scn" >/dev/null 2>"$tmp/err"
check "absent group exit" 1 $?
grep -q 'no group ff15::99' "$tmp/err" || { echo "FAIL: absent group message"; fail=1; }
"$ib" mcast tree fe80::1 "$scn" >/dev/null 2>"$tmp/err"
check "unicast GID exit" 2 $?
"$ib" mcast tree ff15::1 "$src/examples/unicast-basic.scn" >/dev/null 2>"$tmp/err"
check "no sa line exit" 2 $?
grep -q 'no sa line' "$tmp/err" || { echo "FAIL: no-sa message"; fail=1; }
"$ib" mcast tree >/dev/null 2>&1
check "no argument exit" 2 $?
"$ib" mcast tree --help >"$tmp/help" 2>&1
check "help exit" 0 $?
grep -q 'usage: ibmcast mcast tree' "$tmp/help" || { echo "FAIL: help text"; fail=1; }
exit $fail
