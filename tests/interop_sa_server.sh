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
. "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"
ibsim_rerun 60 3

out=$IBSIM_HARNESS_DIR/echo.out
SIM_HOST=Hca3 SIM_SET_ISSM=1 "$ibmcast" sa serve-echo --status 0x0300 \
	--count 3 --duration 30 > "$out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
wait_ready "$out" $server
cat "$out"
lid=$(ready_lid "$out")
check "server is up with a LID" '[ -n "$lid" ] && [ "$lid" -gt 0 ]'
sm=$(sed -n 's/^ready lid [0-9]* sm_lid \([0-9]*\)$/\1/p' "$out")
check "the SM is elsewhere (LID $sm)" '[ -n "$sm" ] && [ "$sm" != "$lid" ]'

# The server serves 3 requests and exits: a resend (an answer later than
# the client's default 200 ms, as on a loaded machine) would count
# twice, so the requests to it wait up to 5 s.
# A Get to the server's LID: the fixed status, the request's record.
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --timeout 5000 --dlid "$lid" --method get \
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
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --timeout 5000 --dlid "$lid" --method delete \
	--record mgid=ff12:1234::7,port_gid=self,join_state=1 --json)
echo "$a"
check "DeleteResp, status 0x0300 (JSON)" \
	'echo "$a" | grep -q "\"status\":768,.*\"method\":149,"'
a=$(SIM_HOST=Hca2 "$ibmcast" sa send --timeout 5000 --dlid "$lid" --method gettable)
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
