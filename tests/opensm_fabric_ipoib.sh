#!/bin/bash
# IPoIB through OpenSM on the embedded fabric: 64 hosts of a 1,152-HCA
# fat tree (`fabric serve --ipoib 64`) join the broadcast group and
# 239.1.1.1's group through OpenSM's SA (the fabric's own SA steps
# aside); every host pings every other (4,032 pairs, all answered), and a
# UDP datagram to 239.1.1.1 reaches each of the 63 other members exactly
# once along the multicast trees OpenSM programmed. Arguments: build dir,
# source dir.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools

if [ -z "${FABRIC_HARNESS_DIR:-}" ]; then
	exec "$harness" run --timeout 250 --up-wait 200 --serve-args "--ipoib 64" \
		fat-tree:leaves=64,hosts=18,spines=18 -- \
		bash "$(realpath "$0")" "$build" "$src"
fi
log=$FABRIC_HARNESS_DIR/serve.log
for _ in $(seq 2400); do grep -q '^ipoib mcast' "$log" && break; sleep 0.1; done
grep '^ipoib' "$log"
check "64 IPoIB interfaces up through OpenSM's SA" 'grep -q "^ipoib up 64 " "$log"'
check "every pair pings (4,032 answered)" \
	'grep -q "^ipoib pings 4032 answered 4032 " "$log"'
check "the multicast datagram reaches each of the 63 others once" \
	'grep -q "^ipoib mcast receivers 63 of 63 duplicates 0$" "$log"'
check "no sanitizer report from the server so far" '! grep -q Sanitizer "$log"'
exit $fail
