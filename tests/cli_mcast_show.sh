#!/bin/sh
# ibmcast run --mcast-show: every port's join tracker in
# examples/mcast-tracker.scn at its mcast-show lines (6ms, 200ms) and at the
# end, as ibmcast mcast show lists a port's groups; --json --mcast-show is
# one valid JSON object with the same content (beside --sa-show); without an
# mcast-join line it is a usage error.
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
scn="$src/examples/mcast-tracker.scn"

"$ib" run "$scn" --mcast-show >"$tmp/text" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; cat "$tmp/text" "$tmp/err"; fail=1; }
has text "mcast at 6ms (mcast-show, line 30): 4 ports, 4 groups, 5 members"
has text "mcast at 200ms (mcast-show, line 82): 7 ports, 4 groups, 4 members"
has text "mcast at the end of the run (300ms): 7 ports, 4 groups, 4 members"
# Two applications of H-000002 share one membership: one MAD.
has text "port H-000002:1 gid=fe80::2:c903:0:5 lid=3 sm_lid=1 state=ACTIVE groups=1 members=2 mads=1 retries=0 timeouts=0 rejoins=0 errors=0"
count text "  group ff15::1 mlid=0xc001 join_state=0x1 wanted=0x1 members=2 joined" 1
# The send-only member's group, in every snapshot.
count text "  group ff15::1 mlid=0xc001 join_state=0x8 wanted=0x8 members=1 joined" 3
count text "  group ff12:401b:ffff::ffff:ffff mlid=0xc000 join_state=0x2 wanted=0x2" 3
# Left: H-000002 keeps no group; two failures on H-000006.
has text "port H-000002:1 gid=fe80::2:c903:0:5 lid=3 sm_lid=1 state=ACTIVE groups=0 members=0 mads=3"
has text "port H-000006:1 gid=fe80::2:c903:0:d lid=10 sm_lid=1 state=ACTIVE groups=0 members=0 mads=2 retries=0 timeouts=0 rejoins=0 errors=2"

"$ib" run "$scn" --json --mcast-show --sa-show >"$tmp/json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --json exit $rc"; cat "$tmp/err"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
	if ! python3 -m json.tool "$tmp/json" >/dev/null; then
		echo "FAIL: --json --mcast-show is not valid JSON"; fail=1
	else
		python3 - "$tmp/json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
m = d["mcast"]
assert d["ok"] is True, d["ok"]
assert len(d["sa"]) == 1, d["sa"]
assert [s.get("line") for s in m] == [30, 82, None], m
assert m[2]["end"] is True
p = m[0]["ports"][0]
assert p["host"] == "H-000002:1", p
assert p["stats"]["joins_local"] == 1, p["stats"]
g = p["groups"][0]
assert g["mgid"] == "ff15::1" and g["members"] == 2 and g["is_joined"], g
assert g["join_state"] == 1 and g["qkey"] == 0x1234, g
hosts = [q["host"] for q in m[1]["ports"]]
assert hosts == sorted(hosts), hosts
PY
	fi
fi

# No mcast-join line: a usage error naming why.
"$ib" run "$src/examples/sa-groups.scn" --mcast-show >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: exit $rc without an mcast-join line"; fail=1; }
has err "ibmcast run: --mcast-show: the scenario has no mcast-join line"
exit $fail
