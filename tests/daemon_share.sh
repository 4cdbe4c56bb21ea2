#!/bin/bash
# ibmcastd on OpenSM/ibsim: five processes on one HCA (Hca2) join one
# group through the daemon with different JoinStates and leave in a
# random order (seeded: DAEMON_SEED replays it); after every step
# saquery (infiniband-diags) shows the port holding exactly the union of
# the JoinStates still wanted, and `ibmcast mcast show` lists each
# process with its members. A standalone `ibmcast join` on Hca3 holds
# FullMember throughout (so that OpenSM keeps the group) and is never
# disturbed. A client killed with SIGKILL has its members left within
# 100 ms (measured from the daemon's log) and the SA updated. A
# standalone process on the daemon's port is refused by the port's lock,
# and the daemon is refused a port a standalone process owns.
# Arguments: build directory, source directory.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/daemon_test.sh" "$@"
daemon_rerun 150

G=ff12:e001::10
G2=ff12:e001::11
seed=${DAEMON_SEED:-$RANDOM}
echo "seed=$seed (DAEMON_SEED=$seed replays the order)"

# Hca3 keeps the group alive: OpenSM deletes a group with its last
# FullMember.
SIM_HOST=Hca3 timeout --kill-after=5 150 "$ibmcast" join --no-daemon \
	--create --qkey 0x1234 "$G" > hca3.out 2> hca3.err &
cpid[hca3]=$!
wait_ready hca3.out "${cpid[hca3]}" || { cat hca3.err; exit 1; }
GID3=$(sed -n 's/^ready .*gid=\([^ ]*\) .*/\1/p' hca3.out)
wait_for "Hca3 (standalone) joined" 10 '[ "$(joined hca3)" = 1 ]'

# The other way round: a standalone owner of Hca2 keeps the daemon out.
SIM_HOST=Hca2 timeout --kill-after=5 150 "$ibmcast" join --no-daemon \
	--create --qkey 0x1234 "$G2" > solo.out 2> solo.err &
cpid[solo]=$!
wait_ready solo.out "${cpid[solo]}" || { cat solo.err; exit 1; }
SIM_HOST=Hca2 timeout 20 "$ibmcastd" --runtime-dir "$RUN" --group 0 > solo.log 2>&1
rc=$?
cat solo.log
check "ibmcastd refuses a port a standalone join owns: exit 1, the owner named" \
	'[ $rc -eq 1 ] && grep -q "is held by process [0-9]* ibmcast-join: stop it first" solo.log'
kill -TERM "${cpid[solo]}"; wait "${cpid[solo]}"; unset "cpid[solo]"

daemon_start || exit 1
check "nothing held by the daemon's port before" '[ -z "$(sa_view)" ]'

states=(full nonmember sendonly sendonly-full full)
bits=(1 2 4 8 1)
for i in 0 1 2 3 4; do
	client "c$i" --qkey 0x1234 "$G=${states[$i]}"
done
for i in 0 1 2 3 4; do
	wait_for "c$i (${states[$i]}) joined through the daemon" 10 \
		'[ "$(joined c$i)" = 1 ]'
done
check "every client got the union JoinState 0xf" \
	'[ "$(grep -h "^joined " c?.out | grep -c "join_state=0xf$")" = 5 ] ||
	 [ "$(grep -h "^joined " c?.out | wc -l)" = 5 ]'
wait_for "saquery: the port holds the union 0xf" 10 \
	'[ "$(sa_member $G)" = 0xf ]'

env -u LD_PRELOAD "$ibmcast" mcast show --all --json > show.json 2> show.err
r=$(python3 - show.json "${cpid[c0]}" "${cpid[c1]}" "${cpid[c2]}" \
	"${cpid[c3]}" "${cpid[c4]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["daemon"]
pids = sorted(int(p) for p in sys.argv[2:])
cl = [c for c in d["clients"] if c["members"]]
g = [x for x in d["groups"] if x["mgid"] == "ff12:e001::10"][0]
print(sorted(c["pid"] for c in cl) == pids,
      sorted(c["members"][0]["join_state"] for c in cl) == [1, 1, 2, 4, 8],
      all(c["comm"] == "ibmcast" and c["uid"] == 0 for c in cl),
      g["join_state"], g["members"], g["is_joined"])
PY
)
check "mcast show: five processes (pid, uid, command) with their members" \
	'[ "$r" = "True True True 15 5 True" ]' || echo "$r"
env -u LD_PRELOAD "$ibmcast" mcast show --all > show.txt 2>&1
check "mcast show (text): the group at the SA, and the clients" \
	'grep -q "^  group $G mlid=0x[0-9a-f]* join_state=0xf wanted=0xf members=5 joined$" show.txt &&
	 [ "$(grep -c "^  client pid=[0-9]* uid=0 gid=0 comm=ibmcast members=1$" show.txt)" = 5 ]'

# Leave in a seeded random order; the SA follows the union.
order=$(python3 -c "import random; r = random.Random($seed); l = list(range(5)); r.shuffle(l); print(*l)")
left=()
for i in $order; do
	kill -TERM "${cpid[c$i]}"
	wait "${cpid[c$i]}"
	rc=$?
	unset "cpid[c$i]"
	left+=("$i")
	want=0
	for j in 0 1 2 3 4; do
		case " ${left[*]} " in *" $j "*) ;; *) want=$((want | bits[j])) ;; esac
	done
	if [ $want = 0 ]; then
		wait_for "c$i (${states[$i]}) left (exit $rc): the port holds nothing" 10 \
			'[ -z "$(sa_member $G)" ]'
	else
		w=$(printf '0x%x' $want)
		wait_for "c$i (${states[$i]}) left (exit $rc): saquery shows the union $w" 10 \
			'[ "$(sa_member $G)" = "$w" ]'
	fi
done
check "Hca3's FullMember was never touched" '[ "$(sa_member $G "$GID3")" = 0x1 ]'

# A client killed with SIGKILL: its members are left for it.
client k --create --qkey 0x1234 "$G2" "$G=nonmember"
wait_for "k joined two groups" 10 '[ "$(joined k)" = 2 ]'
wait_for "saquery: the port in $G2" 10 '[ "$(sa_member $G2)" = 0x1 ]'
ms=$(python3 - "${cpid[k]}" daemon.log <<'PY'
import os, signal, sys, time
pid, log = int(sys.argv[1]), sys.argv[2]
pat = "(pid %d " % pid
off = os.path.getsize(log)
t0 = time.monotonic()
os.kill(pid, signal.SIGKILL)
while time.monotonic() - t0 < 5:
    with open(log) as f:
        f.seek(off)
        if any(pat in l and "leaving its 2 members" in l for l in f):
            print("%.1f" % ((time.monotonic() - t0) * 1000))
            sys.exit(0)
    time.sleep(0.0005)
print("never")
PY
)
wait "${cpid[k]}" 2>/dev/null
unset "cpid[k]"
echo "SIGKILLed client: its 2 members left by the daemon after $ms ms"
check "members of a SIGKILLed client left within 100 ms ($ms ms)" \
	'[ "$ms" != never ] && awk -v m="$ms" "BEGIN { exit !(m < 100) }"'
wait_for "saquery: the SA no longer has the port in either group" 10 \
	'[ -z "$(sa_member $G2)" ] && [ -z "$(sa_member $G)" ]'

# The port is the daemon's: a standalone process is refused.
err=$(SIM_HOST=Hca2 timeout 20 "$ibmcast" join --no-daemon --no-ctl "$G" 2>&1 >/dev/null)
rc=$?
echo "$err"
check "a standalone join on the daemon's port: exit 1, the owner named" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "is already owned by process $DPID ibmcastd"'
check "the daemon kept running" 'kill -0 $DPID'

kill -TERM "${cpid[hca3]}"; wait "${cpid[hca3]}"; unset "cpid[hca3]"
kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "ibmcastd exits 0 on SIGTERM" '[ $rc -eq 0 ]'
[ $fail = 0 ] || { echo "--- daemon.log"; cat daemon.log; }
exit $fail
