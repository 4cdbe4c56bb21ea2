#!/bin/bash
# A real SA for tests: the ibsim fabric simulator with OpenSM on it.
#
#   ibsim-harness.sh start [OPTIONS] NETFILE DIR   bring up, leave running,
#                                                  print the exports
#   ibsim-harness.sh stop DIR                      tear down what start began
#   ibsim-harness.sh run [OPTIONS] NETFILE -- CMD...
#                                                  bring up, run CMD, tear down
#   ibsim-harness.sh env DIR                       print the exports again
#
# e.g.  eval "$(ibsim-harness.sh start net /tmp/sim)"; cd /tmp/sim
#       SIM_HOST=Hca2 saquery -g; ...; ibsim-harness.sh stop /tmp/sim
#
# Options:
#   --timeout SECS    watchdog: everything is killed after SECS
#                     (run: default 120, start: default 600)
#   --sm-host NODE    the node OpenSM attaches to (SIM_HOST; default: the
#                     first node of NETFILE)
#   --ibsim-args ARGS extra ibsim arguments (e.g. "-M 16384" for more
#                     multicast groups, "-N 4096" beyond 2048 nodes)
#   --owner PID       start: also tear down when PID exits (default: the
#                     caller of start)
#
# What CMD (or a process started with the output of `env`) gets:
#   IBSIM_SOCKNAME    a private socket name, so that concurrent simulators
#                     (parallel ctest jobs) never meet
#   LD_PRELOAD        umad2sim, so that libibumad talks to ibsim
#   ASAN_OPTIONS      + verify_asan_link_order=0 (umad2sim comes first)
#                     and a suppression of umad2sim's own heap overflow
#   IBSIM_HARNESS_DIR, IBSIM_HARNESS_NET, IBSIM_HARNESS_U2S, and
#   IBSIM_HARNESS_CWD (the directory run was called from)
# CMD runs in DIR (run it there after start too): umad2sim writes its fake
# sysfs as ./sys-PID into the current directory of every process. Pick the HCA of a process with
# SIM_HOST=<node name>; start processes only after start returns (they read
# their LID once); at most ~10 processes can attach; keep at most ~32 SA
# requests in flight per process.
#
# Exit: run returns CMD's status, or 77 when ibsim/OpenSM are missing or
# the fabric did not come up (the reason goes to stderr), 124 when the
# watchdog fired. start returns 0 when OpenSM reported SUBNET UP, 77 as run.
set -u

U2S=${IBSIM_HARNESS_U2S:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
SKIP=77
# shellcheck source-path=SCRIPTDIR source=lib/harness-proc.sh
. "$(dirname "$(realpath "$0")")/lib/harness-proc.sh"

die() { echo "ibsim-harness: $*" >&2; exit 1; }
skip() { echo "ibsim-harness: $*" >&2; exit $SKIP; }

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit 2
}

check_tools() {
	command -v ibsim >/dev/null 2>&1 || { echo "ibsim not installed (ibsim-utils)"; return 1; }
	command -v opensm >/dev/null 2>&1 || { echo "opensm not installed"; return 1; }
	[ -r "$U2S" ] || { echo "umad2sim not found at $U2S (libumad2sim0)"; return 1; }
	return 0
}

do_stop() {
	local dir=$1
	[ -d "$dir" ] || return 0
	# The watchdog first, so that it does not race the teardown.
	kill_wait "$(pidof_file "$dir/watchdog.pid")" 20
	kill_wait "$(pidof_file "$dir/opensm.pid")" 2
	kill_wait "$(pidof_file "$dir/ibsim.pid")" 0
	rm -f "$dir/watchdog.pid" "$dir/opensm.pid" "$dir/ibsim.pid"
	return 0
}

# do_start NETFILE DIR TIMEOUT OWNER SMHOST IBSIMARGS; prints the reason
# and returns 1 when the fabric does not come up.
do_start() {
	local net=$1 dir=$2 secs=$3 owner=$4 smhost=$5 iargs=$6
	local sock n ib osm
	mkdir -p "$dir" || { echo "cannot create $dir"; return 1; }
	dir=$(cd "$dir" && pwd)
	[ -r "$net" ] || { echo "cannot read net file $net"; return 1; }
	cp "$net" "$dir/net" || return 1
	# Abstract socket names: short, and unique per harness.
	sock="imc$$x${RANDOM}${RANDOM}"
	export IBSIM_SOCKNAME=$sock
	: > "$dir/harness.log"
	start_watchdog "$dir" "$owner" "$secs" simulator opensm.pid ibsim.pid

	( cd "$dir" && exec ibsim -s -n $iargs net ) > "$dir/ibsim.log" 2>&1 \
		</dev/null &
	ib=$!
	echo $ib > "$dir/ibsim.pid"
	n=200
	until grep -qa " @$sock:ctl@*\$" /proc/net/unix 2>/dev/null; do
		if ! alive $ib; then
			echo "ibsim exited: $(tail -n 3 "$dir/ibsim.log" | tr '\n' ' ')"
			return 1
		fi
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "ibsim control socket did not appear"; return 1; }
		sleep 0.05
	done

	( cd "$dir" && SIM_HOST=$smhost OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir \
		LD_PRELOAD=$U2S exec opensm -d2 -f "$dir/osm.log" ) \
		> "$dir/osm.out" 2>&1 </dev/null &
	osm=$!
	echo $osm > "$dir/opensm.pid"
	# -d2 makes OpenSM flush its log per line.
	n=400
	until grep -q 'SUBNET UP' "$dir/osm.log" 2>/dev/null; do
		if ! alive $osm; then
			echo "opensm exited: $(tail -n 3 "$dir/osm.out" | tr '\n' ' ')"
			return 1
		fi
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "OpenSM did not report SUBNET UP in 20 s"; return 1; }
		sleep 0.05
	done
	# umad2sim's read() copies 32 bytes past its own buffer into each
	# MAD it hands over: not ours to report in sanitized programs.
	echo "interceptor_via_lib:libumad2sim.so" > "$dir/asan.supp"
	{
		echo "export IBSIM_SOCKNAME=$sock"
		echo "export LD_PRELOAD=$U2S"
		echo "export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:suppressions=$dir/asan.supp"
		echo "export IBSIM_HARNESS_DIR=$dir"
		echo "export IBSIM_HARNESS_NET=$dir/net"
		echo "export IBSIM_HARNESS_U2S=$U2S"
	} > "$dir/env"
	return 0
}

parse_opts() {
	OPT_TIMEOUT=; OPT_SMHOST=; OPT_IARGS=; OPT_OWNER=
	while [ $# -gt 0 ]; do
		case $1 in
		--timeout) OPT_TIMEOUT=$2; shift 2 ;;
		--sm-host) OPT_SMHOST=$2; shift 2 ;;
		--ibsim-args) OPT_IARGS=$2; shift 2 ;;
		--owner) OPT_OWNER=$2; shift 2 ;;
		--) break ;;
		-*) die "unknown option $1" ;;
		*) break ;;
		esac
	done
	REST=("$@")
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
start)
	parse_opts "$@"; set -- "${REST[@]}"
	[ $# -eq 2 ] || usage
	why=$(check_tools) || skip "$why"
	net=$(realpath "$1")
	why=$(
		sock_owner=${OPT_OWNER:-$PPID}
		do_start "$net" "$2" "${OPT_TIMEOUT:-600}" "$sock_owner" \
			"$OPT_SMHOST" "$OPT_IARGS"
	) || { do_stop "$2"; skip "cannot start: $why"; }
	cat "$2/env"
	;;
stop)
	[ $# -eq 1 ] || usage
	do_stop "$1"
	;;
env)
	[ $# -eq 1 ] || usage
	[ -r "$1/env" ] || die "no running harness in $1"
	cat "$1/env"
	;;
run)
	parse_opts "$@"; set -- "${REST[@]}"
	[ $# -ge 3 ] && [ "$2" = "--" ] || usage
	why=$(check_tools) || skip "$why"
	net=$(realpath "$1")
	shift 2
	secs=${OPT_TIMEOUT:-120}
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ibsim-harness.XXXXXX") || die "mktemp"
	trap 'do_stop "$dir"; wait 2>/dev/null
		[ -n "${IBSIM_HARNESS_KEEP:-}" ] || rm -rf "$dir"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# In this shell, not a subshell: the simulator stays our child and
	# is reaped when it ends.
	if ! do_start "$net" "$dir" $((secs + 10)) $$ "$OPT_SMHOST" \
		"$OPT_IARGS" > "$dir/why"; then
		echo "ibsim-harness: logs:" >&2
		tail -n 5 "$dir"/*.log "$dir"/*.out >&2 2>/dev/null
		skip "cannot start: $(cat "$dir/why")"
	fi
	orig=$PWD
	cd "$dir" || die "cd $dir"
	# shellcheck disable=SC1091
	. "$dir/env"
	export IBSIM_HARNESS_CWD=$orig
	timeout --kill-after=5 "$secs" "$@"
	rc=$?
	[ $rc -eq 124 ] && echo "ibsim-harness: watchdog: '$*' ran over ${secs}s" >&2
	exit $rc
	;;
*)
	usage
	;;
esac
