#!/bin/sh
# ibmcast run's report on the main job (examples/main.scn): every section
# in the text after the summary, the same as an object in --json, none
# with --quiet; and the main job's figures that the events must not
# change (every join of a request answered, nothing lost).
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
# This has also shows the file it searched.
has() { # has FILE TEXT
	grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: '$2' not in $1"; cat "$tmp/$1"; fail=1; }
}

"$ib" run "$src/examples/main.scn" >"$tmp/out" 2>"$tmp/err" ||
	{ echo "FAIL: main.scn: exit $?"; cat "$tmp/out" "$tmp/err"; fail=1; }
# The report comes after the expectations, a section a block.
sed -n '/^report$/,$p' "$tmp/out" >"$tmp/report"
[ -s "$tmp/report" ] || { echo "FAIL: no report"; fail=1; }
for s in sa mcast joins packets ipoib expectations; do
	grep -q "^  $s " "$tmp/report" || { echo "FAIL: no section $s"; fail=1; }
done
has report "64 interfaces, 64 with carrier at the end"
has report "MADs lost: 0 with the SA's queue full, 0 on the fabric"
has report "IPv4 broadcast"
has report "expectations "
grep -Eq "^  expectations +([0-9]+) of \1 held$" "$tmp/report" ||
	{ echo "FAIL: not every expectation held"; fail=1; }
awk '/^report$/ { r = 1 } r && /^expect / { bad = 1 } END { exit bad }' \
	"$tmp/out" || { echo "FAIL: the report is not last"; fail=1; }

"$ib" run --quiet "$src/examples/main.scn" >"$tmp/quiet" 2>&1
if [ -s "$tmp/quiet" ]; then echo "FAIL: --quiet printed"; cat "$tmp/quiet"; fail=1; fi

"$ib" run --json "$src/examples/main.scn" >"$tmp/json" 2>"$tmp/err" ||
	{ echo "FAIL: --json: exit $?"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
r = d["report"]
assert list(r) == ["sa", "mcast", "joins", "packets", "ipoib",
                   "expectations"], list(r)
assert r["ipoib"]["interfaces"] == 64 and r["ipoib"]["carrier"] == 64
# Every IPoIB and application join completed; both events re-joined.
assert r["joins"]["first"]["failed"] == 0, r["joins"]
assert r["joins"]["first"]["joined"] >= 64 * 3, r["joins"]
assert r["joins"]["rejoin"]["joined"] > 0, r["joins"]
j = r["joins"]["first"]
assert j["p50_ns"] <= j["p90_ns"] <= j["p99_ns"] <= j["max_ns"], j
assert r["sa"]["mads_lost"] == {"queue_full": 0, "fabric": 0}
assert r["sa"]["groups"] == len(r["sa"]["list"])
assert r["sa"]["members"] == sum(g["members"] for g in r["sa"]["list"])
assert r["packets"]["sent"] == d["totals"]["sent"]
assert r["packets"]["dropped"] == sum(d["drops"].values())
assert r["expectations"]["held"] == d["passed"] > 0
assert r["expectations"]["failed"] == d["failed"] == 0
assert len(r["expectations"]["held_lines"]) == d["passed"]
assert r["packets"]["drops"]["no_qp"] == 10, r["packets"]
print("ok: --json report")
EOF
else
	echo "python3 not installed: JSON report not checked"
fi

[ "$fail" -eq 0 ] && echo "ok: report"
exit "$fail"
