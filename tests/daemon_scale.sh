#!/bin/bash
# ibmcastd on OpenSM/ibsim: 100 client processes each join the same 100
# groups through the daemon (10,000 members). Every member is joined;
# the daemon holds 100 groups of 100 members each, and the SA shows the
# port once in each of the 100 groups (saquery per group). One ibsim
# client (the daemon) serves them all: the clients never talk to ibsim.
# When all leave, the SA holds nothing of the port. Prints the time to
# join everything and the daemon's resident memory.
# Arguments: build directory, source directory.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/daemon_test.sh" "$@"
daemon_rerun 200

NC=${DAEMON_SCALE_CLIENTS:-100}
NG=${DAEMON_SCALE_GROUPS:-100}
mgids=()
for g in $(seq "$NG"); do mgids+=("$(printf 'ff12:e003::%x' "$g")"); done

daemon_start --max-conns-per-uid $((NC + 10)) || exit 1
rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status")
t0=$(now)
for c in $(seq "$NC"); do
	client "c$c" --create --qkey 0x1234 "${mgids[@]}"
done
all_joined() { [ "$(cat c*.out | grep -c '^joined ')" = $((NC * NG)) ]; }
wait_for "$NC clients x $NG groups: every member joined" 90 all_joined
secs=$(echo "$(now) - $t0" | bc)
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status")
echo "$((NC * NG)) members of $NC processes joined through ibmcastd in $secs s;" \
	"daemon RSS ${rss0} kB idle, ${rss} kB with them"
check "no client reported an error" '! grep -q "^error" c*.out'

env -u LD_PRELOAD "$ibmcast" mcast show --all --json > show.json 2> show.err
r=$(python3 - show.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["daemon"]
cl = [c for c in d["clients"] if c["members"]]
gs = d["groups"]
print(len(cl), sorted(set(len(c["members"]) for c in cl)), len(gs),
      sorted(set(g["members"] for g in gs)), all(g["is_joined"] for g in gs),
      sorted(set(g["join_state"] for g in gs)))
PY
)
check "mcast show: $NC clients of $NG members, $NG groups of $NC members, joined" \
	'[ "$r" = "$NC [$NG] $NG [$NC] True [1]" ]' || echo "$r"

bad=0
for m in "${mgids[@]}"; do
	[ "$(sa_member "$m")" = 0x1 ] || { echo "SA: $m: '$(sa_member "$m")'"; bad=$((bad + 1)); }
done
check "saquery: the port is in each of the $NG groups, once, FullMember" '[ $bad = 0 ]'

for c in $(seq "$NC"); do kill -TERM "${cpid[c$c]}"; done
for c in $(seq "$NC"); do wait "${cpid[c$c]}"; unset "cpid[c$c]"; done
wait_for "every client left: the SA holds nothing of the port" 30 \
	'[ -z "$(sa_view)" ] && [ -z "$(sa_member "${mgids[0]}")" ] &&
	 [ -z "$(sa_member "${mgids[NG - 1]}")" ]'
kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "ibmcastd exits 0 on SIGTERM" '[ $rc -eq 0 ]'
[ $fail = 0 ] || { echo "--- daemon.log"; tail -n 30 daemon.log; }
exit $fail
