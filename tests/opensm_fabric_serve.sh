#!/bin/bash
# `ibmcast fabric serve SPEC --opensm`: the command starts OpenSM on the
# served fabric itself and prints the exports once the subnet is up;
# sminfo, saquery and ibnetdiscover run with them and see the fabric of
# the spec with OpenSM as its SM (its priority from --osm-args, its port
# the SM LID's). SIGTERM and SIGINT stop OpenSM before the command exits
# 0, leaving neither the process nor its directory. Then the errors: bad
# arguments (exit 2), a missing opensm or umad2sim (77), an OpenSM that
# exits or never brings the subnet up (1, and that one is stopped too).
# Real time: no timing is asserted. Arguments: build dir, source dir.
# check() evals its condition later; cleanup runs from the trap.
# shellcheck disable=SC2016,SC2317
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
IMC=$build/ibmcast
U2S=${IBMCAST_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
SPEC=fat-tree:leaves=2,hosts=3,spines=1
fail=0

check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

for t in opensm sminfo saquery ibnetdiscover; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
done
[ -r "$U2S" ] || { echo "SKIP: umad2sim not found at $U2S (libumad2sim0)"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/osmserve.XXXXXX") || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	cd /
	[ -n "${IMC_TEST_KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir" || exit 1
# OpenSM's private directory goes here, where the test can see it.
export TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
unset IBMCAST_OPENSM IBMCAST_OPENSM_KEEP

# serve NAME ARGS...: the server in the background, stdout NAME.out,
# stderr NAME.err; waits for the exports (or the exit) up to 120 s.
serve() {
	local name=$1
	shift
	"$IMC" fabric serve "$@" > "$name.out" 2> "$name.err" &
	pid=$!
	for _ in $(seq 1200); do
		grep -q '^export LD_PRELOAD=' "$name.out" && return 0
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop SIG: the signal to the server, then its exit status (within 60 s).
stop() {
	local rc
	kill -"$1" $pid
	for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && { kill -KILL $pid; echo "FAIL the server outlived SIG$1 by 60 s"; fail=1; }
	wait $pid
	rc=$?
	pid=
	return $rc
}

"$IMC" fabric net "$SPEC" > spec.net
nodes=$(grep -c '^\(Hca\|Switch\)' spec.net)
# The first HCA's port GUID: its caguid + 1 (topo_gen.c).
sm_guid=$(printf '0x%x' $(( $(sed -n 's/^caguid=//p' spec.net | head -n 1) + 1 )))

if ! serve up "$SPEC" --opensm --osm-args "-p 3" --sock "imosv$$"; then
	cat up.err
	echo "FAIL the server did not print the exports"
	exit 1
fi
cat up.err
osm=$(sed -n 's/^opensm: pid \([0-9]*\) SUBNET UP, every port ACTIVE after .* (\(.*\))$/\1/p' up.err)
osmdir=$(sed -n 's/^opensm: pid [0-9]* SUBNET UP.* (\(.*\))$/\1/p' up.err)
check "a line names OpenSM's pid ($osm) and directory ($osmdir)" \
	'[ -n "$osm" ] && [ -d "$osmdir" ] && [ "${osmdir#"$TMPDIR"/ibmcast-opensm.}" != "$osmdir" ]'
check "that pid is an opensm started with -d2 and the extra arguments" \
	'tr "\0" " " < /proc/$osm/cmdline | grep -q "opensm -d2 -f $osmdir/osm.log -p 3 $"'
check "OpenSM logged SUBNET UP" 'grep -q "SUBNET UP" "$osmdir/osm.log"'
check "the exports: the socket name asked for, umad2sim" \
	'grep -qx "export IBSIM_SOCKNAME=imosv$$" up.out && grep -qx "export LD_PRELOAD=$U2S" up.out'

eval "$(cat up.out)"
mkdir -p q && cd q || exit 1
sminfo > sminfo.txt 2> sminfo.err
cat sminfo.txt
smlid=$(sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p' sminfo.txt)
check "sminfo: OpenSM is MASTER at priority 3 (--osm-args)" \
	'grep -q "priority 3 state 3 SMINFO_MASTER" sminfo.txt'
check "sminfo: the SM's port is the first HCA's ($sm_guid)" \
	'grep -q "sm guid $sm_guid," sminfo.txt'
saquery -s > issm.txt 2> issm.err
check "saquery -s: the SM's port has LID $smlid and knows itself as the master" \
	'[ -n "$smlid" ] && grep -q "base_lid\.*$smlid$" issm.txt &&
	 grep -q "master_sm_base_lid\.*$smlid$" issm.txt'
ibnetdiscover > disc.txt 2> disc.err
found=$(grep -c '^\(Ca\|Switch\)' disc.txt)
check "ibnetdiscover finds the spec's $nodes nodes ($found)" '[ "$found" -eq "$nodes" ]'
# One NodeRecord per LID ibnetdiscover printed (umad2sim carries no
# RMPP: one Get per LID rather than a GetTable).
lids=$(sed -n 's/.* lid \([0-9]*\) lmc .*/\1/p' disc.txt | sort -n -u)
: > nr.txt
for l in $lids; do saquery -t 4000 NR "$l" >> nr.txt 2>> nr.err; done
nr=$(grep -c '^NodeRecord dump' nr.txt)
check "saquery: a NodeRecord for each of the $(echo "$lids" | wc -w) LIDs ($nr)" \
	'[ -n "$lids" ] && [ "$nr" -eq "$(echo "$lids" | wc -w)" ]'
check "saquery: the SM LID's NodeRecord is the first HCA's" \
	'saquery -t 4000 NR "$smlid" 2>/dev/null | grep -q "port_guid\.*0x0*${sm_guid#0x}$"'
cd "$dir" || exit 1
unset IBSIM_SOCKNAME LD_PRELOAD

stop TERM
rc=$?
check "SIGTERM: the server exits 0 (got $rc)" '[ $rc -eq 0 ]'
check "SIGTERM: OpenSM (pid $osm) is gone" '[ -n "$osm" ] && ! kill -0 "$osm" 2>/dev/null'
check "SIGTERM: its directory is removed" '[ -n "$osmdir" ] && [ ! -e "$osmdir" ]'

# SIGINT, on a net file, OpenSM at the server's --node.
if serve int "$src/examples/ibsim-2sw.net" --opensm --node Hca3 --sock "imosi$$"; then
	osm=$(sed -n 's/^opensm: pid \([0-9]*\) .*/\1/p' int.err)
	check "--node: OpenSM runs attached to it (SIM_HOST unset: the server's default)" \
		'[ -n "$osm" ] && ! tr "\0" "\n" < /proc/$osm/environ | grep -q "^SIM_HOST="'
	eval "$(cat int.out)"
	(cd q && sminfo && ibnetdiscover) > int.q 2>/dev/null
	unset IBSIM_SOCKNAME LD_PRELOAD
	hlid=$(awk '/^Ca.*# "Hca3"/ { f = 1; next }
		    f && /^\[1\]/ { sub(/.*# lid /, ""); print $1; exit }' int.q)
	check "--node Hca3: sminfo's SM LID is Hca3's (${hlid:-none})" \
		'[ -n "$hlid" ] && grep -q "^sminfo: sm lid $hlid sm guid .*SMINFO_MASTER" int.q'
	stop INT
	rc=$?
	check "SIGINT: the server exits 0 (got $rc)" '[ $rc -eq 0 ]'
	check "SIGINT: OpenSM (pid $osm) is gone" '[ -n "$osm" ] && ! kill -0 "$osm" 2>/dev/null'
else
	cat int.err
	check "--node: the server came up" false
fi
check "no directory of OpenSM's is left" '[ -z "$(ls -A "$TMPDIR")" ]'

# Bad arguments: exit 2 and a line that names the option.
bad() { # WANT ARGS...: exit 2 with WANT on stderr, nothing served
	local want=$1 rc
	shift
	timeout 30 "$IMC" fabric serve "$@" > bad.out 2> bad.err
	rc=$?
	check "bad: $* -> exit 2, '$want'" \
		'[ $rc -eq 2 ] && grep -qF -- "$want" bad.err && [ ! -s bad.out ]'
}
bad "--osm-args needs --opensm" "$SPEC" --osm-args "-p 3"
bad "--up-wait needs --opensm" "$SPEC" --up-wait 5
bad "--up-wait 0: at least 1" "$SPEC" --opensm --up-wait 0
bad "--up-wait soon:" "$SPEC" --opensm --up-wait soon
bad "one NETFILE or SPEC expected" --opensm

# A missing opensm or umad2sim: 77 and the reason.
IBMCAST_OPENSM=/nonexistent/opensm timeout 60 "$IMC" fabric serve "$SPEC" \
	--opensm --sock "imosm$$" > miss.out 2> miss.err
rc=$?
check "no opensm: exit 77 and the reason" \
	'[ $rc -eq 77 ] && grep -q "opensm not found (install opensm or set IBMCAST_OPENSM)" miss.err && [ ! -s miss.out ]'
IBMCAST_UMAD2SIM=/nonexistent/u2s.so timeout 60 "$IMC" fabric serve "$SPEC" \
	--opensm --sock "imosm$$" > miss.out 2> miss.err
rc=$?
check "no umad2sim: exit 77 and the reason" \
	'[ $rc -eq 77 ] && grep -q "umad2sim not found at /nonexistent/u2s.so" miss.err'

# OpenSM refuses an argument: exit 1, its status named.
timeout 60 "$IMC" fabric serve "$SPEC" --opensm --osm-args "--no-such-option" \
	--sock "imosx$$" > exit.out 2> exit.err
rc=$?
check "OpenSM exits: exit 1, 'opensm exited (status'" \
	'[ $rc -eq 1 ] && grep -q "opensm exited (status [1-9]" exit.err && [ ! -s exit.out ]'

# An "opensm" that never brings the subnet up: the wait's bound ends it,
# and that process is stopped as well.
printf '#!/bin/sh\necho $$ > %s/fake.pid\nexec sleep 300\n' "$dir" > fake
chmod +x fake
IBMCAST_OPENSM=$dir/fake timeout 60 "$IMC" fabric serve "$SPEC" --opensm \
	--up-wait 1 --sock "imosf$$" > slow.out 2> slow.err
rc=$?
fake=$(cat fake.pid 2>/dev/null)
check "no SUBNET UP in --up-wait 1: exit 1, the reason" \
	'[ $rc -eq 1 ] && grep -q "did not bring the subnet up in 1.0 s (no SUBNET UP" slow.err'
check "that process (pid $fake) is gone" '[ -n "$fake" ] && ! kill -0 "$fake" 2>/dev/null'
check "no directory of OpenSM's is left" '[ -z "$(ls -A "$TMPDIR")" ]'
exit $fail
