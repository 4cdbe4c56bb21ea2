#!/bin/sh
# ibmcast(1): the build writes it from the commands' help texts; it renders
# without a groff warning, and it has a section for every command
# `ibmcast --help` lists, holding that command's usage line.
set -u
build=$1
ib="$build/ibmcast"
page="$build/ibmcast.1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
[ -s "$page" ] || { echo "FAIL: no $page"; exit 1; }
"$ib" --man >"$tmp/page" || { echo "FAIL: ibmcast --man"; fail=1; }
cmp -s "$page" "$tmp/page" || { echo "FAIL: $page is stale"; fail=1; }
if command -v groff >/dev/null 2>&1; then
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>"$tmp/warn"
	[ -s "$tmp/warn" ] && { echo "FAIL: groff warns:"; cat "$tmp/warn"; fail=1; }
else
	echo "note: groff not installed; the rendering check is skipped"
fi
cmds=$("$ib" --help | awk '/^Commands:/{c=1; next} c && /^  [a-z]/{print $1} c && /^$/{c=0}')
[ -n "$cmds" ] || { echo "FAIL: no command listed"; fail=1; }
for c in $cmds; do
	grep -qx ".SS $c" "$page" || { echo "FAIL: no section for $c"; fail=1; }
	# The first line of the command's help, as the page spells it.
	first=$("$ib" "$c" --help 2>&1 | head -n 1 | sed 's/-/\\-/g')
	grep -qF -- "$first" "$page" || { echo "FAIL: $c usage line missing: $first"; fail=1; }
done
echo "commands in the page: $(echo $cmds | wc -w)"
exit $fail
