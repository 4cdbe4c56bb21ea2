#!/bin/sh
# ibmcast run --sa-show: the SA's groups and members of examples/sa-groups.scn
# at its sa-show line (200us) and at the end, as saquery -g and -m print
# them; --json --sa-show is one valid JSON object with the same content;
# --sa-show without an sa line is a usage error.
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
scn="$src/examples/sa-groups.scn"

"$ib" run "$scn" --sa-show >"$tmp/text" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; cat "$tmp/text" "$tmp/err"; fail=1; }
has text "expect      36 passed, 0 failed, 0 skipped"
has text "SA at 200us (sa-show, line 55): 3 groups, 9 members, 3 of 16383 MLIDs in use, 17 MADs received, 0 dropped (queue full)"
has text "SA at the end of the run (1ms): 2 groups, 3 members, 2 of 16383 MLIDs in use, 23 MADs received, 0 dropped (queue full)"
# 3 groups at 200us, 2 at the end; 9 + 3 members.
count text "MCMemberRecord group dump:" 5
count text "MCMemberRecord member dump:" 12
# The SA-assigned MGID and its MLID, the broadcast group, ff15::1.
count text "		MGID....................ff12:a01b:fe80::" 5
count text "		Mlid....................0xC001" 5
count text "		MGID....................ff12:401b:ffff::ffff:ffff" 2
count text "		Mlid....................0xC010" 10
count text "		Qkey....................0x00001234" 3
count text "		Qkey....................0x00000B1B" 2
# Members: the send-only one, the proxy join, names of hosts.
count text "		JoinState...............0x8 (SendOnlyFullMember)" 2
count text "		ProxyJoin...............0x1" 1
count text "		NodeDescription.........H-000013:1" 1
count text "		NodeDescription.........H-000006:1" 2
count text "		NodeDescription.........H-000011:1" 1
count text "		NodeDescription.........H-000002:1" 2

"$ib" run "$scn" --json --sa-show >"$tmp/json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --json exit $rc"; cat "$tmp/err"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
	if ! python3 -m json.tool "$tmp/json" >/dev/null; then
		echo "FAIL: --json --sa-show is not valid JSON"; fail=1
	else
		python3 - "$tmp/json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
sa = d["sa"]
assert d["ok"] is True, d["ok"]
assert [s.get("line") for s in sa] == [55, None], sa
assert sa[1]["end"] is True
first, end = sa
assert first["stats"]["groups"] == 3 and end["stats"]["groups"] == 2
mgids = [g["mgid"] for g in first["groups"]]
assert mgids == ["ff12:401b:ffff::ffff:ffff", "ff12:a01b:fe80::", "ff15::1"], mgids
chat = first["groups"][1]
assert chat["mlid"] == 0xc001 and chat["qkey"] == 0x1234, chat
assert [m["node"] for m in chat["members"]] == \
    ["H-000005:1", "H-000009:1", "H-000010:1", "H-000013:1"], chat
assert [m["proxy_join"] for m in chat["members"]] == [False, False, False, True]
g1 = end["groups"][1]
assert g1["mgid"] == "ff15::1" and g1["mlid"] == 0xc010, g1
assert [(m["node"], m["join_state"]) for m in g1["members"]] == \
    [("H-000002:1", 1), ("H-000006:1", 1), ("H-000007:1", 8)], g1
print("json: ok")
EOF
	fi
else
	echo "python3 not found: JSON validity not checked"
fi

# --sa-show needs an sa line: usage error (2).
"$ib" run "$src/examples/unicast-basic.scn" --sa-show >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --sa-show without sa: exit $rc, expected 2"; fail=1; }
has err "ibmcast run: --sa-show: the scenario has no sa line"

# Without --sa-show nothing of it is printed.
"$ib" run "$scn" >"$tmp/plain" 2>&1
if grep -qF "MCMemberRecord" "$tmp/plain"; then
	echo "FAIL: SA dump without --sa-show"; fail=1
fi
# --quiet --sa-show: the dump alone.
"$ib" run "$scn" --quiet --sa-show >"$tmp/quiet" 2>&1
head -n 1 "$tmp/quiet" | grep -qF "SA at 200us" || { echo "FAIL: --quiet --sa-show"; head -n 3 "$tmp/quiet"; fail=1; }

# ibmcast sa show --scenario: the end-of-run snapshot alone, the same
# text as the last part of --sa-show; as JSON one object marked "end".
"$ib" sa show --scenario "$scn" >"$tmp/show" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: sa show --scenario: exit $rc"; fail=1; }
sed -n '/^SA at the end of the run/,$p' "$tmp/quiet" >"$tmp/quiet_end"
cmp -s "$tmp/show" "$tmp/quiet_end" || { echo "FAIL: sa show differs from the end of --sa-show"; diff "$tmp/show" "$tmp/quiet_end" | head; fail=1; }
"$ib" sa show --scenario "$scn" --json >"$tmp/show.json" 2>&1
python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["end"] is True and len(o["groups"]) == 2, o.keys()' "$tmp/show.json" ||
	{ echo "FAIL: sa show --json"; head -c 300 "$tmp/show.json"; fail=1; }
"$ib" sa show --scenario "$src/examples/unicast-basic.scn" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: sa show on a scenario without sa: exit $rc, expected 2"; fail=1; }
"$ib" sa query --scenario "$scn" all >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --scenario outside show: exit $rc, expected 2"; fail=1; }

[ $fail -eq 0 ] && echo "cli_sa_show: all ok"
exit $fail
