#!/bin/sh
# ibmcastd's command line without a fabric: --help, usage errors (exit 2),
# and start-up errors that come before any port is opened (exit 1): a
# policy file that does not parse (FILE:LINE and why), a missing one, an
# unknown group.
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
d="$build/ibmcastd"
[ -x "$d" ] || { echo "no $d"; exit 1; }

"$d" --help > "$tmp/help" 2>&1
[ $? -eq 0 ] || { echo "FAIL: --help exit"; fail=1; }
has help "usage: ibmcastd [OPTIONS]"
has help "--policy FILE"

for args in "--bogus" "--sm-key -1" "--sm-key 0x1g" "--mode 999" "--port x:0" "--log-level loud" \
	    "--max-conns-per-uid 0" "--grace -1" "extra"; do
	# shellcheck disable=SC2086
	"$d" $args > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || { echo "FAIL: '$args': exit $rc, expected 2"; fail=1; }
	grep -q "(try 'ibmcastd --help')" "$tmp/err" ||
		{ echo "FAIL: '$args': no usage hint"; cat "$tmp/err"; fail=1; }
done

printf 'allow user:0\nallow * mgid ff12::/4\n' > "$tmp/bad.policy"
"$d" --runtime-dir "$tmp/run" --group 0 --policy "$tmp/bad.policy" \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: bad policy: exit $rc"; fail=1; }
has err "ibmcastd: error: policy: $tmp/bad.policy:2: prefix /4 reaches beyond ff00::/8"

"$d" --runtime-dir "$tmp/run" --group 0 --policy "$tmp/none" \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: missing policy: exit $rc"; fail=1; }
has err "ibmcastd: error: policy: $tmp/none: No such file or directory"

"$d" --runtime-dir "$tmp/run" --group no-such-group-here > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: unknown group: exit $rc"; fail=1; }
has err "ibmcastd: error: unknown group 'no-such-group-here' (--group)"
exit $fail
