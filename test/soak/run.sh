#!/usr/bin/env bash
# test/soak/run.sh: resident memory over a long run. Builds signpost, the
# demo ticket API and the soak driver, starts the API and signpost in front
# of it (configs/tickets.yaml, default flags, default log level, its log to
# a file) on free loopback ports, drives it with test/soak for
# SOAK_DURATION, sampling its memory, then prints the RSS at 1, 5, 13, 30
# and 60 minutes and the slope after the warm-up.
#
#   test/soak/run.sh                                   # 10 minutes
#   SOAK_DURATION=70m test/soak/run.sh                 # the long run
#   SOAK_DURATION=2m SOAK_RATE=500 test/soak/run.sh    # a smoke run
#
# Environment:
#   SOAK_DURATION  how long to drive signpost, as Go durations read (10m)
#   SOAK_RATE      requests a second, over all connections (2000)
#   SOAK_CONNS     keep-alive connections (64)
#   SOAK_CALLERS   distinct callers, X-Session-Id values (70000)
#   SOAK_VALUES    kinds of wrong enum values the callers send (1: the same)
#   SOAK_PAD       bytes of padding added to each JSON request body (0)
#   SOAK_RELOAD    how often the rules are reloaded (10s); 0 never
#   SOAK_RELOAD_MODE  post (POST /-/reload) or hup (SIGHUP) (post)
#   SOAK_SAMPLE    how often memory is sampled (10s)
#   SOAK_WARMUP    the warm-up the slope leaves out (15m)
#   SOAK_DIR       where binaries and runs go (/tmp/soak); each run gets a
#                  directory of its own there: the CSV, signpost's log and
#                  the driver's output
#   SOAK_SIGNPOST  a signpost binary to run instead of building one
#   SOAK_SIGNPOST_ENV  extra environment for signpost, e.g. "GOGC=100"
#
# Everything listens on 127.0.0.1 and is stopped on exit. Needs Go 1.26 and
# bash; installs nothing. Exits 0 when every answer was the one expected
# (no 5xx, no connection failure), 1 otherwise, 2 when something it needs
# is missing.
set -euo pipefail

cd "$(dirname "$0")/../.."

DURATION=${SOAK_DURATION:-10m}
RATE=${SOAK_RATE:-2000}
CONNS=${SOAK_CONNS:-64}
CALLERS=${SOAK_CALLERS:-70000}
VALUES=${SOAK_VALUES:-1}
PAD=${SOAK_PAD:-0}
RELOAD=${SOAK_RELOAD:-10s}
RELOAD_MODE=${SOAK_RELOAD_MODE:-post}
SAMPLE=${SOAK_SAMPLE:-10s}
WARMUP=${SOAK_WARMUP:-15m}
DIR=${SOAK_DIR:-/tmp/soak}

command -v go >/dev/null 2>&1 || { echo "run.sh: go not found; install Go 1.26 (https://go.dev/dl/)" >&2; exit 2; }
[[ -r /proc/self/status ]] || { echo "run.sh: needs /proc (Linux) to read signpost's RSS" >&2; exit 2; }

mkdir -p "$DIR"
echo "run.sh: building into $DIR" >&2
if [[ -n ${SOAK_SIGNPOST:-} ]]; then
	SIGNPOST=$SOAK_SIGNPOST
else
	go build -o "$DIR/signpost" ./cmd/signpost
	SIGNPOST=$DIR/signpost
fi
# The demo ticket API's command: cmd/ticketapi, or test/ticketapi/cmd/ticketapi
# in older trees.
TICKETAPI=./cmd/ticketapi
[[ -d $TICKETAPI ]] || TICKETAPI=./test/ticketapi/cmd/ticketapi
go build -o "$DIR/ticketapi" "$TICKETAPI"
go build -o "$DIR/soak" ./test/soak

RUN=$DIR/run-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RUN/rules"
# The rules in a directory of their own: signpost watches the directory of
# its rule file, and the log is written beside it.
cp configs/tickets.yaml "$RUN/rules/tickets.yaml"

read -r UP_PORT SP_PORT AD_PORT < <("$DIR/soak" freeports 3 | paste -sd' ')

PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$DIR/ticketapi" --listen "127.0.0.1:$UP_PORT" >"$RUN/ticketapi.log" 2>&1 &
PIDS+=($!)
# shellcheck disable=SC2086 # SOAK_SIGNPOST_ENV is a list of NAME=value words
env ${SOAK_SIGNPOST_ENV:-} "$SIGNPOST" serve --config "$RUN/rules/tickets.yaml" \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$SP_PORT" --admin "127.0.0.1:$AD_PORT" \
	>"$RUN/signpost.log" 2>"$RUN/signpost.stderr" &
SP_PID=$!
PIDS+=("$SP_PID")

for _ in $(seq 100); do
	if "$SIGNPOST" healthcheck --admin "127.0.0.1:$AD_PORT" --ready >/dev/null 2>&1; then
		break
	fi
	sleep 0.1
done
"$SIGNPOST" healthcheck --admin "127.0.0.1:$AD_PORT" --ready >/dev/null || {
	echo "run.sh: signpost did not become ready; see $RUN/signpost.stderr and $RUN/signpost.log" >&2
	exit 1
}

{
	echo "signpost: $("$SIGNPOST" version 2>/dev/null | head -1) pid $SP_PID, 127.0.0.1:$SP_PORT, admin 127.0.0.1:$AD_PORT, env: ${SOAK_SIGNPOST_ENV:-none}"
	echo "ticketapi: 127.0.0.1:$UP_PORT"
	echo "duration $DURATION, rate $RATE/s, $CONNS connections, $CALLERS callers, $VALUES kinds of wrong value, bodies padded by $PAD B, reload every $RELOAD ($RELOAD_MODE), sample every $SAMPLE"
} | tee "$RUN/about.txt" >&2

status=0
# The driver stops itself after DURATION; timeout is the bound if it hangs.
secs=$("$DIR/soak" seconds "$DURATION")
timeout --signal=TERM "$((secs + 120))" "$DIR/soak" run \
	--target "http://127.0.0.1:$SP_PORT" --admin "http://127.0.0.1:$AD_PORT" --pid "$SP_PID" \
	--duration "$DURATION" --rate "$RATE" --conns "$CONNS" --callers "$CALLERS" --values "$VALUES" --pad "$PAD" \
	--reload "$RELOAD" --reload-mode "$RELOAD_MODE" --sample "$SAMPLE" --csv "$RUN/soak.csv" \
	2> >(tee "$RUN/soak.out" >&2) || status=$?

echo >&2
"$DIR/soak" summary --csv "$RUN/soak.csv" --warmup "$WARMUP" | tee "$RUN/summary.md"
echo
echo "run.sh: the samples, signpost's log and the driver's output are in $RUN"
exit "$status"
