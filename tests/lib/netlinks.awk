# The cables of a net file (ibsim's format, `ibmcast fabric net` output or
# ibnetdiscover's topology output) as "GUID:PORT GUID:PORT" lines, node
# GUIDs in lower-case hex without leading zeros, the smaller end first;
# and "node GUID TYPE NPORTS" lines. Sort the output to compare two files.
# Node GUIDs come from the caguid=/switchguid= line before a node, else
# ibsim's default numbering (HCAs from 0x100000, nports + 1 each;
# switches from 0x200000).
function norm(g) {
	g = tolower(g); sub(/^0x/, "", g); sub(/\(.*/, "", g)
	sub(/^0+/, "", g); return g == "" ? "0" : g
}
function quoted(s,    a) { return split(s, a, "\"") >= 2 ? a[2] : "" }
BEGIN { hca = 1048576; sw = 2097152 }
/^(caguid|switchguid)=/ { split($0, a, "="); next_guid = norm(a[2]); next }
/^(Switch|Hca|Ca)[ \t]/ {
	cur = quoted($0); n = $2 + 0
	if (next_guid != "") g = next_guid
	else if ($1 == "Switch") g = sprintf("%x", sw++)
	else { g = sprintf("%x", hca); hca += n + 1 }
	guid[cur] = g; next_guid = ""
	nodes[++nn] = "node " g " " ($1 == "Switch" ? "switch" : "ca") " " n
	next
}
/^\[/ && cur != "" {
	p = substr($0, 2) + 0
	rest = $0; sub(/^[^"]*"/, "", rest)
	peer = rest; sub(/".*/, "", peer)
	sub(/^[^"]*"\[/, "", rest); q = rest + 0
	nl++; la[nl] = cur; lp[nl] = p; lb[nl] = peer; lq[nl] = q
}
END {
	for (i = 1; i <= nn; i++) print nodes[i]
	for (i = 1; i <= nl; i++) {
		x = guid[la[i]] ":" lp[i]; y = guid[lb[i]] ":" lq[i]
		print (x < y ? x " " y : y " " x)
	}
}
