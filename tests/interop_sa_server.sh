#!/bin/bash
# Interop on ibsim: the SA server mode of the libibumad transport. A
# process started with SIM_SET_ISSM=1 on Hca3 (`ibmcast sa serve-echo`)
# registers its agents, then sets IsSM (through the issm device, so that
# OpenSM's immediate SMInfo probe finds the agents in place), receives the
# SA requests addressed to its LID and answers them with a fixed status,
# while OpenSM keeps answering those sent to the SM's LID.
# Arguments: build directory, source directory.
# Variables set below are read by the conditions that check() evaluates.
# shellcheck disable=SC2034
set -u
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
harness=$src/scripts/ibsim-harness.sh
ibmcast=$build/ibmcast

if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	[ -x "$ibmcast" ] || { echo "no $ibmcast"; exit 1; }
	net=$(mktemp) || exit 1
	trap 'rm -f "$net"' EXIT
	cat > "$net" <<-'EOF'
	Hca	1 "Hca1"
	[1]	"Switch1"[1]

	Switch	8 "Switch1"
	[1]	"Hca1"[1]
	[2]	"Hca2"[1]
	[3]	"Hca3"[1]

	Hca	1 "Hca2"
	[1]	"Switch1"[2]

	Hca	1 "Hca3"
	[1]	"Switch1"[3]
	EOF
	"$harness" run --timeout 60 "$net" -- bash "$(realpath "$0")" "$build" "$src"
	exit $?
fi

fail=0
check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

out=$IBSIM_HARNESS_DIR/echo.out
SIM_HOST=Hca3 SIM_SET_ISSM=1 "$ibmcast" sa serve-echo --status 0x0300 \
	--count 3 --duration 30 > "$out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 200); do
	grep -q '^ready' "$out" && break
	kill -0 $server 2>/dev/null || break
	sleep 0.05
done
cat "$out"
lid=$(sed -n 's/^ready lid \([0-9]*\) .*/\1/p' "$out")
check "server is up with a LID" '[ -n "$lid" ] && [ "$lid" -gt 0 ]'
sm=$(sed -n 's/^ready lid [0-9]* sm_lid \([0-9]*\)$/\1/p' "$out")
check "the SM is elsewhere (LID $sm)" '[ -n "$sm" ] && [ "$sm" != "$lid" ]'

# A Get to the server's LID: the fixed status, the request's record.
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --dlid "$lid" --method get \
	--record mgid=ff12:1234::7,join_state=1)
rc=$?
echo "$a"
check "answered (exit 0)" '[ $rc -eq 0 ]'
check "status NO_RECORDS from the server" \
	'echo "$a" | grep -q "^status 0x0300 NO_RECORDS$"'
check "GetResp" 'echo "$a" | grep -q "^method 0x81 GetResp$"'
check "the record echoed" \
	'echo "$a" | grep -q "^record mgid=ff12:1234::7 .* join_state=0x1 "'
# A Delete and a GetTable get their own response methods.
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --dlid "$lid" --method delete \
	--record mgid=ff12:1234::7,port_gid=self,join_state=1 --json)
echo "$a"
check "DeleteResp, status 0x0300 (JSON)" \
	'echo "$a" | grep -q "\"status\":768,.*\"method\":149,"'
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --dlid "$lid" --method gettable)
check "GetTableResp" 'echo "$a" | grep -q "^method 0x92 GetTableResp$"'

# OpenSM still answers at the SM's LID, with its own status.
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --method get \
	--record mgid=ff12:a01b::1234)
check "OpenSM still answers its own LID (NO_RECORDS from OpenSM)" \
	'echo "$a" | grep -q "^status 0x0300 NO_RECORDS$"'
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --method get --attr cpi)
check "OpenSM's ClassPortInfo" 'echo "$a" | grep -q "^status 0x0000 SUCCESS$"'

wait $server
rc=$?
trap - EXIT
cat "$out"
check "server served 3 and exited 0" '[ $rc -eq 0 ] && grep -q "^served 3$" "$out"'
check "server saw the requests from Hca2 at QP1" \
	'[ "$(grep -c "from lid [0-9]* qp 1$" "$out")" = 3 ]'
check "server saw Get, Delete and GetTable" \
	'grep -q "method 0x01 " "$out" && grep -q "method 0x15 " "$out" &&
	 grep -q "method 0x12 " "$out"'
exit $fail
