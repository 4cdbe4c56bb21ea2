#!/bin/bash
# ibmcastd on OpenSM/ibsim: the daemon killed with SIGKILL and started
# again. Its clients notice (daemon state=down, members rejoining),
# reconnect by themselves and re-join (rejoining, then joined again); a
# client that exited while the daemon was down wants its group no more,
# and the new daemon's audit deletes that membership at the SA after the
# grace period; nothing is held twice (saquery shows the union of the live
# clients exactly); again with the audit given OpenSM's SM_Key. Finally SIGTERM: the daemon asks its clients to
# detach, leaves every member, waits for the SA's answers and exits 0,
# and the SA holds nothing of the port, as before the daemon started.
# Arguments: build directory, source directory.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/daemon_test.sh" "$@"
daemon_rerun 150

G1=ff12:e001::21
G2=ff12:e001::22
G3=ff12:e001::23

daemon_start || exit 1
before=$(sa_view)
check "the SA holds nothing of the port before the daemon's clients" \
	'[ -z "$before" ]'
client a --create --qkey 0x1234 "$G1" "$G2"
wait_for "a joined $G1 and $G2" 10 '[ "$(joined a)" = 2 ]'
client b --qkey 0x1234 "$G1=nonmember"
client c --create --qkey 0x1234 "$G3"
wait_for "b and c joined" 10 '[ "$(joined b)" = 1 ] && [ "$(joined c)" = 1 ]'
want="$G1 0x3
$G2 0x1
$G3 0x1"
wait_for "saquery: the union of a, b and c" 10 '[ "$(sa_view)" = "$want" ]'

kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
echo "ibmcastd (pid $DPID) killed with SIGKILL"
wait_for "a and b see the daemon gone, their members rejoining" 10 \
	'grep -q "^daemon state=down" a.out && grep -q "^daemon state=down" b.out &&
	 [ "$(grep -c "^rejoining " a.out)" = 2 ] && [ "$(grep -c "^rejoining " b.out)" = 1 ]'
kill -TERM "${cpid[c]}"
wait "${cpid[c]}"
rc=$?
unset "cpid[c]"
check "c exits (status $rc) while the daemon is down, leaving $G3" \
	'grep -q "^left mgid=$G3" c.out'
check "the SA still has every membership (nobody told it otherwise)" \
	'[ "$(sa_view)" = "$want" ]'

: > daemon.log
daemon_start || exit 1
echo "ibmcastd started again (pid $DPID)"
# ends_joined F: for each MGID of F, its events read joined, ..., rejoining,
# ..., joined: REJOINING after the daemon died, JOINED again at the end.
ends_joined() {
	python3 - "$1" <<'PY'
import sys
ev = {}
for l in open(sys.argv[1]):
    w = l.split()
    if w and w[0] in ("joined", "rejoining") and w[1].startswith("mgid="):
        ev.setdefault(w[1][5:], []).append(w[0])
ok = ev and all(e[0] == "joined" and "rejoining" in e and e[-1] == "joined"
                and e.index("rejoining") < len(e) - 1 for e in ev.values())
sys.exit(0 if ok else 1)
PY
}
wait_for "a and b reconnect by themselves and are joined again" 15 \
	'[ "$(grep -c "^daemon state=up" a.out)" = 2 ] &&
	 [ "$(grep -c "^daemon state=up" b.out)" = 2 ] &&
	 ends_joined a.out && ends_joined b.out'
check "each printed, per group, joined, rejoining, then joined again" \
	'ends_joined a.out && ends_joined b.out'
want2="$G1 0x3
$G2 0x1"
wait_for "the audit deleted $G3, which nobody wants; the rest is held once" 15 \
	'[ "$(sa_view)" = "$want2" ]'
check "the daemon's log names the audit's Delete of $G3" \
	'grep -q "audit: deleted JoinState 0x[0-9a-f]* of $G3: nobody re-joined" daemon.log'
env -u LD_PRELOAD "$ibmcast" mcast show --all > show.txt 2>&1
check "mcast show: two clients, $G1 with two members, no $G3" \
	'[ "$(grep -c "^  client pid=" show.txt)" = 2 ] &&
	 grep -q "^  group $G1 .* members=2 joined$" show.txt &&
	 ! grep -q "$G3" show.txt' || cat show.txt

# Again, the new daemon with OpenSM's SM_Key (its audit then reads
# PortGID and JoinState): b's NonMember of $G1 and d's $G3 are wanted by
# nobody after the restart.
client d --create --qkey 0x1234 "$G3"
wait_for "d joined $G3" 10 '[ "$(joined d)" = 1 ] && [ "$(sa_member $G3)" = 0x1 ]'
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
for c in b d; do kill -TERM "${cpid[$c]}"; wait "${cpid[$c]}"; unset "cpid[$c]"; done
: > daemon.log
daemon_start --sm-key 1 || exit 1
wait_for "with --sm-key: a alone re-joined; the SA holds $G1 0x1, $G2 0x1, and no $G3" 15 \
	'[ "$(grep -c "^daemon state=up" a.out)" = 3 ] && ends_joined a.out &&
	 [ "$(sa_view)" = "$G1 0x1
$G2 0x1" ]'

t0=$(now)
kill -TERM "$DPID"
wait "$DPID"
rc=$?
secs=$(echo "$(now) - $t0" | bc)
echo "ibmcastd stopped by SIGTERM in $secs s"
check "SIGTERM: ibmcastd exits 0" '[ $rc -eq 0 ]'
check "SIGTERM: the daemon logged every Delete answered" \
	'grep -q "every Delete answered" daemon.log'
check "SIGTERM: the SA holds nothing of the port, as before" \
	'[ "$(sa_view)" = "$before" ]'
check "SIGTERM: the client was told (an error for each member)" \
	'[ "$(grep -c "^error mgid=.* ESHUTDOWN" a.out)" = 2 ]'
[ $fail = 0 ] || { echo "--- daemon.log"; cat daemon.log; for f in ?.out; do echo "--- $f"; cat "$f"; done; }
exit $fail
