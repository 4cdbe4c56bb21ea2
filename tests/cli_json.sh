#!/bin/sh
# Every --json output that needs no InfiniBand port parses as JSON
# (python3 -m json.tool): ibmcast run --json for each example scenario,
# with --sa-show and --mcast-show where the scenario has an SA and join
# trackers, and ibmcast sa show --scenario --json; a scenario path with a
# quote, a backslash and a tab comes back unchanged in "scenario".
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
command -v python3 >/dev/null 2>&1 ||
	{ echo "SKIP: python3 not installed"; exit 77; }

valid() { # valid FILE WHAT
	python3 -m json.tool "$1" >/dev/null 2>"$tmp/jerr" ||
		{ echo "FAIL: $2 is not valid JSON"; cat "$tmp/jerr"; fail=1; }
}

n=0
for scn in "$src"/examples/*.scn; do
	name=$(basename "$scn" .scn)
	"$ib" run "$scn" --json >"$tmp/$name.json" 2>"$tmp/err"
	rc=$?
	# Example scenarios pass (0); ipoib-tun needs nothing here either.
	[ $rc -eq 0 ] || { echo "FAIL: run $name: exit $rc"; cat "$tmp/err"; fail=1; }
	valid "$tmp/$name.json" "run --json $name"
	n=$((n + 1))
	for show in --sa-show --mcast-show; do
		if "$ib" run "$scn" --json "$show" >"$tmp/$name$show.json" \
			2>/dev/null; then
			valid "$tmp/$name$show.json" "run --json $show $name"
		fi
	done
done
[ "$n" -gt 0 ] || { echo "FAIL: no example scenarios"; fail=1; }

"$ib" run "$src/examples/sa-groups.scn" --json --sa-show >"$tmp/sa.json" &&
	python3 - "$tmp/sa.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["stats"]["groups"] for s in d["sa"]] == [3, 2], d["sa"]
assert d["report"]["sa"]["groups"] == 2, d["report"]["sa"]
PY
"$ib" run "$src/examples/mcast-tracker.scn" --json --mcast-show \
	>"$tmp/mc.json" && python3 - "$tmp/mc.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
ports = d["mcast"][0]["ports"]
assert ports and all(p["state"] == "ACTIVE" for p in ports), ports
assert all(isinstance(g["is_joined"], bool) for p in ports for g in p["groups"])
PY

"$ib" sa show --scenario "$src/examples/sa-groups.scn" --json >"$tmp/show.json"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: sa show --scenario: exit $rc"; fail=1; }
valid "$tmp/show.json" "sa show --scenario --json"

# A path that needs escaping: quote, backslash, tab.
odd="$tmp/a\"b\\c	d.scn"
cp "$src/examples/partitions.scn" "$odd"
"$ib" run "$odd" --json >"$tmp/odd.json" 2>"$tmp/err" ||
	{ echo "FAIL: run with an odd path"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/odd.json" "$odd" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scenario"] == sys.argv[2], (d["scenario"], sys.argv[2])
PY
grep -qF '\"b\\c\u0009d.scn' "$tmp/odd.json" ||
	{ echo "FAIL: path not escaped as RFC 8259 says"; fail=1; }
exit $fail
