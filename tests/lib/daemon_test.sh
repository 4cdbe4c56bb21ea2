# What the ibmcastd tests on OpenSM and ibsim share; sourced (bash) with
# the test's own arguments:
#
#   . "$(dirname "$(realpath "$0")")/lib/daemon_test.sh" "$@"
#
# Everything of ibsim_test.sh, and:
#   daemon_rerun SECS        ibsim_rerun SECS 3 after checking for
#                            ibmcastd, saquery and python3 (skip: 77)
#   daemon_start [ARGS]      ibmcastd on Hca2 (DPID), logging to
#                            daemon.log, socket in $RUN (mode 0755); waits
#                            until it listens and sets PGID (its port GID)
#   client NAME ARGS...      `ibmcast join ARGS` through the daemon in the
#                            background (pid in cpid[NAME]), output in
#                            NAME.out; it talks to the daemon only (no
#                            umad2sim)
#   joined NAME              how many "joined" lines NAME.out has
#   sa_view [PORT_GID]       "MGID JOINSTATE" lines of the port's
#                            memberships at the SA (saquery on Hca1,
#                            GetTable by PortGID: at most 3 records
#                            under ibsim, which has no RMPP)
#   sa_member MGID [PORT_GID] the port's JoinState in group MGID at the
#                            SA, or nothing
#   wait_for DESC SECS COND  polls COND every 0.1 s; FAIL after SECS
#   now                      seconds since the epoch, with nanoseconds
# shellcheck shell=bash
# shellcheck source=tests/lib/ibsim_test.sh
. "$(dirname "${BASH_SOURCE[0]}")/ibsim_test.sh" "$@"
ibmcastd=$build/ibmcastd
declare -A cpid

daemon_rerun() {
	[ -n "${IBSIM_HARNESS_DIR:-}" ] || {
		[ -x "$ibmcastd" ] || { echo "no $ibmcastd"; exit 1; }
		command -v saquery >/dev/null 2>&1 ||
			{ echo "SKIP: saquery (infiniband-diags) not installed"; exit 77; }
		command -v python3 >/dev/null 2>&1 ||
			{ echo "SKIP: python3 not installed (reads the JSON)"; exit 77; }
	}
	ibsim_rerun "$1" 3
	# The run directory must be reachable by other users (the policy
	# tests run clients as nobody): the harness's own is 0700.
	RUN=$(mktemp -d /tmp/ibmcastd-test.XXXXXX) || exit 1
	chmod 0755 "$RUN"
	trap 'daemon_cleanup' EXIT
	export IBMCAST_RUN_DIR=$RUN
	export IBMCAST_SOCKET=$RUN/ibmcastd.sock
}

daemon_cleanup() {
	local p
	for p in "${cpid[@]}" ${DPID:-}; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$RUN"
}

now() { date +%s.%N; }

wait_for() {
	local end
	end=$(echo "$(now) + $2" | bc)
	until eval "$3"; do
		if [ "$(echo "$(now) > $end" | bc)" = 1 ]; then
			echo "FAIL $1 (not within $2 s)"
			fail=1
			return 1
		fi
		sleep 0.1
	done
	echo "ok   $1"
	return 0
}

daemon_start() {
	local n=0
	SIM_HOST=Hca2 "$ibmcastd" --runtime-dir "$RUN" --group 0 --grace 1 \
		--audit 1 "$@" >> daemon.log 2>&1 &
	DPID=$!
	until grep -q "listening on $RUN/ibmcastd.sock" daemon.log 2>/dev/null &&
	      [ -S "$RUN/ibmcastd.sock" ]; do
		kill -0 "$DPID" 2>/dev/null || { echo "FAIL ibmcastd exited:";
			cat daemon.log; return 1; }
		n=$((n + 1))
		[ $n -lt 200 ] || { echo "FAIL ibmcastd did not listen in 10 s"; return 1; }
		sleep 0.05
	done
	PGID=$(sed -n 's/.*info: port [^ ]* gid=\([^ ]*\) .*/\1/p' daemon.log | tail -n 1)
	[ -n "$PGID" ]
}

client() {
	local name=$1
	shift
	# No timeout(1) in between: the pid is the client's own (signals in
	# the tests go to it); the harness's watchdog bounds the run.
	env -u LD_PRELOAD "$ibmcast" join "$@" > "$name.out" 2> "$name.err" &
	cpid[$name]=$!
}

joined() { grep -c "^joined " "$1.out"; }

sa_view() {
	local g=${1:-$PGID}
	SIM_HOST=Hca1 saquery --smkey 1 --gid "$g" MCMR 2>/dev/null | awk -v g="$g" '
		/MGID\.+/ { sub(/.*MGID\.+/, ""); m = $1 }
		/PortGid\.+/ { sub(/.*PortGid\.+/, ""); p = $1 }
		/JoinState\.+/ { sub(/.*JoinState\.+/, "");
			if (p == g) print m, tolower($1) }' | sort
}

sa_member() {
	local g=${2:-$PGID}
	SIM_HOST=Hca1 saquery --smkey 1 --mgid "$1" --gid "$g" MCMR 2>/dev/null |
		sed -n 's/.*JoinState\.*//p' | tr 'A-F' 'a-f' | head -n 1
}
