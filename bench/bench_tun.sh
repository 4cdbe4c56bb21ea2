#!/usr/bin/env bash
# The TUN figure: iperf3 TCP throughput between two network namespaces
# over `ibmcast up` (kernel -> TUN -> IPoIB -> simulated fabric -> IPoIB
# -> TUN -> kernel) against the same over bench/tun_relay (kernel -> TUN
# -> copy -> TUN -> kernel), the limit of any TUN design on this machine.
#
#   bench/bench_tun.sh [BUILD_DIR] [--rounds N] [--time SECONDS]
#                      [--scenario FILE] [--parallel P] [--relay-batch]
#
# Both set-ups stay up for the whole run and the iperf3 runs alternate
# between them (relay, ibmcast, relay, ...), so that load from elsewhere
# on the machine falls on both alike. Prints every round, the median of
# each and the ratio of the medians, and the CPU time the relay and
# ibmcast spent per packet they moved (their utime + stime, from
# /proc/PID/stat, over the packets of the run both ways).
# --relay-batch runs the relay in its read-a-batch-then-write mode. Needs
# root, /dev/net/tun, ip and iperf3 (exit 77 without them, saying which).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
rounds=5
secs=5
parallel=1
relay_opt=
scenario=$here/examples/ipoib-tun.scn
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift ;;
	--time) secs=$2; shift ;;
	--scenario) scenario=$2; shift ;;
	--parallel) parallel=$2; shift ;;
	--relay-batch) relay_opt=--batch ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench_tun: unknown option $1" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd) ;;
	esac
	shift
done

skip() { echo "bench_tun: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (TUN interfaces and namespaces need it)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v iperf3 >/dev/null || skip "no iperf3"
ibmcast=$build/ibmcast
relay=$build/bench/tun_relay
[ -x "$ibmcast" ] && [ -x "$relay" ] ||
	{ echo "bench_tun: build ibmcast and tun_relay first (cmake --build $build)" >&2; exit 2; }

tmp=$(mktemp -d)
ra=imcbench-relay-a-$$
rb=imcbench-relay-b-$$
up_pid=
relay_pid=
cleanup() {
	[ -n "$up_pid" ] && kill -TERM "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null
	[ -n "$relay_pid" ] && kill -TERM "$relay_pid" 2>/dev/null && wait "$relay_pid" 2>/dev/null
	ip netns del "$ra" 2>/dev/null || true
	ip netns del "$rb" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_line() { # FILE PATTERN PID
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { cat "$1" >&2; return 1; }
		sleep 0.1
	done
	echo "bench_tun: timed out waiting for '$2' in $1" >&2
	return 1
}

# ibmcast up: the first two hosts with addresses, each in a namespace.
"$ibmcast" up "$scenario" --tun H-000001 --tun H-000003 --netns --json \
	>"$tmp/up.json" 2>"$tmp/up.err" &
up_pid=$!
wait_line "$tmp/up.json" '"event": "ready"' "$up_pid"
read -r ns1 ns2 dst mtu < <(python3 - "$tmp/up.json" <<'PY'
import json, sys
ready = json.loads(open(sys.argv[1]).readline())
a, b = ready["interfaces"][:2]
v4 = [x.split("/")[0] for x in b["addresses"] if ":" not in x][0]
print(a["netns"], b["netns"], v4, a["mtu"])
PY
)

# The relay, with the same MTU.
ip netns add "$ra"
ip netns add "$rb"
"$relay" $relay_opt "$ra" "$rb" "$mtu" >"$tmp/relay.out" 2>"$tmp/relay.err" &
relay_pid=$!
wait_line "$tmp/relay.out" '^ready' "$relay_pid"
read -r _ ia ib <"$tmp/relay.out"
ip -n "$ra" addr add 10.99.0.1/24 dev "$ia"
ip -n "$rb" addr add 10.99.0.2/24 dev "$ib"
for ns in "$ra" "$rb"; do ip -n "$ns" link set lo up; done
ip -n "$ra" link set "$ia" up
ip -n "$rb" link set "$ib" up

# CPU seconds (user + system) process $1 has used so far.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

# One iperf3 TCP run from namespace $1 to server $3 in namespace $2 while
# process $4 relays; prints bits per second received, retransmits, and
# the relaying process's CPU microseconds per packet (segments both ways,
# from iperf3's and the kernel's counts).
iperf() {
	local out=$tmp/iperf.json
	ip netns exec "$2" iperf3 -s -1 -D -B "$3" -I "$tmp/server.pid"
	local spid=
	for _ in $(seq 50); do [ -s "$tmp/server.pid" ] && break; sleep 0.05; done
	spid=$(cat "$tmp/server.pid" 2>/dev/null || true)
	sleep 0.2
	local c0 c1 p0 p1
	c0=$(cpu_of "$4")
	p0=$(pkts "$1")
	ip netns exec "$1" iperf3 -c "$3" -t "$secs" -P "$parallel" -J >"$out" || true
	c1=$(cpu_of "$4")
	p1=$(pkts "$1")
	# The one-off server exits after its test; wait for it.
	for _ in $(seq 50); do
		[ -n "$spid" ] && kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$tmp/server.pid"
	python3 - "$out" "$c0" "$c1" "$p0" "$p1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c0, c1, p0, p1 = (float(x) for x in sys.argv[2:6])
us = (c1 - c0) * 1e6 / (p1 - p0) if p1 > p0 else 0
if "error" in d:
    print("0 0 0")
else:
    print(int(d["end"]["sum_received"]["bits_per_second"]),
          d["end"]["sum_sent"].get("retransmits", 0), "%.2f" % us)
PY
}

# Packets the client's namespace sent and received on its TUN (data one
# way, ACKs the other): what the relaying process moved.
pkts() {
	ip netns exec "$1" cat /proc/net/dev | awk '
		$1 ~ /^(ib|relay)[0-9]+:$/ { s += $3 + $11 }
		END { print s + 0 }'
}

echo "TUN: iperf3 TCP, $secs s per run, $rounds rounds, MTU $mtu, -P $parallel ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-6s %14s %7s %8s %16s %7s %8s %7s\n' round "relay Gbit/s" retr "us/pkt" \
	"ibmcast Gbit/s" retr "us/pkt" ratio
: >"$tmp/relay.txt"
: >"$tmp/imc.txt"
for r in $(seq "$rounds"); do
	read -r rb_bps rb_re rb_us < <(iperf "$ra" "$rb" 10.99.0.2 "$relay_pid")
	read -r ib_bps ib_re ib_us < <(iperf "$ns1" "$ns2" "$dst" "$up_pid")
	echo "$rb_bps $rb_us" >>"$tmp/relay.txt"
	echo "$ib_bps $ib_us" >>"$tmp/imc.txt"
	python3 - "$r" "$rb_bps" "$rb_re" "$rb_us" "$ib_bps" "$ib_re" "$ib_us" <<'PY'
import sys
r, a, ar, au, b, br, bu = sys.argv[1:]
a, b = int(a), int(b)
print("%-6s %14.3f %7s %8s %16.3f %7s %8s %7s" % (r, a / 1e9, ar, au,
      b / 1e9, br, bu, "%.2fx" % (b / a) if a else "-"))
PY
done
python3 - "$tmp/relay.txt" "$tmp/imc.txt" <<'PY'
import statistics, sys
a = [line.split() for line in open(sys.argv[1])]
b = [line.split() for line in open(sys.argv[2])]
ga, gb = [int(x[0]) for x in a], [int(x[0]) for x in b]
ua, ub = [float(x[1]) for x in a], [float(x[1]) for x in b]
ma, mb = statistics.median(ga), statistics.median(gb)
print("median %14.3f %7s %8.2f %16.3f %7s %8.2f %7s" % (ma / 1e9, "",
      statistics.median(ua), mb / 1e9, "", statistics.median(ub),
      "%.2fx" % (mb / ma) if ma else "-"))
print("relay   min %.3f max %.3f Gbit/s" % (min(ga) / 1e9, max(ga) / 1e9))
print("ibmcast min %.3f max %.3f Gbit/s" % (min(gb) / 1e9, max(gb) / 1e9))
print("ratio of medians: %.2f (target >= 0.80)" % (mb / ma if ma else 0))
PY
kill -TERM "$up_pid"
wait "$up_pid" || { echo "bench_tun: ibmcast up failed:" >&2; cat "$tmp/up.err" >&2; exit 1; }
up_pid=
python3 - "$tmp/up.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
st = json.loads(lines[-1])
drops = {k: v for k, v in st["fabric"]["drops"].items() if v}
print("ibmcast fabric: sent %d, delivered %d, drops %s" %
      (st["fabric"]["sent"], st["fabric"]["delivered"], drops or "none"))
for i in st["interfaces"]:
    d = {k: v for k, v in i["drops"].items() if v}
    print("  %s: kernel->ipoib %d, ipoib->kernel %d, TUN wake-ups %d, drops %s, IPoIB drops %d" %
          (i["host"], i["to_ipoib"], i["to_kernel"], i["tun_wakeups"], d or "none", i["ipoib_drops"]))
PY
