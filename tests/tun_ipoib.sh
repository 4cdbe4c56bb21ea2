#!/usr/bin/env bash
# Real IP traffic over ibmcast's IPoIB: `ibmcast up` bridges two hosts of
# examples/ipoib-tun.scn to TUN interfaces in namespaces of their own, and
# the kernel's ping (IPv4 and IPv6) and iperf3 (TCP over IPv4 and IPv6)
# work between them. A socket application joins an IPv4 and an IPv6
# multicast group in one namespace and receives what a socket in the
# other sends: the IPoIB interface follows the kernel's membership (a
# FullMember join of the mapped MGID, and a leave when the sockets close,
# which the SA's groups at the end show). A second instance runs beside the first without
# colliding (one of its hosts in a namespace named on the command line);
# SIGTERM and SIGINT remove every interface and namespace; the namespaces
# of an instance killed with SIGKILL are removed by the next start;
# without the privilege, and on bad command lines, the command says why.
#
#   bash tun_ipoib.sh BUILD_DIR SOURCE_DIR
#
# Skipped (exit 77) only where TUN devices or namespaces are not
# permitted, or ping/iperf3 are missing; says which.
set -uo pipefail

build=$1
src=$2
ibmcast=$build/ibmcast
scn=$src/examples/ipoib-tun.scn

skip() { echo "tun_ipoib: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: TUN interfaces and namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN"
[ -c /dev/net/tun ] || skip "no /dev/net/tun (TUN devices not available)"
for c in ip ping iperf3 python3; do
	command -v $c >/dev/null || skip "no $c"
done
probe=imc-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "$probe"

tmp=$(mktemp -d)
pids=()
fails=0
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	ip netns del "imc-test-$$-named" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

links_before=$(ip -o link show | cut -d: -f2 | sort)

# Starts `ibmcast up` with args; sets $up_pid and waits for its ready line
# in $tmp/$1.json.
start() {
	local name=$1
	shift
	"$ibmcast" up "$scn" --json --until 60s "$@" >"$tmp/$name.json" \
		2>"$tmp/$name.err" &
	up_pid=$!
	pids+=("$up_pid")
	for _ in $(seq 100); do
		grep -q '"event": "ready"' "$tmp/$name.json" && return 0
		kill -0 "$up_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "ibmcast up $* did not get ready:"
	cat "$tmp/$name.json" "$tmp/$name.err"
	exit 1
}

# Field of interface N (0-based) of the ready line: netns or the IPv4 or
# IPv6 address.
field() {
	python3 - "$tmp/$1.json" "$2" "$3" <<'PY'
import json, sys
ready = json.loads(open(sys.argv[1]).readline())
i = ready["interfaces"][int(sys.argv[2])]
what = sys.argv[3]
if what == "netns":
    print(i["netns"])
elif what == "ifname":
    print(i["ifname"])
elif what == "mtu":
    print(i["mtu"])
else:
    v6 = what == "v6"
    print([a.split("/")[0] for a in i["addresses"] if (":" in a) == v6][0])
PY
}

# ping COUNT from namespace to address; all must come back.
ping_all() {
	local out
	out=$(ip netns exec "$1" ping -c 5 -i 0.2 -W 5 "$2" 2>&1)
	if echo "$out" | grep -q ' 5 received'; then
		ok "ping $2 from $1: 5 of 5 replies"
	else
		fail "ping $2 from $1:"; echo "$out"
	fi
}

iperf_tcp() { # CLIENT_NS SERVER_NS ADDR [-6]
	local spid
	ip netns exec "$2" iperf3 -s -1 -D -B "$3" -I "$tmp/iperf.pid" ||
		{ fail "iperf3 server in $2"; return; }
	for _ in $(seq 50); do [ -s "$tmp/iperf.pid" ] && break; sleep 0.05; done
	spid=$(cat "$tmp/iperf.pid" 2>/dev/null || true)
	sleep 0.2
	ip netns exec "$1" iperf3 -c "$3" -t 2 -J >"$tmp/iperf.json" 2>&1
	python3 - "$tmp/iperf.json" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bps = 0 if "error" in d else d["end"]["sum_received"]["bits_per_second"]
got = 0 if "error" in d else d["end"]["sum_received"]["bytes"]
print("iperf3 TCP to %s: %.3f Gbit/s, %d bytes received%s" %
      (sys.argv[2], bps / 1e9, got, " (" + d["error"] + ")" if "error" in d else ""))
sys.exit(0 if bps > 0 and got > 0 else 1)
PY
	if [ $? = 0 ]; then ok "iperf3 TCP to $3"; else fail "iperf3 TCP to $3"; fi
	for _ in $(seq 50); do
		[ -n "$spid" ] && kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$tmp/iperf.pid"
}

stop() { # NAME PID SIGNAL
	kill -"$3" "$2"
	wait "$2"
	local rc=$?
	if [ $rc = 0 ] && tail -n1 "$tmp/$1.json" | grep -q '"event": "stopped"'; then
		ok "$1 stopped on SIG$3"
	else
		fail "$1: exit $rc on SIG$3"; cat "$tmp/$1.json" "$tmp/$1.err"
	fi
}

# ---- usage errors: exit 2 with a message ----
"$ibmcast" up "$scn" >/dev/null 2>"$tmp/e1"; rc1=$?
"$ibmcast" up "$scn" --tun NO-SUCH-HOST >/dev/null 2>"$tmp/e2"; rc2=$?
"$ibmcast" up "$scn" --tun H-000001 --until soon >/dev/null 2>"$tmp/e3"; rc3=$?
if [ $rc1 = 2 ] && grep -q "no --tun" "$tmp/e1" && [ $rc2 = 2 ] &&
   grep -q "no host 'NO-SUCH-HOST'" "$tmp/e2" && [ $rc3 = 2 ] &&
   grep -q -- "--until soon: expected a time" "$tmp/e3"; then
	ok "bad command lines: exit 2 and say why"
else
	fail "bad command lines: $rc1 $rc2 $rc3"; cat "$tmp"/e1 "$tmp"/e2 "$tmp"/e3
fi
# ---- without the privilege: exit 1, says so ----
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$ibmcast" up "$scn" --tun H-000001 --netns >/dev/null 2>"$tmp/e4"
	rc=$?
	if [ $rc = 1 ] && grep -q "run as root" "$tmp/e4"; then
		ok "unprivileged: exit 1: $(cat "$tmp/e4")"
	else
		fail "unprivileged: exit $rc"; cat "$tmp/e4"
	fi
fi

# ---- two instances side by side ----
start a --tun H-000001 --tun H-000003 --netns
a_pid=$up_pid
a1=$(field a 0 netns); a3=$(field a 1 netns)
start b --tun H-000001="imc-test-$$-named" --tun H-000003 --netns
b_pid=$up_pid
b1=$(field b 0 netns); b3=$(field b 1 netns)
[ "$b1" = "imc-test-$$-named" ] && [ "$a1" != "$b3" ] && [ "$a3" != "$b3" ] &&
	[ "$(field a 0 mtu)" = 2044 ] && ok "namespaces $a1 $a3 | $b1 $b3, MTU 2044" ||
	fail "namespaces: $a1 $a3 | $b1 $b3"

ping_all "$a1" "$(field a 1 v4)"
ping_all "$a1" "$(field a 1 v6)"
ping_all "$a3" "$(field a 0 v4)"
ping_all "$b3" "$(field b 0 v6)"
iperf_tcp "$a1" "$a3" "$(field a 1 v4)"
iperf_tcp "$a3" "$a1" "$(field a 0 v6)"

# ---- IP multicast follows the kernel's memberships ----
# RFC 4391 4: 239.1.2.3 -> ff12:401b:ffff::f01:203 (the low 28 bits),
# ff15::1:2 -> ff12:601b:ffff::1:2 (the low 80 bits), P_Key 0xffff and
# the broadcast group's scope 2.
mc4=239.1.2.3 mc6=ff15::1:2
mgid4=ff12:401b:ffff::f01:203 mgid6=ff12:601b:ffff::1:2
# json_wait FILE ACTION HOST GROUP: waits up to 5 s for that mcast line.
json_wait() {
	for _ in $(seq 50); do
		grep -q "\"event\": \"mcast\", \"host\": \"$3\", \"action\": \"$2\", \"group\": \"$4\"" "$1" && return 0
		sleep 0.1
	done
	return 1
}
ifb=$(field a 1 ifname)
ip netns exec "$a3" python3 - "$ifb" "$mc4" "$mc6" "$tmp/mc.ready" >"$tmp/mc.out" 2>&1 <<'PY' &
import socket, struct, sys
ifname, g4, g6, ready = sys.argv[1:5]
idx = socket.if_nametoindex(ifname)
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s4.bind((g4, 5000))
s4.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
              struct.pack("4s4si", socket.inet_aton(g4),
                          socket.inet_aton("0.0.0.0"), idx))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s6.bind((g6, 5000))
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
              socket.inet_pton(socket.AF_INET6, g6) + struct.pack("@I", idx))
open(ready, "w").close()
for s in (s4, s6):
    s.settimeout(10)
    for _ in range(3):
        data, src = s.recvfrom(2000)
        print(data.decode(), src[0], flush=True)
# Closing the sockets leaves both groups.
s4.close()
s6.close()
PY
rcv_pid=$!
pids+=("$rcv_pid")
if json_wait "$tmp/a.json" joined H-000003 "$mc4" &&
   json_wait "$tmp/a.json" joined H-000003 "$mc6" &&
   grep -q "\"group\": \"$mc4\", \"mgid\": \"$mgid4\"" "$tmp/a.json" &&
   grep -q "\"group\": \"$mc6\", \"mgid\": \"$mgid6\"" "$tmp/a.json"; then
	ok "the kernel joined $mc4 and $mc6: H-000003 joined $mgid4 and $mgid6 FullMember"
else
	fail "no join of $mgid4 and $mgid6 for the kernel's groups"; grep mcast "$tmp/a.json"
fi
ip netns exec "$a1" python3 - "$(field a 0 ifname)" "$(field a 0 v4)" "$mc4" "$mc6" <<'PY' ||
import socket, sys, time
ifname, src4, g4, g6 = sys.argv[1:5]
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(src4))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF,
              socket.if_nametoindex(ifname))
for i in range(3):
    s4.sendto(b"multicast v4 %d" % i, (g4, 5000))
    s6.sendto(b"multicast v6 %d" % i, (g6, 5000))
    time.sleep(0.05)
PY
	fail "multicast sender"
wait "$rcv_pid"
rcv_rc=$?
expect_out="multicast v4 0 $(field a 0 v4)
multicast v4 1 $(field a 0 v4)
multicast v4 2 $(field a 0 v4)
multicast v6 0 $(field a 0 v6)
multicast v6 1 $(field a 0 v6)
multicast v6 2 $(field a 0 v6)"
if [ $rcv_rc = 0 ] && [ "$(cat "$tmp/mc.out")" = "$expect_out" ]; then
	ok "a socket in $a3 received the 6 datagrams of a socket in $a1 on $mc4 and $mc6"
else
	fail "multicast receiver (exit $rcv_rc):"; cat "$tmp/mc.out"
fi
if json_wait "$tmp/a.json" leave H-000003 "$mc4" &&
   json_wait "$tmp/a.json" leave H-000003 "$mc6"; then
	ok "the sockets closed: H-000003 left $mgid4 and $mgid6"
else
	fail "no leave of $mc4 and $mc6"; grep mcast "$tmp/a.json"
fi
# The SA has the Deletes before the end.
sleep 0.5

stop b "$b_pid" INT
stop a "$a_pid" TERM
python3 - "$tmp/a.json" "$mgid4" "$mgid6" <<'PY' && ok "at the SA, $mgid4 and $mgid6 have no full member left" || fail "SA groups at the end"
import json, sys
st = json.loads(open(sys.argv[1]).read().splitlines()[-1])
groups = {g["mgid"]: g for g in st["sa_groups"]}
for m in sys.argv[2:]:
    # H-000001's send-only membership may still be there; no FullMember.
    assert groups.get(m, {"full": 0})["full"] == 0, (m, groups.get(m))
# The list is the SA's while the bridges ran: both kernels still held
# 224.0.0.1 (all-hosts, RFC 1112), each port FullMember of its MGID.
assert groups["ff12:401b:ffff::1"]["full"] == 2, groups
b = st["interfaces"][1]
assert b["mcast_listens"] >= 4 and b["mcast_leaves"] == 2, b
PY
python3 - "$tmp/a.json" <<'PY' && ok "counters: packets both ways, no drops" || fail "counters"
import json, sys
st = json.loads(open(sys.argv[1]).read().splitlines()[-1])
for i in st["interfaces"]:
    assert i["to_ipoib"] > 1000 and i["to_kernel"] > 1000, i
    assert not any(i["drops"].values()), i
PY

# ---- killed: the next start removes what it left ----
start c --tun H-000001 --tun H-000003 --netns
c_pid=$up_pid
c1=$(field c 0 netns)
kill -KILL "$c_pid"
wait "$c_pid" 2>/dev/null
ip netns list | grep -q "^$c1" && ok "SIGKILL leaves $c1 behind" ||
	fail "$c1 gone after SIGKILL?"
"$ibmcast" up "$scn" --tun H-000001 --netns --until 100ms >/dev/null 2>"$tmp/d.err"
rc=$?
if [ $rc = 0 ] && grep -q "removed namespace $c1" "$tmp/d.err" &&
   ! ip netns list | grep -q "^$c1"; then
	ok "the next start removed $c1"
else
	fail "reaping $c1 (exit $rc)"; cat "$tmp/d.err"
fi
pids=()

# ---- nothing left ----
left=$(ip netns list | grep -E "^(ibmcast-.*-($a_pid|$b_pid|$c_pid)|imc-test-$$-named)( |$)" || true)
[ -z "$left" ] && ok "no namespace left" || fail "namespaces left: $left"
links_after=$(ip -o link show | cut -d: -f2 | sort)
[ "$links_before" = "$links_after" ] && ok "no interface left" ||
	fail "interfaces differ: $(diff <(echo "$links_before") <(echo "$links_after"))"
ls /run/ibmcast/netns 2>/dev/null | grep -qE -- "-($a_pid|$b_pid|$c_pid)\.lock$" &&
	fail "lock files left" || ok "no lock file left"

[ $fails = 0 ] || { echo "tun_ipoib: $fails failed"; exit 1; }
echo "tun_ipoib: all passed"
