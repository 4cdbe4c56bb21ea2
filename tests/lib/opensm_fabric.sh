# What the opensm_fabric_* tests share; sourced (bash) with the test's
# own arguments (build directory, source directory):
#
#   . "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
#
#   osmf_check NET [SAMPLE] brings OpenSM up on `ibmcast fabric serve NET`
#                        (scripts/fabric-harness.sh), then holds what the
#                        real tools see against the net file and against
#                        the fabric's own dump: ibnetdiscover's nodes and
#                        cables, saquery's NodeRecords and PortInfoRecords
#                        of every SAMPLE-th LID and ibroute's LFT of every
#                        SAMPLE-th switch (default every one), smpquery and
#                        perfquery answers.
#   check DESC COND      prints ok/FAIL DESC as COND holds; FAIL sets fail
# shellcheck shell=bash disable=SC2034
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
harness=$src/scripts/fabric-harness.sh
netlinks=$src/tests/lib/netlinks.awk
export IBMCAST=$build/ibmcast
fail=0

check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

osmf_tools() {
	local t
	for t in opensm ibnetdiscover saquery ibroute smpquery perfquery; do
		command -v $t >/dev/null 2>&1 ||
			{ echo "SKIP: $t not installed"; exit 77; }
	done
}

# A net file of NET (a file or a generator spec).
osmf_netfile() {
	"$IBMCAST" fabric net "$1"
}

# saquery with a longer timeout, tried three times: on the largest
# fabrics OpenSM's SA answers late while a sweep runs.
sa() {
	local out t
	for t in 1 2 3; do
		out=$(saquery -t 4000 "$@") && [ -n "$out" ] &&
			{ echo "$out"; return 0; }
		echo "saquery $* failed (try $t)" >&2
	done
	return 1
}

# saquery -N as "PORTGUID LID" lines.
nr_pairs() {
	awk '/lid\.\.\.\./ { sub(/.*\./, ""); lid = $0 + 0 }
	     /port_guid\./ { sub(/.*\./, ""); print tolower($0), lid }' |
		sed 's/0x0*/0x/' | sort -u
}

# The dump's "port GUID NODE PORT lid L state S" as "PORTGUID LID" for
# the ports that have a LID (HCA ports; a switch's port 0).
dump_pairs() {
	awk '$1 == "port" && $6 != 0 { print tolower($2), $6 }' "$1" |
		sed 's/0x0*/0x/' | sort -u
}

osmf_check() {
	local spec=$1 sample=${2:-1} secs=${3:-300} upwait=${4:-120}
	local dir net out n lid guid bad

	dir=$(mktemp -d "${TMPDIR:-/tmp}/osmf.XXXXXX") || exit 1
	OSMF_DIR=$dir
	trap '"$harness" stop "$OSMF_DIR/h"; cd /; [ -n "${FABRIC_HARNESS_KEEP:-}" ] || rm -rf "$OSMF_DIR"' EXIT
	net=$dir/expected.net
	osmf_netfile "$spec" > "$net" || { echo "FAIL fabric net $spec"; exit 1; }
	out=$("$harness" start --timeout "$secs" --up-wait "$upwait" \
		--owner $$ "$net" "$dir/h" 2> "$dir/start.err")
	rc=$?
	if [ $rc -ne 0 ]; then
		cat "$dir/start.err"
		tail -n 20 "$dir"/h/*.log "$dir"/h/*.out 2>/dev/null
		# A missing tool is a skip; a fabric that does not come up
		# is a failure.
		[ $rc -eq 77 ] && grep -q "not installed\|not found" \
			"$dir/start.err" && exit 77
		echo "FAIL OpenSM did not reach SUBNET UP on $spec"
		exit 1
	fi
	eval "$out"
	cd "$dir/h" || exit 1
	echo "ok   OpenSM reached SUBNET UP on $spec ($(grep subnet_up_s harness.log))"

	# ibnetdiscover walks the fabric with directed-route SMPs.
	ibnetdiscover > disc.txt 2> disc.err
	check "ibnetdiscover runs" '[ -s disc.txt ]'
	awk -f "$netlinks" "$net" | sort -u > want.links
	awk -f "$netlinks" disc.txt | sort -u > got.links
	check "ibnetdiscover's nodes and cables are the net file's ($(grep -c . want.links) lines)" \
		'diff want.links got.links > links.diff'
	[ -s links.diff ] && head -n 20 links.diff

	# The SA's view (OpenSM's) against the fabric's, one LID at a time:
	# umad2sim cuts every MAD to 256 bytes (no RMPP, as on ibsim), so a
	# GetTable answer holds one NodeRecord. Every SAMPLE-th LID.
	sed -n 's/.* lid \([0-9]*\) lmc .*/\1/p' disc.txt | sort -n -u |
		awk -v k="$sample" '(NR - 1) % k == 0' > lids
	: > nr.txt; : > pir.txt
	while read -r lid; do
		sa NR "$lid" >> nr.txt 2>> nr.err
		sa PIR "$lid" >> pir.txt 2>> pir.err
	done < lids
	nr_pairs < nr.txt > nr.pairs
	n=$(wc -l < lids)
	check "saquery NodeRecords for $n LIDs ($(wc -l < nr.pairs))" \
		'[ "$(wc -l < nr.pairs)" -eq "$n" ]'
	# A switch's external ports have no LID of their own (IBA 14.2.5.6).
	sed -n 's/^Switch.* base port 0 lid \([0-9]*\) .*/\1/p' disc.txt > swlids
	bad=$(awk 'FNR == NR { sw[$1] = 1; next }
		   /EndPortLid/ { sub(/.*\./, ""); e = $0 + 0 }
		   /PortNum\./ { sub(/.*\./, ""); p = $0 + 0 }
		   /^[ \t]*Lid:/ { sub(/.*\./, "")
			if ($0 + 0 != ((e in sw) && p ? 0 : e)) b++ }
		   /^[ \t]*LinkState:/ { if ($0 !~ /Active/) b++; n++ }
		   END { print (n ? b + 0 : "none") }' swlids pir.txt)
	check "saquery PortInfoRecords: LID as asked, port ACTIVE (bad: $bad)" \
		'[ "$bad" = 0 ]'

	# One LFT per SAMPLE-th switch, by the LIDs ibnetdiscover printed.
	: > route.got
	i=0
	grep '^Switch' disc.txt | sed 's/^Switch[^"]*"S-\([0-9a-f]*\)".* lid \([0-9]*\) .*/\1 \2/' |
	while read -r guid lid; do
		i=$((i + 1))
		[ $(( (i - 1) % sample )) -eq 0 ] || continue
		ibroute "$lid" 2>/dev/null |
			awk -v g="$guid" '
			function hex(s,  v, i) { v = 0; s = tolower(substr(s, 3))
				for (i = 1; i <= length(s); i++)
					v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v }
			/^0x[0-9a-fA-F]+ [0-9]+ / { printf "lft 0x%s %d %d\n", g, hex($1), $2 + 0 }' >> route.got
	done
	sed -i 's/0x0*/0x/' route.got
	check "ibroute dumped LFTs ($(wc -l < route.got) entries)" '[ -s route.got ]'

	# smpquery and perfquery against the first HCA ibnetdiscover lists.
	lid=$(awk '/^Ca/{c=1} c && /^\[1\]/{ sub(/.*# lid /, ""); print $1 + 0; exit }' disc.txt)
	guid=$(smpquery nodeinfo "$lid" 2>/dev/null | sed -n 's/^PortGuid:\.*//p')
	check "smpquery nodeinfo $lid answers (port GUID $guid)" '[ -n "$guid" ]'
	out=$(smpquery portinfo "$lid" 1 2>/dev/null | sed -n 's/^Lid:\.*//p')
	check "smpquery portinfo $lid 1 gives LID $lid ($out)" '[ "$out" = "$lid" ]'
	out=$(perfquery "$lid" 1 2>/dev/null)
	check "perfquery $lid 1 answers" 'echo "$out" | grep -q "PortXmitPkts"'

	"$harness" stop "$dir/h"
	check "the server wrote its dump" '[ -s fabric.dump ]'
	check "no sanitizer report from the server" '! grep -q Sanitizer serve.log'
	dump_pairs fabric.dump > dump.pairs
	check "saquery's NodeRecords (port GUID, LID) are the fabric's" \
		'[ -s nr.pairs ] && comm -23 nr.pairs dump.pairs | (! grep -q .)'
	sort -u route.got > route.got.s
	sed 's/0x0*/0x/' fabric.dump | grep '^lft' | sort -u > route.want
	bad=$(comm -23 route.got.s route.want | wc -l)
	check "ibroute's LFT entries are the fabric's (differ: $bad)" '[ "$bad" -eq 0 ]'
	[ "$bad" -eq 0 ] || comm -23 route.got.s route.want | head
	grep '^stats' serve.log
	return 0
}
