# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the command-line test scripts. The caller sets $work (a scratch
# directory) and the counters fails=0 passed=0.

# expect STATUS PATTERN -- COMMAND...: the exit status and a line of the output.
expect() {
	local want=$1 pattern=$2 got
	shift 3
	"$@" > "$work/out" 2>&1
	got=$?
	if [[ $got -ne $want ]] || ! grep -qE -- "$pattern" "$work/out"; then
		echo "FAIL: $* -> exit $got (want $want), output:"
		sed 's/^/    /' "$work/out" | head -8
		echo "    (wanted a line matching: $pattern)"
		fails=$((fails + 1))
	else
		passed=$((passed + 1))
	fi
}
