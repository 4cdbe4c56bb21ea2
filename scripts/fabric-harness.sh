#!/bin/bash
# OpenSM on the embedded fabric: `ibmcast fabric serve` speaks ibsim's
# client protocol, OpenSM runs on it through umad2sim.
#
#   fabric-harness.sh start [OPTIONS] NET DIR   bring up, leave running,
#                                               print the exports
#   fabric-harness.sh stop DIR                  tear down what start began
#   fabric-harness.sh run [OPTIONS] NET -- CMD...
#                                               bring up, run CMD, tear down
#   fabric-harness.sh env DIR                   print the exports again
#
# NET is a net file (ibnetdiscover/ibsim format) or a generator spec such
# as fat-tree:leaves=64,hosts=18,spines=18 (docs/scenarios.md).
#
# e.g.  eval "$(fabric-harness.sh start net /tmp/fab)"; cd /tmp/fab
#       SIM_HOST=Hca2 saquery -N; ...; fabric-harness.sh stop /tmp/fab
#
# Options:
#   --timeout SECS    watchdog: everything is killed after SECS
#                     (run: default 120, start: default 600)
#   --up-wait SECS    how long OpenSM may take to report SUBNET UP
#                     (default 60)
#   --sm-host NODE    the node OpenSM attaches to (SIM_HOST; default: the
#                     server's default node, the first of NET)
#   --serve-args ARGS extra `ibmcast fabric serve` arguments
#   --osm-args ARGS   extra OpenSM arguments
#   --no-sm           start the server only (no OpenSM)
#   --owner PID       start: also tear down when PID exits (default: the
#                     caller of start)
# The ibmcast binary is $IBMCAST if set, else ../build/ibmcast beside this
# script, else the one on PATH.
#
# What CMD (or a process started with the output of `env`) gets:
#   IBSIM_SOCKNAME    a private socket name (parallel ctest jobs never meet)
#   LD_PRELOAD        umad2sim, so that libibumad talks to the server
#   ASAN_OPTIONS      + verify_asan_link_order=0 and a suppression of
#                     umad2sim's own heap overflow
#   FABRIC_HARNESS_DIR, FABRIC_HARNESS_NET, FABRIC_HARNESS_U2S and
#   FABRIC_HARNESS_CWD (the directory run was called from); the server's
#   log is DIR/serve.log, OpenSM's DIR/osm.log, and stop leaves the
#   fabric's dump (ibmcast fabric serve --dump) in DIR/fabric.dump.
#   `echo "link NODE PORT down" > DIR/control` pulls a cable (--control).
# CMD runs in DIR: umad2sim writes its fake sysfs as ./sys-PID into the
# current directory of every process.
#
# Exit: run returns CMD's status, or 77 when OpenSM/umad2sim/ibmcast are
# missing or the fabric did not come up (the reason goes to stderr), 124
# when the watchdog fired. start returns 0 when OpenSM reported SUBNET UP.
set -u

U2S=${FABRIC_HARNESS_U2S:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
HERE=$(dirname "$(realpath "$0")")
SKIP=77
# shellcheck source-path=SCRIPTDIR source=lib/harness-proc.sh
. "$(dirname "$(realpath "$0")")/lib/harness-proc.sh"

die() { echo "fabric-harness: $*" >&2; exit 1; }
skip() { echo "fabric-harness: $*" >&2; exit $SKIP; }

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit 2
}

find_ibmcast() {
	# A relative path is the caller's: the server runs in the harness dir.
	if [ -n "${IBMCAST:-}" ]; then
		case $IBMCAST in */*) realpath "$IBMCAST" ;; *) command -v "$IBMCAST" ;; esac
	elif [ -x "$HERE/../build/ibmcast" ]; then realpath "$HERE/../build/ibmcast"
	else command -v ibmcast
	fi
}

check_tools() {
	[ -x "$IMC" ] || { echo "ibmcast not found (set IBMCAST)"; return 1; }
	[ -n "$NO_SM" ] || command -v opensm >/dev/null 2>&1 ||
		{ echo "opensm not installed"; return 1; }
	[ -r "$U2S" ] || { echo "umad2sim not found at $U2S (libumad2sim0)"; return 1; }
	return 0
}

do_stop() {
	local dir=$1
	[ -d "$dir" ] || return 0
	kill_wait "$(pidof_file "$dir/watchdog.pid")" 20
	kill_wait "$(pidof_file "$dir/opensm.pid")" 2
	# The server writes its dump on TERM: give it time to.
	kill_wait "$(pidof_file "$dir/serve.pid")" 200
	rm -f "$dir/watchdog.pid" "$dir/opensm.pid" "$dir/serve.pid"
	return 0
}

# do_start NET DIR TIMEOUT OWNER; prints the reason and returns 1 when
# the fabric does not come up.
do_start() {
	local net=$1 dir=$2 secs=$3 owner=$4
	local sock n sv osm t0
	mkdir -p "$dir" || { echo "cannot create $dir"; return 1; }
	dir=$(cd "$dir" && pwd)
	if [ -r "$net" ]; then
		cp "$net" "$dir/net" || return 1
		net=$dir/net
	fi
	sock="imf$$x${RANDOM}${RANDOM}"
	export IBSIM_SOCKNAME=$sock
	: > "$dir/harness.log"
	start_watchdog "$dir" "$owner" "$secs" fabric opensm.pid serve.pid

	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	( cd "$dir" && exec "$IMC" fabric serve "$net" --sock "$sock" \
		--dump "$dir/fabric.dump" --control "$dir/control" --stats \
		--verbose $OPT_SARGS ) \
		> "$dir/serve.out" 2> "$dir/serve.log" </dev/null &
	sv=$!
	echo $sv > "$dir/serve.pid"
	n=6000
	until grep -q '^export IBSIM_SOCKNAME' "$dir/serve.out" 2>/dev/null; do
		if ! alive $sv; then
			echo "server exited: $(tail -n 3 "$dir/serve.log" | tr '\n' ' ')"
			return 1
		fi
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "server did not start in 300 s"; return 1; }
		sleep 0.05
	done
	echo "server_up_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" >> "$dir/harness.log"

	if [ -z "$NO_SM" ]; then
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		( cd "$dir" && SIM_HOST=$OPT_SMHOST OSM_TMP_DIR=$dir \
			OSM_CACHE_DIR=$dir LD_PRELOAD=$U2S \
			exec opensm -d2 -f "$dir/osm.log" $OPT_OARGS ) \
			> "$dir/osm.out" 2>&1 </dev/null &
		osm=$!
		echo $osm > "$dir/opensm.pid"
		n=$((OPT_UPWAIT * 20))
		until grep -q 'SUBNET UP' "$dir/osm.log" 2>/dev/null; do
			if ! alive $osm; then
				echo "opensm exited: $(tail -n 3 "$dir/osm.out" | tr '\n' ' ')"
				return 1
			fi
			n=$((n - 1))
			[ $n -gt 0 ] || { echo "OpenSM did not report SUBNET UP in $OPT_UPWAIT s"; return 1; }
			sleep 0.05
		done
		echo "subnet_up_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" >> "$dir/harness.log"
	fi
	echo "interceptor_via_lib:libumad2sim.so" > "$dir/asan.supp"
	{
		echo "export IBSIM_SOCKNAME=$sock"
		echo "export LD_PRELOAD=$U2S"
		echo "export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:suppressions=$dir/asan.supp"
		echo "export FABRIC_HARNESS_DIR=$dir"
		echo "export FABRIC_HARNESS_NET=$net"
		echo "export FABRIC_HARNESS_U2S=$U2S"
	} > "$dir/env"
	return 0
}

parse_opts() {
	OPT_TIMEOUT=; OPT_SMHOST=; OPT_SARGS=; OPT_OARGS=; OPT_OWNER=
	OPT_UPWAIT=60; NO_SM=
	while [ $# -gt 0 ]; do
		case $1 in
		--timeout) OPT_TIMEOUT=$2; shift 2 ;;
		--up-wait) OPT_UPWAIT=$2; shift 2 ;;
		--sm-host) OPT_SMHOST=$2; shift 2 ;;
		--serve-args) OPT_SARGS=$2; shift 2 ;;
		--osm-args) OPT_OARGS=$2; shift 2 ;;
		--no-sm) NO_SM=1; shift ;;
		--owner) OPT_OWNER=$2; shift 2 ;;
		--) break ;;
		-*) die "unknown option $1" ;;
		*) break ;;
		esac
	done
	REST=("$@")
}

# A net file by its full path; a generator spec as it is.
net_arg() {
	if [ -e "$1" ]; then realpath "$1"; else echo "$1"; fi
}

IMC=$(find_ibmcast)
cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
start)
	parse_opts "$@"; set -- "${REST[@]}"
	[ $# -eq 2 ] || usage
	why=$(check_tools) || skip "$why"
	net=$(net_arg "$1")
	why=$(do_start "$net" "$2" "${OPT_TIMEOUT:-600}" "${OPT_OWNER:-$PPID}") ||
		{ do_stop "$2"; skip "cannot start: $why"; }
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
	net=$(net_arg "$1")
	shift 2
	secs=${OPT_TIMEOUT:-120}
	dir=$(mktemp -d "${TMPDIR:-/tmp}/fabric-harness.XXXXXX") || die "mktemp"
	trap 'do_stop "$dir"; wait 2>/dev/null
		[ -n "${FABRIC_HARNESS_KEEP:-}" ] || rm -rf "$dir"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if ! do_start "$net" "$dir" $((secs + 10)) $$ > "$dir/why"; then
		echo "fabric-harness: logs:" >&2
		tail -n 5 "$dir"/*.log "$dir"/*.out >&2 2>/dev/null
		skip "cannot start: $(cat "$dir/why")"
	fi
	orig=$PWD
	cd "$dir" || die "cd $dir"
	# shellcheck disable=SC1091
	. "$dir/env"
	export FABRIC_HARNESS_CWD=$orig
	timeout --kill-after=5 "$secs" "$@"
	rc=$?
	[ $rc -eq 124 ] && echo "fabric-harness: watchdog: '$*' ran over ${secs}s" >&2
	exit $rc
	;;
*)
	usage
	;;
esac
