#!/usr/bin/env bash
# test/reliability/run.sh: the reliability suite at full size, then every
# fuzz target, summed up in one markdown table of figures.
#
#   test/reliability/run.sh                                           # full-size cases, 1 minute per fuzz target
#   RELIABILITY_LONG=0 RELIABILITY_FUZZTIME=10s test/reliability/run.sh  # a short pass
#   RELIABILITY_FUZZTIME=5m test/reliability/run.sh                   # a full pass
#   RELIABILITY_RACE=1 test/reliability/run.sh                        # first the short suite under -race
#
# Environment:
#   RELIABILITY_FUZZTIME  how long each fuzz target runs, as go test -fuzztime takes it (1m)
#   RELIABILITY_LONG      set to 0: run the cases at the size go test ./... runs them (1)
#   RELIABILITY_TIMEOUT   the bound on the suite, as go test -timeout takes it (30m)
#   RELIABILITY_RACE      set to 1: run the short suite under -race first, and add its figures
#   RELIABILITY_RUN       which tests of ./test make up the suite, a go test -run regexp (Reliability)
#
# What it runs, one after another:
#   1. (RELIABILITY_RACE=1) go test -race -count=1 -run Reliability -v ./test/
#   2. go test -count=1 -run Reliability -v ./test/ -args -reliability.long
#      (without -args -reliability.long when RELIABILITY_LONG=0)
#   3. each fuzz target that go test -list '^Fuzz' ./... finds, alone, for RELIABILITY_FUZZTIME
# Every case runs against 127.0.0.1 only. Each step is bounded: the test runs
# by -timeout, each fuzz target by -fuzztime and a -timeout five minutes past it.
# Step 3 takes the number of targets times RELIABILITY_FUZZTIME, plus a few
# seconds each to build and to gather the corpus's coverage.
#
# Needs Go 1.26, bash and the usual POSIX tools (awk, grep, sort, paste,
# mktemp); installs nothing. The table goes to standard output, progress to
# standard error, and every log to a directory it names at the end. Exits 0
# when every bar is met and no fuzz target crashed; 1 otherwise; 2 when
# something it needs is missing. A fuzz target's crasher is left where go
# test writes it, <package>/testdata/fuzz/<Target>/, so that go test replays
# it from then on. A target that fails with a bare "context deadline
# exceeded" and no failing input, a race in Go 1.26's fuzzing itself
# (go.dev/issue/75804), is run once more, and its row says so.
set -uo pipefail

cd "$(dirname "$0")/../.."

FUZZTIME=${RELIABILITY_FUZZTIME:-1m}
LONG=${RELIABILITY_LONG:-1}
TIMEOUT=${RELIABILITY_TIMEOUT:-30m}
RACE=${RELIABILITY_RACE:-}
RUN=${RELIABILITY_RUN:-Reliability}

if [[ $LONG != 0 && $LONG != 1 ]]; then
	echo "run.sh: RELIABILITY_LONG is \"$LONG\"; it must be 1 (the cases at full size, the default) or 0 (at the size go test ./... runs)" >&2
	exit 2
fi

for c in go awk grep sort paste mktemp; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "run.sh: $c not found; it needs Go 1.26 (https://go.dev/dl/) and awk, grep, sort, paste and mktemp" >&2
		exit 2
	fi
done

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/signpost-reliability.XXXXXX")
ROWS=$LOGS/rows.tsv # case, figure, value, bar, met: one row a line
: >"$ROWS"
failed=0

say() { echo "run.sh: $*" >&2; }

# row adds one line to the table; its fields must hold no tab.
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$ROWS"; }

# seconds turns a Go duration of hours, minutes and seconds (1h, 5m, 90s,
# 1m30s) into whole seconds; it prints nothing for other forms (1000x).
seconds() {
	local d=$1 total=0 n unit
	[[ $d =~ ^([0-9]+[hms])+$ ]] || return 0
	while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $unit in
		h) total=$((total + n * 3600)) ;;
		m) total=$((total + n * 60)) ;;
		s) total=$((total + n)) ;;
		esac
	done
	echo "$total"
}

# suite runs the reliability tests of ./test with the arguments given and
# adds their FIGURE lines to the table, each case named with suffix.
suite() {
	local log=$1 suffix=$2
	shift 2
	say "go test $* (log: $log)"
	go test "$@" >"$log" 2>&1
	local status=$?
	# A FIGURE line, as t.Logf prints it: "    file_test.go:12: FIGURE<TAB>case<TAB>figure<TAB>value<TAB>bar<TAB>met".
	local figures
	figures=$(awk -F'\t' -v suffix="$suffix" '
		{ i = index($0, "FIGURE\t"); if (i == 0) next
		  n = split(substr($0, i), f, "\t"); if (n < 6) next
		  printf "%s%s\t%s\t%s\t%s\t%s\n", f[2], suffix, f[3], f[4], f[5], f[6] }' "$log")
	if [[ -n $figures ]]; then
		# Grouped by case, in the order of their numbers, each case's
		# figures in the order it logged them.
		printf '%s\n' "$figures" | sort -s -t$'\t' -k1,1V >>"$ROWS"
	else
		failed=1
		row "go test$suffix" "figures reported" "none: no test matched -run $RUN, or none got that far" "at least one" "NOT MET"
	fi
	if ((status != 0)); then
		failed=1
		# Name the tests that failed, which a figure may not cover.
		local names
		names=$(grep -E '^\s*--- FAIL: ' "$log" | awk '{print $3}' | sort -u | paste -sd' ' -)
		if grep -q '^panic: test timed out' "$log"; then
			names="timed out${names:+; failed: $names}"
		fi
		row "go test$suffix" "tests that failed" "${names:-exit status $status}" "none" "NOT MET"
		say "go test $* failed (exit status $status); see $log"
	fi
}

if [[ $RACE == 1 ]]; then
	suite "$LOGS/race-short.log" " (short, -race)" -race -count=1 -timeout 20m -run "$RUN" -v ./test/
fi
if [[ $LONG == 1 ]]; then
	suite "$LOGS/long.log" "" -count=1 -timeout "$TIMEOUT" -run "$RUN" -v ./test/ -args -reliability.long
else
	suite "$LOGS/short.log" " (short)" -count=1 -timeout "$TIMEOUT" -run "$RUN" -v ./test/
fi

# --- fuzz targets --------------------------------------------------------------
# go test -list prints a package's matching names, then "ok <TAB>package".
say "listing the fuzz targets"
if ! go test -list '^Fuzz' ./... >"$LOGS/fuzz-list.log" 2>&1; then
	failed=1
	row "fuzz" "targets listed" "go test -list failed: see $LOGS/fuzz-list.log" "listed" "NOT MET"
fi
mapfile -t TARGETS < <(awk '
	/^Fuzz[A-Za-z0-9_]*$/ { names[++n] = $1; next }
	/^ok[ \t]/ { for (i = 1; i <= n; i++) print $2 " " names[i]; n = 0; next }
	{ n = 0 }' "$LOGS/fuzz-list.log")

fuzztimeout=30m
if s=$(seconds "$FUZZTIME") && [[ -n $s ]]; then
	fuzztimeout=$((s + 300))s
fi
# spurious reports whether a fuzz log failed only by Go's own coordinator
# race at the end of -fuzztime (go.dev/issue/75804, fixed in Go 1.27): a
# bare "context deadline exceeded" with no failing input written.
spurious() {
	grep -qx '    context deadline exceeded' "$1" && ! grep -q 'Failing input written to' "$1"
}

for t in "${TARGETS[@]}"; do
	pkg=${t% *} name=${t#* }
	short=${pkg#github.com/signpost-proxy/signpost/}
	log=$LOGS/fuzz-${short//\//-}-$name.log
	note=""
	for try in 1 2; do
		say "fuzzing $short $name for $FUZZTIME (log: $log)"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -timeout "$fuzztimeout" "$pkg" >"$log" 2>&1
		status=$?
		if ((status != 0)) && spurious "$log"; then
			if ((try == 1)); then
				note="; run twice, the first ending in Go's spurious context deadline exceeded (go.dev/issue/75804)"
				mv "$log" "${log%.log}.spurious.log"
				say "$name: context deadline exceeded with no failing input, Go's own race; running it again"
				continue
			fi
			note="; both runs ended in Go's spurious context deadline exceeded (go.dev/issue/75804), with no failing input"
			status=0
		fi
		break
	done
	# The last progress line says how many inputs were tried, e.g.
	# "fuzz: elapsed: 5m0s, execs: 1234567 (4115/sec), new interesting: 3 (total: 40)".
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -n1 | awk '{print $2}')
	if ((status == 0)); then
		row "fuzz $short" "$name: crashers in $FUZZTIME" "none (${execs:-?} execs$note)" "none" "met"
	else
		failed=1
		input=$(grep -oE 'testdata/fuzz/[^ ]+' "$log" | head -n1)
		what="crash"
		grep -q '^panic: test timed out' "$log" && what="timed out"
		row "fuzz $short" "$name: crashers in $FUZZTIME" "$what${input:+: $short/$input}${execs:+ after $execs execs}" "none" "NOT MET"
		say "$name in $short: $what; see $log"
	fi
done

# --- the table -----------------------------------------------------------------
echo
echo "| case | figure | value | bar | met |"
echo "|---|---|---|---|---|"
awk -F'\t' '{ for (i = 1; i <= 5; i++) gsub(/\|/, "\\|", $i)
	printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$ROWS"
echo

if grep -q $'\tNOT MET$' "$ROWS"; then
	failed=1
fi
if ((failed)); then
	say "some bars were not met; the logs are in $LOGS"
	exit 1
fi
say "every bar met; the logs are in $LOGS"
