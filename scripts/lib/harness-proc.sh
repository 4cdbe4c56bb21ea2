# Process helpers of the fabric harnesses (scripts/ibsim-harness.sh,
# scripts/fabric-harness.sh): sourced, not run.

# A zombie is gone: orphans may wait a while for their reaper.
alive() {
	[ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null &&
		! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"
}

# kill_wait PID TICKS: TERM, wait up to TICKS * 50 ms, then KILL, and
# wait until it is gone.
kill_wait() {
	local pid=$1 n=$2
	alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	while alive "$pid" && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	alive "$pid" && kill -KILL "$pid" 2>/dev/null
	n=100
	while alive "$pid" && [ $n -gt 0 ]; do sleep 0.02; n=$((n - 1)); done
	return 0
}

pidof_file() { [ -r "$1" ] && cat "$1" 2>/dev/null; }

# start_watchdog DIR OWNER SECS WHAT PIDFILE...: a process that outlives
# the caller and stops the processes named in DIR/PIDFILE... (TERM, then
# KILL 2 s later) when OWNER dies or SECS pass, whichever comes first;
# its pid goes to DIR/watchdog.pid, its reason to DIR/harness.log.
start_watchdog() {
	local dir=$1 owner=$2 secs=$3 what=$4
	shift 4
	(
		trap '' HUP INT
		trap 'kill $nap 2>/dev/null; exit 0' TERM
		end=$(( $(date +%s) + secs ))
		while :; do
			sleep 0.5 & nap=$!
			wait $nap
			if ! kill -0 "$owner" 2>/dev/null; then
				why="owner $owner exited"; break
			fi
			if [ "$(date +%s)" -ge $end ]; then
				why="timeout ${secs}s"; break
			fi
		done
		echo "watchdog: $why: stopping the $what" >> "$dir/harness.log"
		for sig in TERM KILL; do
			for f in "$@"; do
				p=$(cat "$dir/$f" 2>/dev/null)
				[ -n "$p" ] && kill -$sig "$p" 2>/dev/null
			done
			[ $sig = TERM ] && sleep 2
		done
	) </dev/null >/dev/null 2>&1 &
	echo $! > "$dir/watchdog.pid"
}
