# The statements of docs/conformance.md against the suite; sourced by
# tests/conformance_sa.sh (bash).
#
# Every table row of the document carries at least one marker, an HTML
# comment that renders as nothing (markers count in table rows only):
#   <!-- run: CASE osm=S,S,... imc=S,S,... [SIDE.N:FIELD=VALUE ...] -->
#       the case of tests/conformance/cases.txt whose answers the row
#       states: S is the status of each request in turn (4 hex digits,
#       or "none": no answer, `sa-serve compare` tells silence from a
#       slow SA by a probe); SIDE.N:FIELD=VALUE is a field of the answer to
#       request N (osm: OpenSM, imc: ibmcast), as `sa-serve compare`
#       prints it for a request whose answers differ;
#   <!-- unit: FILE FUNCTION -->
#       a behaviour the ibsim fabric cannot show (timing, RMPP, traps,
#       malformed MADs), asserted by FUNCTION of tests/FILE or fuzz/FILE.
# doc_static checks the markers against the files; doc_observed checks
# the run markers against the output of one `sa-serve compare` run.
# doc, cases and src are the sourcing script's.
# shellcheck shell=bash disable=SC2154

doc_markers() { # doc_markers KIND: the bodies of the KIND markers
	grep '^| ' "$doc" | grep -o "<!-- $1: [^>]* -->" | sed "s/^<!-- $1: //; s/ -->\$//"
}

doc_static() {
	local bad=0 name file fn row
	# Rows without a marker: a statement nothing checks.
	while IFS= read -r row; do
		echo "FAIL docs/conformance.md row without a run or unit marker: ${row:0:100}"
		bad=1
	done < <(grep '^| ' "$doc" | grep -v '^| \(Behaviour\|ID\) |' |
		grep -v -e '<!-- run: ' -e '<!-- unit: ')
	while read -r name _; do
		grep -q "^case $name\$" "$cases" || {
			echo "FAIL docs/conformance.md names case $name, which cases.txt lacks"
			bad=1
		}
	done < <(doc_markers run)
	while read -r name; do
		doc_markers run | grep -q "^$name " || {
			echo "FAIL case $name backs no statement of docs/conformance.md"
			bad=1
		}
	done < <(sed -n 's/^case //p' "$cases")
	while read -r file fn; do
		if [ -f "$src/tests/$file" ]; then file=$src/tests/$file
		elif [ -f "$src/fuzz/$file" ]; then file=$src/fuzz/$file
		else echo "FAIL unit marker names $file, which is not in tests/ or fuzz/"; bad=1; continue
		fi
		grep -q "^[a-z].*[ *]$fn(" "$file" || {
			echo "FAIL unit marker: no function $fn in $file"
			bad=1
		}
	done < <(doc_markers unit)
	[ $bad -eq 0 ] && echo "ok   every row of docs/conformance.md names its case or unit test ($(doc_markers run | wc -l) run, $(doc_markers unit | wc -l) unit markers)"
	return $bad
}

# doc_observed OUT: each run marker against the compare output OUT.
doc_observed() {
	doc_markers run | awk -v out="$1" '
	BEGIN {
		while ((getline line < out) > 0) {
			if (line ~ /^[a-z0-9_]+ +\| /) {
				n = split(line, f, "|")
				c = f[1]; gsub(/ /, "", c)
				o = f[2]; gsub(/ /, "", o); st["osm", c] = o
				i = f[3]; gsub(/ /, "", i); st["imc", c] = i
				seen[c] = 1; side = ""
			} else if (line ~ /^      request [0-9]+:/) {
				req = line; sub(/^      request /, "", req)
				sub(/:.*/, "", req)
			} else if (line ~ /^      OpenSM  /) {
				side = "osm"; det[side, c, req] = " " substr(line, 15) " "
			} else if (line ~ /^      ibmcast /) {
				side = "imc"; det[side, c, req] = " " substr(line, 15) " "
			} else if (line ~ /^    [a-z]/ && side != "") {
				det[side, c, req] = det[side, c, req] " " substr(line, 5) " "
			}
		}
		bad = 0
	}
	{
		c = $1
		if (!(c in seen)) {
			printf "FAIL doc: case %s did not run\n", c; bad = 1; next
		}
		for (k = 2; k <= NF; k++) {
			if ($k ~ /^(osm|imc)=/) {
				s = substr($k, 1, 3); want = substr($k, 5)
				if (st[s, c] != want) {
					printf "FAIL doc: %s %s answered %s, docs/conformance.md says %s\n", c, s == "osm" ? "OpenSM" : "ibmcast", st[s, c], want
					bad = 1
				}
			} else if ($k ~ /^(osm|imc)\.[0-9]+:[a-z0-9_]+=/) {
				s = substr($k, 1, 3); r = substr($k, 5)
				sub(/:.*/, "", r); fv = $k; sub(/^[^:]*:/, "", fv)
				if (index(det[s, c, r], " " fv " ") == 0) {
					printf "FAIL doc: %s request %s: %s answer lacks %s (got:%s)\n", c, r, s == "osm" ? "OpenSM" : "ibmcast", fv, det[s, c, r]
					bad = 1
				}
			} else {
				printf "FAIL doc: bad run marker item %s of %s\n", $k, c; bad = 1
			}
		}
		checked++
	}
	END {
		if (!bad)
			printf "ok   %u statements of docs/conformance.md hold on this run\n", checked
		exit bad
	}'
}
