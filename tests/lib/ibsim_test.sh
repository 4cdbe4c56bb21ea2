# What the tests that run on OpenSM and ibsim share; sourced (bash) with
# the test's own arguments:
#
#   . "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"
#
# Sets build, src, harness and ibmcast from BUILD and SRC, and defines:
#   ibsim_net N FILE     a net file of Hca1..HcaN (N <= 8) on one
#                        switch; Hca1 comes first: OpenSM attaches there
#   ibsim_rerun SECS N   outside the harness: writes that fabric and runs
#                        this script again inside `ibsim-harness.sh run`
#                        with a watchdog of SECS, then exits with its
#                        status; inside the harness: returns at once
#   check DESC COND      prints ok/FAIL DESC as COND holds; FAIL sets fail
#   wait_ready FILE PID  waits (at most 20 s) for a line "ready ..." in
#                        FILE while PID runs
#   ready_lid FILE       the LID of that line ("ready lid L ...")
# shellcheck shell=bash
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
harness=$src/scripts/ibsim-harness.sh
ibmcast=$build/ibmcast
fail=0

ibsim_net() {
	local n=$1 f=$2 i
	# The first node of the file is ibsim's default attach point: Hca1.
	{
		printf 'Hca\t1 "Hca1"\n[1]\t"Switch1"[1]\n\n'
		printf 'Switch\t8 "Switch1"\n'
		for i in $(seq "$n"); do
			printf '[%d]\t"Hca%d"[1]\n' "$i" "$i"
		done
		for i in $(seq 2 "$n"); do
			printf '\nHca\t1 "Hca%d"\n[1]\t"Switch1"[%d]\n' "$i" "$i"
		done
	} > "$f"
}

ibsim_rerun() {
	local secs=$1 n=$2 net rc
	[ -z "${IBSIM_HARNESS_DIR:-}" ] || return 0
	[ -x "$ibmcast" ] || { echo "no $ibmcast"; exit 1; }
	net=$(mktemp) || exit 1
	ibsim_net "$n" "$net"
	"$harness" run --timeout "$secs" "$net" -- bash "$(realpath "$0")" \
		"$build" "$src"
	rc=$?
	rm -f "$net"
	exit $rc
}

check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

wait_ready() {
	local f=$1 pid=$2
	for _ in $(seq 400); do
		grep -q '^ready' "$f" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

ready_lid() {
	sed -n 's/^ready lid \([0-9]*\) .*/\1/p' "$1"
}
