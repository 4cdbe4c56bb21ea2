#!/bin/sh
# Bad input to ibmcast run is refused with FILE:LINE and exit 2, quickly:
# a net file giving one GUID twice (also through an include), a setting
# or an option given twice, times past 2^62 ns, /dev/zero and an endless
# stream on /dev/stdin (read up to a cap, not into gigabytes).
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
refused() { # refused WHAT WANT-IN-STDERR -- command...
	what=$1; want=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne 2 ]; then
		echo "FAIL: $what: exit $got, expected 2"; cat "$tmp/out" "$tmp/err"; fail=1
	elif ! grep -qF -- "$want" "$tmp/err"; then
		echo "FAIL: $what: '$want' not in:"; cat "$tmp/err"; fail=1
	else
		echo "ok: $what"
	fi
}

# Two HCAs given one node GUID by an included file.
cat >"$tmp/main.net" <<'EOF'
Switch 4 "S"
[1] "a"[1]
[2] "b"[1]

caguid=0x1000
Hca 1 "a"
[1] "S"[1]

include b.net
EOF
cat >"$tmp/b.net" <<'EOF'
caguid=0x1000
Hca 1 "b"
[1] "S"[2]
EOF
cat >"$tmp/dup.scn" <<'EOF'
topology file main.net
at 0 send a b count=1
EOF
refused "node GUID given twice across an include" \
	"$tmp/b.net:2: node GUID 0x0000000000001000 of \"b\" is also the node GUID of \"a\" ($tmp/main.net:6)" \
	-- "$ib" run "$tmp/dup.scn"
# Two ports with one port GUID.
cat >"$tmp/main.net" <<'EOF'
Switch 4 "S"
[1] "a"[1](0x2001)
[2] "b"[1](0x2001)

Hca 1 "a"
[1] "S"[1]

Hca 1 "b"
[1] "S"[2]
EOF
refused "port GUID given twice" \
	"$tmp/main.net:3: port GUID 0x0000000000002001 of \"b\"[1] is also the port GUID of \"a\"[1] ($tmp/main.net:2)" \
	-- "$ib" run "$tmp/dup.scn"

printf 'topology switch:hosts=2\nseed 1\nseed 2\n' >"$tmp/s.scn"
refused "a second seed" "$tmp/s.scn:3: seed already given on line 2" \
	-- "$ib" run "$tmp/s.scn"
printf 'topology switch:hosts=2\nat 0 send H-000001 H-000002 count=1 count=2\n' >"$tmp/s.scn"
refused "an option twice" \
	"$tmp/s.scn:2: send: count= given twice on this line: 'count=1' and 'count=2'" \
	-- "$ib" run "$tmp/s.scn"
printf 'topology switch:hosts=2\nlinks latency=18446744073709551615ns\n' >"$tmp/s.scn"
refused "a latency past the limit" \
	"$tmp/s.scn:2: latency: time 18446744073709551615ns is out of range (at most 4611686018427387904ns" \
	-- "$ib" run "$tmp/s.scn"
printf 'topology switch:hosts=2\nstop 1ms\n' >"$tmp/s.scn"
refused "--until past the limit" \
	"--until 18446744073709551615ns: at most 4611686018427387904ns" \
	-- "$ib" run --until 18446744073709551615ns "$tmp/s.scn"

refused "/dev/zero" "/dev/zero:1: a NUL byte: not scenario text" \
	-- "$ib" run /dev/zero
# An endless stream of comment bytes: refused at the cap, in bounded
# memory (ulimit -v: 1 GiB of address space is plenty for 64 MiB; not
# under AddressSanitizer, which reserves terabytes of shadow address
# space).
limit="ulimit -v 1048576;"
if ldd "$ib" 2>/dev/null | grep -q asan; then limit=; fi
refused "an endless stream on /dev/stdin" \
	"/dev/stdin: larger than 64 MiB, the most a scenario may be" \
	-- sh -c "$limit yes '# comment' | '$ib' run /dev/stdin"

# Option values: "PROG: --NAME VALUE: at most MAX", one form everywhere.
refused "storm --inflight 64" "ibmcast storm: --inflight 64: at most 32" \
	-- "$ib" storm --inflight 64
refused "storm --inflight 0" "ibmcast storm: --inflight 0: at least 1" \
	-- "$ib" storm --inflight 0
refused "storm --pkey in hex" "ibmcast storm: --pkey 0x10000: at most 0xffff" \
	-- "$ib" storm --pkey 0x10000
refused "storm --duration" "ibmcast storm: --duration 1e9: at most 31622400 (seconds)" \
	-- "$ib" storm --duration 1e9
refused "storm --rate" "ibmcast storm: --rate x: expected a number of joins a second" \
	-- "$ib" storm --rate x
refused "sa join --timeout" "ibmcast sa: --timeout 0: at least 1" \
	-- "$ib" sa join --timeout 0 ff12::1
refused "join --port" "ibmcast join: --port 300: at most 255" \
	-- "$ib" join --port 300 ff12::1
refused "join --watch" "ibmcast join: --watch x: not a valid value" \
	-- "$ib" join --watch x ff12::1
refused "mcast show --port" "ibmcast mcast: --port 256: at most 255" \
	-- "$ib" mcast show --port 256
refused "run --seed" "ibmcast run: --seed 18446744073709551616: at most 18446744073709551615" \
	-- "$ib" run --seed 18446744073709551616 "$tmp/s.scn"
refused "decode --sm-lid" "ibmcast decode: --sm-lid 0: at least 1" \
	-- "$ib" decode --sm-lid 0 /dev/null
# Out of memory names what could not be made (ulimit -v: 12 MB of
# address space cannot hold a topology of 102,400 HCAs; not under
# AddressSanitizer).
if [ -n "$limit" ]; then
	printf 'topology fat-tree:pods=32,leaves=64,hosts=50,aggs=16,spines=64\nstop 1ms\n' >"$tmp/big.scn"
	refused "out of memory" \
		"$tmp/big.scn:1: out of memory for the topology fat-tree:pods=32" \
		-- sh -c "ulimit -v 12000; '$ib' run '$tmp/big.scn'"
fi
refused "sa send --record field past its width" \
	"ibmcast sa: qkey=0x100000000: at most 0xffffffff" \
	-- "$ib" sa send --method get --record qkey=0x100000000
refused "storm --count twice" "ibmcast storm: --count given twice: '5' and '6'" \
	-- "$ib" storm --count 5 --count 6
refused "run --seed twice" "ibmcast run: --seed given twice" \
	-- "$ib" run --seed 1 --seed 2 "$tmp/s.scn"
exit $fail
