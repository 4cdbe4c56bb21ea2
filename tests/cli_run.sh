#!/bin/sh
# ibmcast run: exit codes (0 held, 1 failed, 2 usage/parse), the failure
# message with seed and replay command, --json validity, --seed, --until,
# --pcap, --quiet and --help.
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
expect() { # expect CODE DESCRIPTION -- command...
	want=$1; what=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/out" "$tmp/err"; fail=1
	else
		echo "ok: $what (exit $got)"
	fi
}
# This has also shows the file it searched.
has() { # has FILE TEXT
	grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: '$2' not in $1"; cat "$tmp/$1"; fail=1; }
}
hasnt() { # hasnt FILE TEXT
	if grep -qF -- "$2" "$tmp/$1"; then echo "FAIL: '$2' in $1"; cat "$tmp/$1"; fail=1; fi
}

cat >"$tmp/pass.scn" <<'EOF'
# Four hosts on one switch.
topology switch:hosts=4
seed 9
stop 2ms
at 0 send H-000001 H-000002 count=20 interval=10us
send H-000003 H-000004 count=5 grh
at 1ms expect delivered H-000002 == 20
expect delivered == sent
expect state H-000004 == active
EOF
cat >"$tmp/false.scn" <<'EOF'
topology switch:hosts=2
seed 5
stop 1ms
at 0 send H-000001 H-000002 count=100 interval=1us
expect delivered H-000002 == 99
expect sent H-000001 == 100
EOF
cat >"$tmp/lossy.scn" <<'EOF'
topology switch:hosts=2
seed 3
stop 5ms
fault H-000001 loss=20%
at 0 send H-000001 H-000002 count=400 interval=10us
expect lost H-000001 in 1..399
EOF
cat >"$tmp/bad.scn" <<'EOF'
topology switch:hosts=2

at 0 send H-000001 H-000007
EOF
cat >"$tmp/backwards.scn" <<'EOF'
topology switch:hosts=2
at 2ms send H-000001 H-000002
at 1ms send H-000002 H-000001
EOF
cat >"$tmp/runtime.scn" <<'EOF'
topology switch:hosts=2
stop 1ms
at 10us lid H-000001 0x20
at 20us lid H-000002 0x20
EOF

# usage
expect 0 "--help" -- "$ib" run --help; has out "usage: ibmcast run"
has out "--until TIME"
expect 0 "listed in ibmcast --help" -- "$ib" --help; has out "run "
expect 2 "no scenario" -- "$ib" run
expect 2 "two scenarios" -- "$ib" run "$tmp/pass.scn" "$tmp/pass.scn"
expect 2 "unknown option" -- "$ib" run --frob "$tmp/pass.scn"
expect 2 "missing file" -- "$ib" run "$tmp/nope.scn"; has err "nope.scn: No such file"
expect 2 "bad --seed" -- "$ib" run --seed x1 "$tmp/pass.scn"; has err "--seed x1: expected a number"
expect 2 "bad --until" -- "$ib" run --until 5 "$tmp/pass.scn"; has err "--until 5: expected a time with a unit"
expect 2 "bad --pcap" -- "$ib" run --pcap "$tmp/no/such/dir.pcap" "$tmp/pass.scn"

# parse errors name FILE:LINE
expect 2 "unknown host" -- "$ib" run "$tmp/bad.scn"
has err "bad.scn:3: send: unknown node 'H-000007'"
expect 2 "time backwards" -- "$ib" run "$tmp/backwards.scn"
has err "backwards.scn:3: time goes backwards: 1ms is before 2ms (line 2)"

# a passing run
expect 0 "passing scenario" -- "$ib" run "$tmp/pass.scn"
has out "topology    switch:hosts=4 (4 HCAs, 1 switches, 4 cables)"
has out "seed        9"
has out "virtual     2ms"
has out "totals      sent 25, delivered 25, hops 50"
has out "drops       none"
has out "expect      3 passed, 0 failed, 0 skipped"
has out "ok    line 7    delivered H-000002 == 20: observed 20 at 1ms"
hasnt err "expectation failed"
expect 0 "--quiet" -- "$ib" run --quiet "$tmp/pass.scn"
[ -s "$tmp/out" ] && { echo "FAIL: --quiet printed"; cat "$tmp/out"; fail=1; }

# a failing expectation: exit 1, the message with seed and replay
expect 1 "false expectation" -- "$ib" run "$tmp/false.scn"
has err "expectation failed: $tmp/false.scn:5: delivered H-000002 == 99: observed 100 at 1ms (seed 5; replay: ibmcast run $tmp/false.scn --seed 5)"
has out "FAIL  line 5    delivered H-000002 == 99: observed 100 at 1ms"
has out "expect      1 passed, 1 failed, 0 skipped"
expect 1 "false expectation, --seed" -- "$ib" run --seed 77 "$tmp/false.scn"
has err "(seed 77; replay: ibmcast run $tmp/false.scn --seed 77)"
has out "seed        77"
expect 1 "false expectation, --quiet" -- "$ib" run --quiet "$tmp/false.scn"
has err "expectation failed: $tmp/false.scn:5:"

# an action that fails at run time
expect 1 "runtime error" -- "$ib" run "$tmp/runtime.scn"
has err "runtime.scn:4: lid: LID 0x0020 is taken"

# --json is valid JSON with the result in it
expect 0 "--json" -- "$ib" run --json "$tmp/pass.scn"
if command -v python3 >/dev/null 2>&1; then
	python3 -m json.tool "$tmp/out" >/dev/null || { echo "FAIL: --json is not valid JSON"; cat "$tmp/out"; fail=1; }
	python3 - "$tmp/out" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
want = {"seed": 9, "end_ns": 2000000, "passed": 3, "failed": 0, "ok": True,
        "hcas": 4, "switches": 1}
for k, v in want.items():
    if d[k] != v:
        print("FAIL: json %s = %r, expected %r" % (k, d[k], v)); sys.exit(1)
if d["totals"] != {"sent": 25, "delivered": 25, "hops": 50}:
    print("FAIL: json totals", d["totals"]); sys.exit(1)
if d["drops"]["link-down"] != 0 or len(d["drops"]) != 11:
    print("FAIL: json drops", d["drops"]); sys.exit(1)
h = {x["name"]: x for x in d["hosts"]}
if h["H-000002"]["delivered"] != 20 or h["H-000001"]["sent"] != 20:
    print("FAIL: json hosts", d["hosts"]); sys.exit(1)
e = d["expectations"][0]
if (e["line"], e["state"], e["observed"], e["at_ns"]) != (7, "pass", 20, 1000000):
    print("FAIL: json expectation", e); sys.exit(1)
if not d["trace_hash"].startswith("0x") or len(d["trace_hash"]) != 18:
    print("FAIL: json trace_hash", d["trace_hash"]); sys.exit(1)
print("ok: json fields")
EOF
	expect 1 "--json failing" -- "$ib" run --json "$tmp/false.scn"
	python3 -m json.tool "$tmp/out" >/dev/null || { echo "FAIL: --json (failing) is not valid JSON"; fail=1; }
	has out '"ok": false'
	has err "expectation failed: $tmp/false.scn:5:"
else
	echo "python3 not installed: JSON validity not checked"
fi

# the seed decides the run: same seed, same hash; another seed, another
expect 0 "lossy seed 3" -- "$ib" run "$tmp/lossy.scn"
h1=$(grep '^trace' "$tmp/out")
expect 0 "lossy seed 3 again" -- "$ib" run --seed 3 "$tmp/lossy.scn"
h2=$(grep '^trace' "$tmp/out")
expect 0 "lossy seed 4" -- "$ib" run --seed 4 "$tmp/lossy.scn"
h3=$(grep '^trace' "$tmp/out")
[ -n "$h1" ] && [ "$h1" = "$h2" ] || { echo "FAIL: same seed, different trace: $h1 / $h2"; fail=1; }
[ "$h1" != "$h3" ] || { echo "FAIL: --seed 4 gave the trace of seed 3: $h3"; fail=1; }

# --until ends early; later expectations are skipped
expect 0 "--until" -- "$ib" run --until 500us "$tmp/pass.scn"
has out "virtual     500us"
has out "expect      2 passed, 0 failed, 1 skipped"
has out "skip  line 7    delivered H-000002 == 20 (at 1ms, after the end)"

# --pcap writes a capture of every port: 25 datagrams x 2 cables
expect 0 "--pcap" -- "$ib" run --pcap "$tmp/c.pcap" "$tmp/pass.scn"
[ -s "$tmp/c.pcap" ] || { echo "FAIL: no capture written"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/c.pcap" <<'EOF' || fail=1
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, = struct.unpack("<I", b[:4])
if magic != 0xa1b23c4d:
    print("FAIL: pcap magic %#x" % magic); sys.exit(1)
off, n = 24, 0
while off < len(b):
    incl, = struct.unpack("<I", b[off + 8:off + 12])
    off += 16 + incl
    n += 1
if off != len(b) or n != 50:
    print("FAIL: pcap has %d records (%d/%d bytes), expected 50" % (n, off, len(b))); sys.exit(1)
print("ok: pcap holds 50 packets")
EOF
fi
if command -v tshark >/dev/null 2>&1; then
	n=$(tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""' \
		-r "$tmp/c.pcap" 2>/dev/null | grep -c "UD Send Only")
	[ "$n" = 50 ] || { echo "FAIL: tshark sees $n UD sends, expected 50"; fail=1; }
fi
exit $fail
