#!/usr/bin/env bash
# test/bench/run.sh: signpost against nginx, HAProxy and a plain Go
# httputil.ReverseProxy, end to end over loopback, with wrk; and, on the
# rewritten 400, against two peers that rewrite it too: nginx with Lua
# (test/bench/nginxlua) and a Go httputil.ReverseProxy with ModifyResponse
# (test/bench/rewriteproxy).
#
#   test/bench/run.sh                  # 3 rounds of 5 s per target and path (~15 minutes)
#   BENCH_QUICK=1 test/bench/run.sh    # 1 round of 2 s, a smoke run (~4 minutes)
#   BENCH_PAIRS_ONLY=1 test/bench/run.sh   # the alternations and their bars only (~5 minutes)
#
# Environment: BENCH_ROUNDS (3), BENCH_DURATION (5s), BENCH_WARMUP (2s),
# BENCH_CONNECTIONS (64), BENCH_THREADS (2), BENCH_ALTERNATIONS (5: the
# alternations of one second per target a round, see pair below),
# BENCH_QUICK (unset), BENCH_PAIRS_ONLY (unset: when set, no table of
# paths, no memory, no MCP; the bars those give read "not measured").
#
# Needs wrk, nginx and Go; HAProxy is optional (its rows are skipped if it is
# missing), and so are Debian's libnginx-mod-http-lua and lua-cjson (the
# nginx + Lua peer's rows and bar say SKIP). Installs nothing. Before anything
# is timed, each peer's body for the wrong call is checked against signpost's,
# member by member (test/bench/samebody); the run stops if they differ.
# Everything listens on 127.0.0.1 ports 18101-18118
# and is stopped on exit. Besides the table of paths, it measures signpost
# serving a generated file of 1,000 routes with 10 error rules each (the
# "signpost-1k" rows), resident memory at 256 connections and while 1 MiB
# bodies stream, and checks each figure against the project's bars. Servers are pinned to CPU 0 and wrk to CPU 1 when
# there are two CPUs and taskset exists. Last, tool calls through signpost mcp
# over streamable HTTP, with test/bench/mcpload in wrk's place.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD

ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-5s}
WARMUP=${BENCH_WARMUP:-2s}
CONNS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
ALTERNATIONS=${BENCH_ALTERNATIONS:-5}
PAIRS_ONLY=${BENCH_PAIRS_ONLY:+1}
if [[ -n ${BENCH_QUICK:-} ]]; then
	ROUNDS=1 DURATION=2s WARMUP=1s
fi
if ! [[ $ALTERNATIONS =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: BENCH_ALTERNATIONS=$ALTERNATIONS: want a whole number of at least 1" >&2
	exit 2
fi

UP_PORT=18101 SP_PORT=18102 SP_ADMIN=18103 PLAIN_PORT=18104 NGINX_PORT=18105 HAP_PORT=18106
BIG_PORT=18107 BIG_ADMIN=18108 PIPE_PORT=18111 PIPE_ADMIN=18112 OBS_PORT=18113 OBS_ADMIN=18114
QUIET_PORT=18115 QUIET_ADMIN=18116
NGLUA_PORT=18117 GOREWRITE_PORT=18118
MCP_PORT=18109 MCP_ADMIN=18110

# --- prerequisites -----------------------------------------------------------
missing=()
for c in wrk nginx; do
	command -v "$c" >/dev/null 2>&1 || [[ -x /usr/sbin/$c ]] || missing+=("$c")
done
command -v go >/dev/null 2>&1 || { echo "run.sh: go not found; install Go 1.26 (https://go.dev/dl/)" >&2; exit 2; }
if ((${#missing[@]})); then
	echo "run.sh: missing ${missing[*]}; install them with:" >&2
	echo "  apt-get install -y wrk nginx haproxy" >&2
	exit 2
fi
PATH=$PATH:/usr/sbin
HAVE_HAPROXY=1
command -v haproxy >/dev/null 2>&1 || HAVE_HAPROXY=0
command -v curl >/dev/null 2>&1 || { echo "run.sh: curl not found (used for the sanity checks): apt-get install -y curl" >&2; exit 2; }
# The nginx + Lua peer: Debian's modules, loaded by absolute path.
NGX_MODULES=/usr/lib/nginx/modules
NGLUA_APT="apt-get install -y libnginx-mod-http-lua lua-cjson"
HAVE_NGLUA=1 NGLUA_WHY=""
if [[ ! -f $NGX_MODULES/ngx_http_lua_module.so || ! -f $NGX_MODULES/ndk_http_module.so ]]; then
	HAVE_NGLUA=0 NGLUA_WHY="libnginx-mod-http-lua missing"
elif ! compgen -G '/usr/lib/*/lua/5.1/cjson.so' >/dev/null && ! compgen -G '/usr/local/lib/lua/5.1/cjson.so' >/dev/null; then
	HAVE_NGLUA=0 NGLUA_WHY="lua-cjson missing"
fi

for p in $UP_PORT $SP_PORT $SP_ADMIN $PLAIN_PORT $NGINX_PORT $HAP_PORT $BIG_PORT $BIG_ADMIN $MCP_PORT $MCP_ADMIN $PIPE_PORT $PIPE_ADMIN $OBS_PORT $OBS_ADMIN $QUIET_PORT $QUIET_ADMIN $NGLUA_PORT $GOREWRITE_PORT; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		echo "run.sh: 127.0.0.1:$p is in use; free ports 18101-18118 first" >&2
		exit 2
	fi
done

SRV=() WRK=()
if command -v taskset >/dev/null 2>&1 && (($(nproc) >= 2)); then
	SRV=(taskset -c 0) WRK=(taskset -c 1)
	PINNING="servers on CPU 0, wrk on CPU 1"
else
	PINNING="no CPU pinning (taskset missing or one CPU): figures are noisier"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/signpost-bench.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- build -------------------------------------------------------------------
echo "building into $TMP ..." >&2
# Every Go program is built as deploy/build.sh builds signpost's image:
# static, no cgo, without symbol tables.
gobuild() { CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" "$@"; }
gobuild -o "$TMP/signpost" ./cmd/signpost
gobuild -o "$TMP/upstream" ./test/bench/upstream
gobuild -o "$TMP/plainproxy" ./test/bench/plainproxy
gobuild -o "$TMP/rewriteproxy" ./test/bench/rewriteproxy
gobuild -o "$TMP/samebody" ./test/bench/samebody
go run ./test/bench/genrules -routes 1000 -rules 10 >"$TMP/rules-1k.yaml"
load_start=$(date +%s%N)
"$TMP/signpost" check "$TMP/rules-1k.yaml" >/dev/null
LOAD_MS=$((($(date +%s%N) - load_start) / 1000000))

# --- configs -----------------------------------------------------------------
mkdir -p "$TMP/nginx"
NGINX_USER=""
if (($(id -u) == 0)); then NGINX_USER="user root;"; fi
cat >"$TMP/nginx/nginx.conf" <<EOF
$NGINX_USER
daemon off;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    keepalive_requests 1000000;
    upstream api {
        server 127.0.0.1:$UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            proxy_pass http://api;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF

# The nginx + Lua peer: the plain nginx's settings, one worker, and
# test/bench/nginxlua/rewrite.lua in the access, header filter and body
# filter phases. client_body_buffer_size keeps a body of up to 1 MiB in
# memory, where the access phase reads it, as signpost reads up to 1 MiB.
mkdir -p "$TMP/nginxlua"
cat >"$TMP/nginxlua/nginx.conf" <<EOF
$NGINX_USER
daemon off;
worker_processes 1;
load_module $NGX_MODULES/ndk_http_module.so;
load_module $NGX_MODULES/ngx_http_lua_module.so;
pid $TMP/nginxlua/nginx.pid;
error_log $TMP/nginxlua/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $TMP/nginxlua/body;
    proxy_temp_path $TMP/nginxlua/proxy;
    fastcgi_temp_path $TMP/nginxlua/fastcgi;
    uwsgi_temp_path $TMP/nginxlua/uwsgi;
    scgi_temp_path $TMP/nginxlua/scgi;
    keepalive_requests 1000000;
    client_body_buffer_size 1m;
    lua_package_path "$ROOT/test/bench/nginxlua/?.lua;;";
    init_by_lua_block { rewrite = require "rewrite" }
    upstream api {
        server 127.0.0.1:$UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$NGLUA_PORT;
        location / {
            access_by_lua_block { rewrite.access() }
            header_filter_by_lua_block { rewrite.header_filter() }
            body_filter_by_lua_block { rewrite.body_filter() }
            proxy_pass http://api;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
if ((HAVE_NGLUA)) && ! nginx -t -p "$TMP/nginxlua" -c "$TMP/nginxlua/nginx.conf" -e "$TMP/nginxlua/error.log" >"$TMP/nginxlua/test.out" 2>&1; then
	HAVE_NGLUA=0 NGLUA_WHY="nginx -t: $(grep -m1 emerg "$TMP/nginxlua/test.out" || head -1 "$TMP/nginxlua/test.out")"
fi
((HAVE_NGLUA)) || echo "SKIP nginx + Lua peer ($NGLUA_WHY): $NGLUA_APT" >&2

cat >"$TMP/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend fe
    bind 127.0.0.1:$HAP_PORT
    default_backend api
backend api
    server up 127.0.0.1:$UP_PORT
EOF

# Each wrong call comes from an agent of its own (X-Session-Id), as the
# first wrong calls of many agents do: one agent repeating one wrong call
# would be told that its value was already rejected, then to stop.
# wrk_run numbers its runs (six digits, after --), so that no id recurs
# from one run to the next and ids are as long on every path.
cat >"$TMP/agents.lua" <<'EOF'
local threads = 0
function setup(thread)
	threads = threads + 1
	thread:set("tid", threads)
end
local prefix = "agent-"
function init(args)
	if args[1] then prefix = "agent-" .. args[1] .. "-" end
end
local n = 0
function request()
	n = n + 1
	wrk.headers["X-Session-Id"] = prefix .. tid .. "-" .. n
	return wrk.format()
end
EOF
{
	echo 'wrk.method = "PATCH"'
	echo "wrk.body = '{\"status\":\"OPEN\"}'"
	echo 'wrk.headers["Content-Type"] = "application/json"'
	cat "$TMP/agents.lua"
} >"$TMP/patch.lua"
# Three fields at fault: status and priority out of their enums, customer_id off its pattern.
{
	echo 'wrk.method = "POST"'
	echo "wrk.body = '{\"title\":\"Printer on fire\",\"status\":\"OPEN\",\"priority\":\"P1\",\"customer_id\":\"42\"}'"
	echo 'wrk.headers["Content-Type"] = "application/json"'
	cat "$TMP/agents.lua"
} >"$TMP/create.lua"

# --- start -------------------------------------------------------------------
start() { # name, command...: output to $TMP/name.log
	start_to "$TMP/$1.log" "$@"
}
start_to() { # file, name, command...
	local out=$1 name=$2
	shift 2
	"${SRV[@]}" "$@" >"$out" 2>&1 &
	PIDS+=($!)
	eval "PID_$name=$!"
}
wait_port() { # name, port
	local i
	for ((i = 0; i < 100; i++)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	echo "run.sh: $1 did not listen on 127.0.0.1:$2 within 5 s; its log:" >&2
	cat "$TMP/$1.log" >&2 || true
	exit 1
}

start upstream "$TMP/upstream" -listen "127.0.0.1:$UP_PORT"
wait_port upstream $UP_PORT
# signpost serves as deployed: the default log level, its log to a file
# ($TMP/signpost.log) or, for the signpost-pipe rows, to a pipe that
# another process reads, as a container runtime or a log shipper does.
start signpost "$TMP/signpost" serve --config "$ROOT/test/bench/rules.yaml" \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$SP_PORT" \
	--admin "127.0.0.1:$SP_ADMIN" --watch=false
start signpost1k "$TMP/signpost" serve --config "$TMP/rules-1k.yaml" \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$BIG_PORT" \
	--admin "127.0.0.1:$BIG_ADMIN" --watch=false
mkfifo "$TMP/signpost-pipe.fifo"
start pipereader cat "$TMP/signpost-pipe.fifo"
start_to "$TMP/signpost-pipe.fifo" signpostpipe "$TMP/signpost" serve --config "$ROOT/test/bench/rules.yaml" \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$PIPE_PORT" \
	--admin "127.0.0.1:$PIPE_ADMIN" --watch=false
# signpostobserve serves the same rules in observe mode: answers pass
# through, what enforce would answer is logged, and every exchange is
# recorded for signpost draft.
start signpostobserve "$TMP/signpost" serve --config "$ROOT/test/bench/rules.yaml" --observe \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$OBS_PORT" \
	--admin "127.0.0.1:$OBS_ADMIN" --watch=false
# signpostquiet logs warnings only: no line per rewrite. It is a reference
# for the pairs, not a deployment: what the rewrite costs without its log.
start signpostquiet "$TMP/signpost" serve --config "$ROOT/test/bench/rules.yaml" --log-level warn \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$QUIET_PORT" \
	--admin "127.0.0.1:$QUIET_ADMIN" --watch=false
start plain "$TMP/plainproxy" -listen "127.0.0.1:$PLAIN_PORT" -upstream "http://127.0.0.1:$UP_PORT"
start nginx nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log"
# The peers that rewrite the 400 too; each answers the wrong call with
# signpost's body, which is checked below before anything is timed.
start gorewrite "$TMP/rewriteproxy" -listen "127.0.0.1:$GOREWRITE_PORT" -upstream "http://127.0.0.1:$UP_PORT"
TARGETS=(signpost signpost1k signpostpipe signpostobserve signpostquiet plain nginx gorewrite)
declare -A PORT=([signpost]=$SP_PORT [signpost1k]=$BIG_PORT [signpostpipe]=$PIPE_PORT [signpostobserve]=$OBS_PORT [signpostquiet]=$QUIET_PORT [plain]=$PLAIN_PORT [nginx]=$NGINX_PORT [haproxy]=$HAP_PORT [nginxlua]=$NGLUA_PORT [gorewrite]=$GOREWRITE_PORT)
if ((HAVE_NGLUA)); then
	start nginxlua nginx -p "$TMP/nginxlua" -c "$TMP/nginxlua/nginx.conf" -e "$TMP/nginxlua/error.log"
	TARGETS+=(nginxlua)
fi
if ((HAVE_HAPROXY)); then
	start haproxy haproxy -db -f "$TMP/haproxy.cfg"
	TARGETS+=(haproxy)
fi
for t in "${TARGETS[@]}"; do wait_port "$t" "${PORT[$t]}"; done

# --- paths -------------------------------------------------------------------
PATHS=(get big patch400 create3)
# serves PATH TARGET: whether the target is measured on the path. The
# 1,000-route file declares the ticket routes only, last; the log to a
# pipe matters where a line is logged, and is compared with the file;
# observe mode is compared with enforce on the success and the rewrite;
# the peers that rewrite are measured on the rewrite.
serves() {
	case $2 in
	signpost1k | signpostpipe | signpostobserve | signpostquiet) [[ $1 == get || $1 == patch400 ]] ;;
	nginxlua | gorewrite) [[ $1 == patch400 ]] ;;
	*) true ;;
	esac
}
# patch200 is the wrong call, byte for byte but the ticket id, which the
# upstream answers 200 whatever the status (test/bench/upstream): the same
# route, the same size, the same reading of the body; signpost passes the
# 200 through. Only the alternations below use it.
declare -A URLPATH=([get]=/tickets/T-1 [big]=/big [patch400]=/tickets/T-1 [create3]=/tickets [patch200]=/tickets/T-2)
declare -A SCRIPT=([get]="" [big]="" [patch400]=$TMP/patch.lua [create3]=$TMP/create.lua [patch200]=$TMP/patch.lua)
declare -A LABEL=(
	[get]="GET 200 small"
	[big]="GET 200 64 KiB"
	[patch400]="PATCH 400 rewrite"
	[create3]="POST 3 faults, before"
)

# Sanity: every target answers every path as expected before anything is timed.
declare -A WANT=([get]=200 [big]=200 [patch400]=400 [create3]=400)
for t in "${TARGETS[@]}"; do
	for p in "${PATHS[@]}"; do
		serves "$p" "$t" || continue
		args=(-s -o "$TMP/sanity.body" -w '%{http_code}' "http://127.0.0.1:${PORT[$t]}${URLPATH[$p]}")
		case $p in
		patch400) args+=(-X PATCH -H 'Content-Type: application/json' --data '{"status":"OPEN"}') ;;
		create3) args+=(-X POST -H 'Content-Type: application/json' --data '{"title":"Printer on fire","status":"OPEN","priority":"P1","customer_id":"42"}') ;;
		esac
		code=$(curl "${args[@]}")
		if [[ $code != "${WANT[$p]}" ]]; then
			echo "run.sh: $t ${LABEL[$p]}: got $code, want ${WANT[$p]}: $(head -c 300 "$TMP/sanity.body")" >&2
			exit 1
		fi
	done
done
if ! grep -q '"invalid_status"' <(curl -s -X PATCH -H 'Content-Type: application/json' --data '{"status":"OPEN"}' "http://127.0.0.1:$SP_PORT/tickets/T-1"); then
	echo "run.sh: signpost did not rewrite the PATCH 400; check test/bench/rules.yaml" >&2
	exit 1
fi
for t in signpost signpostquiet; do
	code=$(curl -s -o "$TMP/sanity.body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/json' --data '{"status":"OPEN"}' "http://127.0.0.1:${PORT[$t]}${URLPATH[patch200]}")
	if [[ $code != 200 ]] || ! grep -q '"id":"T-1"' "$TMP/sanity.body"; then
		echo "run.sh: $t: the wrong call on ${URLPATH[patch200]}: got $code, want the upstream's 200 passed through: $(head -c 300 "$TMP/sanity.body")" >&2
		exit 1
	fi
done

# CHECK: the peers that rewrite answer the wrong call with the body signpost
# answers it with, member by member, parsed as JSON (test/bench/samebody):
# error, field, message with the permitted set, received, retryable, and
# did_you_mean, which neither side writes for this set, since it is listed
# (docs/response-contract.md). The benchmark's own call comes first; the
# others try the echo of a value of another type, a long one and none.
PEERS=(gorewrite)
((HAVE_NGLUA)) && PEERS+=(nginxlua)
PROBES=('{"status":"OPEN"}' '{"status":42}' '{"status":"'"$(printf 'x%.0s' {1..70})"'"}' '{"status":"a<b"}' '{}')
mkdir -p "$TMP/check"
for i in "${!PROBES[@]}"; do
	args=(-also did_you_mean)
	for t in signpost "${PEERS[@]}"; do
		code=$(curl -s -o "$TMP/check/$t.json" -w '%{http_code}' -X PATCH -H 'Content-Type: application/json' \
			-H "X-Session-Id: check-$t-$i" --data "${PROBES[$i]}" "http://127.0.0.1:${PORT[$t]}/tickets/T-1")
		if [[ $code != 400 ]]; then
			echo "run.sh: CHECK FAILED: $t answered ${PROBES[$i]} with $code, want 400: $(head -c 300 "$TMP/check/$t.json")" >&2
			exit 1
		fi
		args+=("$t=$TMP/check/$t.json")
	done
	if ! "$TMP/samebody" "${args[@]}" >"$TMP/check/table.$i" 2>"$TMP/check/problems"; then
		{
			echo "run.sh: CHECK FAILED: a peer does not answer the wrong call ${PROBES[$i]} with signpost's body;"
			echo "comparing their rates would not be fair:"
			cat "$TMP/check/table.$i" "$TMP/check/problems"
		} >&2
		exit 1
	fi
done
echo "check: the peers (${PEERS[*]}) answer ${#PROBES[@]} wrong calls with signpost's body, member by member" >&2

# --- measurement helpers -----------------------------------------------------
TCK=$(getconf CLK_TCK)
descendants() { # pid: the pid and all its descendants
	local c
	echo "$1"
	# shellcheck disable=SC2013 # the file is a list of pids separated by spaces
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do descendants "$c"; done
}
cpu_ticks() { # pid: utime+stime of the process tree, in clock ticks
	local sum=0 p f
	for p in $(descendants "$1"); do
		# Fields after the ")" that ends comm: utime and stime are the 12th and 13th.
		f=$(sed 's/.*) //' /proc/"$p"/stat 2>/dev/null) || continue
		# shellcheck disable=SC2086 # split into fields
		set -- $f
		sum=$((sum + ${12} + ${13}))
	done
	echo "$sum"
}
hwm_kib() { # pid: summed VmHWM of the process tree, KiB
	local sum=0 p v
	for p in $(descendants "$1"); do
		v=$(awk '/^VmHWM:/ {print $2}' /proc/"$p"/status 2>/dev/null || true)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}
pid_of() { eval "echo \$PID_$1"; }

WRK_RUNS=0
wrk_run() { # target, path, duration -> writes wrk output to $TMP/wrk.out
	local url="http://127.0.0.1:${PORT[$1]}${URLPATH[$2]}" args=(-t "$THREADS" -c "$CONNS" -d "$3" --latency) tail=()
	WRK_RUNS=$((WRK_RUNS + 1))
	[[ -n ${SCRIPT[$2]} ]] && args+=(-s "${SCRIPT[$2]}") tail=(-- "$(printf '%06d' "$WRK_RUNS")")
	"${WRK[@]}" wrk "${args[@]}" "$url" "${tail[@]}" >"$TMP/wrk.out" 2>&1
}

# to_us VALUE: a wrk latency like 812.00us, 1.23ms or 1.01s, in microseconds.
to_us() {
	awk -v v="$1" 'BEGIN {
		n = v + 0
		if (v ~ /us$/) m = 1; else if (v ~ /ms$/) m = 1000; else if (v ~ /m$/) m = 60e6; else if (v ~ /s$/) m = 1e6; else m = 1
		printf "%.0f", n * m }'
}

RESULTS=$TMP/results.tsv
: >"$RESULTS"
measure() { # round, target, path
	local pid up c0 c1 u0 u1 rps reqs p50 p99 errs
	pid=$(pid_of "$2")
	up=$(pid_of upstream)
	c0=$(cpu_ticks "$pid") u0=$(cpu_ticks "$up")
	wrk_run "$2" "$3" "$DURATION"
	c1=$(cpu_ticks "$pid") u1=$(cpu_ticks "$up")
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$TMP/wrk.out")
	reqs=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
	p50=$(to_us "$(awk '$1 == "50%" {print $2}' "$TMP/wrk.out")")
	p99=$(to_us "$(awk '$1 == "99%" {print $2}' "$TMP/wrk.out")")
	errs=$(awk '/Socket errors/ {print}' "$TMP/wrk.out")
	if [[ -z $rps || -z $reqs || $reqs == 0 ]]; then
		echo "run.sh: wrk gave no result for $2 ${LABEL[$3]}:" >&2
		cat "$TMP/wrk.out" >&2
		exit 1
	fi
	[[ -n $errs ]] && echo "  note: $2 ${LABEL[$3]}: $errs" >&2
	# cpu µs/req = ticks * (1e6 / TCK) / requests
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$3" "$2" "$rps" "$p50" "$p99" \
		"$(awk -v d=$((c1 - c0)) -v t="$TCK" -v n="$reqs" 'BEGIN {printf "%.1f", d * 1e6 / t / n}')" \
		"$(awk -v d=$((u1 - u0)) -v t="$TCK" -v n="$reqs" 'BEGIN {printf "%.1f", d * 1e6 / t / n}')" \
		"$(hwm_kib "$pid")" >>"$RESULTS"
}

# --- run ---------------------------------------------------------------------
if [[ -n $PAIRS_ONLY ]]; then
	echo "warm-up: $WARMUP per target and path; then $ROUNDS round(s) of $ALTERNATIONS alternations (BENCH_PAIRS_ONLY: no table of paths); $PINNING" >&2
else
	echo "warm-up: $WARMUP per target and path; then $ROUNDS round(s) of $DURATION at $CONNS connections and $ALTERNATIONS alternations; $PINNING" >&2
fi
for p in "${PATHS[@]}"; do
	for t in "${TARGETS[@]}"; do serves "$p" "$t" && wrk_run "$t" "$p" "$WARMUP"; done
done
# pair ROUND: the targets that a bar compares, each for one second in turn,
# BENCH_ALTERNATIONS (5) times, so that both sides of a ratio see the same
# machine: on one whose speed drifts, the rows of the table, up to a minute
# apart, are not comparable. On the small success and the 400: signpost,
# nginx, observe mode and the 1,000-route file, and signpostquiet, with no
# log line (a reference). On the 400 alone: the peers that rewrite it. And
# the wrong call, byte for byte but the ticket id, answered 200 by the
# upstream and passed through (patch200), by signpost and by signpostquiet:
# the rewrite's own cost, like for like. The totals of requests are
# recorded, for the ratios alone.
PAIR_SPECS=("signpost get" "signpost patch400" "signpost patch200" "nginx get" "nginx patch400"
	"signpostobserve get" "signpostobserve patch400" "signpost1k get" "signpost1k patch400"
	"signpostquiet get" "signpostquiet patch400" "signpostquiet patch200" "gorewrite patch400")
((HAVE_NGLUA)) && PAIR_SPECS+=("nginxlua patch400")
pair() {
	local round=$1 i spec n
	local -A total=()
	for ((i = 0; i < ALTERNATIONS; i++)); do
		for spec in "${PAIR_SPECS[@]}"; do
			# shellcheck disable=SC2086 # "target path" or "path connections"
			set -- $spec
			wrk_run "$1" "$2" 1s
			n=$(awk '/requests in/ {print $1}' "$TMP/wrk.out")
			total[$spec]=$((${total[$spec]:-0} + n))
		done
	done
	for spec in "${!total[@]}"; do
		# shellcheck disable=SC2086 # "target path" or "path connections"
		set -- $spec
		printf '%s\tpair%s\t%s\t%s\t0\t0\t0\t0\t0\n' "$round" "$2" "$1" "${total[$spec]}" >>"$RESULTS"
	done
}
for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r/$ROUNDS ..." >&2
	if [[ -z $PAIRS_ONLY ]]; then
		for p in "${PATHS[@]}"; do
			for t in "${TARGETS[@]}"; do serves "$p" "$t" && measure "$r" "$t" "$p"; done
		done
	fi
	pair "$r"
done

# --- memory ------------------------------------------------------------------
# Resident memory while a load runs, sampled every 100 ms: the small success
# at 256 connections, and 1 MiB bodies streaming at 64.
rss_kib() { # pid: summed VmRSS of the process tree, KiB
	local sum=0 p v
	for p in $(descendants "$1"); do
		v=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null || true)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}
MEMORY=$TMP/memory.tsv
: >"$MEMORY"
URLPATH[huge]=/huge
SCRIPT[huge]=""
[[ -z $PAIRS_ONLY ]] && echo "memory: 256 connections on the small success, 64 on 1 MiB bodies ..." >&2
[[ -n $PAIRS_ONLY ]] || for spec in "get 256" "huge 64"; do
	# shellcheck disable=SC2086 # "target path" or "path connections"
	set -- $spec
	for t in signpost plain nginx; do
		pid=$(pid_of "$t") peak=0
		CONNS=$2 wrk_run "$t" "$1" "$DURATION" &
		load=$!
		while kill -0 "$load" 2>/dev/null; do
			v=$(rss_kib "$pid")
			((v > peak)) && peak=$v
			sleep 0.1
		done
		wait "$load" || true
		printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$t" "$peak" >>"$MEMORY"
	done
done

# AWK_LIB is what both reports' awk programs share: the median of a
# list of figures, a latency in µs or ms, and appending to a list.
AWK_LIB='
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function lat(us) { return us >= 1000 ? sprintf("%.2f ms", us / 1000) : sprintf("%d µs", us) }
	function app(k, v) { L[k] = (k in L) ? L[k] " " v : v }
'

# --- report ------------------------------------------------------------------
# Median over rounds of each figure; vs nginx is the median of the per-round
# ratio to nginx on the same path, and so is each bar's ratio, p99 included,
# since the machine's speed may drift between rounds. Peak RSS is the
# high-water mark at the end.
{
	echo
	if [[ -n $PAIRS_ONLY ]]; then
		echo "signpost end-to-end benchmark, alternations only: $ROUNDS round(s) x $ALTERNATIONS alternations of 1 s, $CONNS connections, $THREADS wrk threads; $PINNING"
	else
		echo "signpost end-to-end benchmark: $ROUNDS round(s) x $DURATION, then $ALTERNATIONS alternations of 1 s; $CONNS connections, $THREADS wrk threads; $PINNING"
	fi
	echo "CPU µs/req is user+system time of the proxy (upstream apart) per request; RSS is VmHWM (nginx: master+worker)."
	echo "signpost-1k serves a generated file of 1,000 routes with 10 error rules each, the measured routes declared last."
	echo "signpost logs at its default level (info: a line per rewritten error) to a file on $(stat -f -c %T "$TMP"); signpostpipe to a pipe read by cat; signpostobserve serves the same rules with --observe; signpostquiet at --log-level warn, with no line per rewrite."
	echo "Peers that rewrite the 400 too, into signpost's body: nginxlua (nginx + Lua, test/bench/nginxlua) and gorewrite (httputil.ReverseProxy + ModifyResponse, test/bench/rewriteproxy); they keep no state per caller, count nothing and log nothing."
	echo "Each wrong call carries an X-Session-Id of its own: the first wrong call of an agent."
	((HAVE_HAPROXY)) || echo "haproxy not installed: its rows are skipped (apt-get install -y haproxy)."
	((HAVE_NGLUA)) || echo "SKIP nginx + Lua peer ($NGLUA_WHY): its rows and bar are skipped ($NGLUA_APT)."
	echo
	echo "The wrong call's body, as checked before any timing (parsed as JSON, member by member):"
	echo
	cat "$TMP/check/table.0"
	echo
	awk -F'\t' -v paths="${PATHS[*]}" -v targets="${TARGETS[*]}" -v memory="$MEMORY" -v load_ms="$LOAD_MS" \
		-v pairs_only="$PAIRS_ONLY" -v have_nglua="$HAVE_NGLUA" -v nglua_apt="$NGLUA_APT" -v alternations="$ALTERNATIONS" \
		-v lget="${LABEL[get]}" -v lbig="${LABEL[big]}" -v lpatch="${LABEL[patch400]}" -v lcreate="${LABEL[create3]}" "$AWK_LIB"'
	# ratio(p, t, q, u): median over rounds of req/s of t on p over u on q.
	function ratio(p, t, q, u,   r, s) {
		s = ""
		for (r in rounds) if (rpsr[r, q, u] > 0 && rpsr[r, p, t] > 0) s = s " " rpsr[r, p, t] / rpsr[r, q, u]
		return s == "" ? 0 : median(s)
	}
	# p99ratio(p, t, u): median over rounds of the p99 of t on p over u'"'"'s.
	function p99ratio(p, t, u,   r, s) {
		s = ""
		for (r in rounds) if (p99r[r, p, u] > 0 && p99r[r, p, t] > 0) s = s " " p99r[r, p, t] / p99r[r, p, u]
		return s == "" ? 0 : median(s)
	}
	# bar prints a bar, met or not, with its figure; a figure of 0 was not measured.
	function bar(what, value, op, limit, unit,   ok) {
		if (value == 0) {
			printf "| %s | — | %s %s%s | not measured |\n", what, op, limit, unit
			return
		}
		ok = op == ">=" ? value >= limit : value <= limit
		printf "| %s | %.2f%s | %s %s%s | %s |\n", what, value, unit, op, limit, unit, ok ? "met" : "NOT MET"
	}
	# ref prints a reference: a figure with no bar.
	function ref(what, value, unit) {
		if (value == 0) printf "| reference: %s | — | (reported) | not measured |\n", what
		else printf "| reference: %s | %.2f%s | (reported) | |\n", what, value, unit
	}
	{
		k = $2 SUBSEP $3
		app(k SUBSEP "rps", $4); app(k SUBSEP "p50", $5); app(k SUBSEP "p99", $6)
		app(k SUBSEP "cpu", $7); app(k SUBSEP "ucpu", $8); rss[k] = $9
		rpsr[$1, $2, $3] = $4; p99r[$1, $2, $3] = $6; rounds[$1] = 1
	}
	END {
		label["get"] = lget; label["big"] = lbig; label["patch400"] = lpatch; label["create3"] = lcreate
		np = split(paths, P, " "); nt = split(targets, T, " ")
		if (!pairs_only) {
		printf "| path | target | req/s | p50 | p99 | CPU µs/req | upstream CPU µs/req | peak RSS MiB | req/s vs nginx |\n"
		printf "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
		}
		for (i = 1; i <= np; i++) for (j = 1; j <= nt; j++) {
			p = P[i]; t = T[j]; k = p SUBSEP t
			if (!((k SUBSEP "rps") in L)) continue
			printf "| %s | %s | %.0f | %s | %s | %.1f | %.1f | %.1f | %.2f |\n", label[p], t,
				median(L[k SUBSEP "rps"]), lat(median(L[k SUBSEP "p50"])), lat(median(L[k SUBSEP "p99"])),
				median(L[k SUBSEP "cpu"]), median(L[k SUBSEP "ucpu"]), rss[k] / 1024, ratio(p, t, p, "nginx")
		}
		while ((getline line < memory) > 0) {
			split(line, f, "\t"); mem[f[1], f[3]] = f[4] / 1024; memconns[f[1]] = f[2]
		}
		if (!pairs_only) {
		printf "\n| resident memory under load (peak VmRSS) | signpost | plain | nginx |\n|---|---:|---:|---:|\n"
		printf "| small success, %d connections | %.1f MiB | %.1f MiB | %.1f MiB |\n", memconns["get"], mem["get", "signpost"], mem["get", "plain"], mem["get", "nginx"]
		printf "| 1 MiB success, %d connections | %.1f MiB | %.1f MiB | %.1f MiB |\n", memconns["huge"], mem["huge", "signpost"], mem["huge", "plain"], mem["huge", "nginx"]
		}

		printf "\nBut for the plain Go proxy'"'"'s and the p99, the ratios below take the totals of %d alternations of\n", alternations
		printf "one second a round (signpost, nginx, observe mode, the 1,000 routes and signpostquiet on the small success and\n"
		printf "the 400; the peers on the 400; signpost and signpostquiet on the wrong call answered 200 and passed through),\n"
		printf "so that both sides see the same machine; each ratio is the median of the rounds'"'"' ratios.\n"
		# How busy the host was: nginx'"'"'s small successes a second in the alternations.
		if (("pairget" SUBSEP "nginx" SUBSEP "rps") in L)
			printf "In the alternations nginx served %.0f small successes a second (median of the rounds).\n", median(L["pairget" SUBSEP "nginx" SUBSEP "rps"]) / alternations
		printf "\n| bar | measured | wanted | |\n|---|---:|---:|---|\n"
		bar("small success: signpost req/s vs nginx", ratio("pairget", "signpost", "pairget", "nginx"), ">=", 0.8, "×")
		bar("small success: signpost req/s vs the plain Go proxy", ratio("get", "signpost", "get", "plain"), ">=", 1.3, "×")
		bar("rewritten 400 req/s vs the same PATCH answered 200 and passed through (log to a file)", ratio("pairpatch400", "signpost", "pairpatch200", "signpost"), ">=", 0.8, "×")
		ref("rewritten 400 vs signpost'"'"'s own small success, log to a file (a bar until it was retired: ≥ 0.85×)", ratio("pairpatch400", "signpost", "pairget", "signpost"), "×")
		ref("with no log line (--log-level warn), rewritten 400 vs the same PATCH answered 200", ratio("pairpatch400", "signpostquiet", "pairpatch200", "signpostquiet"), "×")
		ref("with no log line (--log-level warn), rewritten 400 vs its own small success", ratio("pairpatch400", "signpostquiet", "pairget", "signpostquiet"), "×")
		ref("nginx passing the 400 vs its own small success", ratio("pairpatch400", "nginx", "pairget", "nginx"), "×")
		bar("rewritten 400: signpost req/s vs nginx passing the 400 through", ratio("pairpatch400", "signpost", "pairpatch400", "nginx"), ">=", 0.7, "×")
		if (have_nglua)
			bar("rewritten 400: signpost req/s vs nginx + Lua rewriting it", ratio("pairpatch400", "signpost", "pairpatch400", "nginxlua"), ">=", 1.0, "×")
		else
			printf "| rewritten 400: signpost req/s vs nginx + Lua rewriting it | — | >= 1× | SKIP: %s |\n", nglua_apt
		bar("rewritten 400: signpost req/s vs a Go ReverseProxy rewriting it", ratio("pairpatch400", "signpost", "pairpatch400", "gorewrite"), ">=", 1.5, "×")
		bar("small success: p99 vs nginx", p99ratio("get", "signpost", "nginx"), "<=", 1.5, "×")
		ref("log to a pipe, not a file: rewritten 400 req/s", ratio("patch400", "signpostpipe", "patch400", "signpost"), "×")
		bar("observe mode vs enforce: small success req/s", ratio("pairget", "signpostobserve", "pairget", "signpost"), ">=", 0.9, "×")
		bar("observe mode vs enforce: the 400 (passed through, recorded) req/s", ratio("pairpatch400", "signpostobserve", "pairpatch400", "signpost"), ">=", 0.9, "×")
		bar("1,000 routes vs 10: small success req/s", ratio("pairget", "signpost1k", "pairget", "signpost"), ">=", 0.9, "×")
		bar("1,000 routes vs 10: rewritten 400 req/s", ratio("pairpatch400", "signpost1k", "pairpatch400", "signpost"), ">=", 0.9, "×")
		bar("1,000 routes x 10 rules: load and check", load_ms / 1000, "<=", 1, " s")
		bar("RSS at 256 connections, small success", mem["get", "signpost"], "<=", 40, " MiB")
	}' "$RESULTS"
	if [[ -z $PAIRS_ONLY ]]; then
		echo
		echo "On \"POST 3 faults, before\" signpost answers without calling the upstream; the other targets forward"
		echo "the request and relay the upstream's bare 400. On \"PATCH 400 rewrite\" nginx, haproxy and plain pass the"
		echo "upstream's bare 400 through; signpost, nginxlua and gorewrite rewrite it."
	fi
}
[[ -n $PAIRS_ONLY ]] && exit 0

# --- MCP over streamable HTTP --------------------------------------------------
# signpost mcp serves the same rules as tools, each route validating before the
# upstream; mcpload, pinned where wrk is, holds BENCH_MCP_SESSIONS (16) sessions,
# each calling one tool in a loop: a success, and a wrong status, refused before
# the upstream, numbered ({n}) so that no call repeats its session's last
# failure, which signpost would answer as a repeat. Per round and call: tool
# calls/s, p50, p99, and signpost's CPU per call, its CPU time over every call
# made (warm-up included); mcpload's own CPU per call tells whether the client,
# on its one CPU, was the limit.
MCP_SESSIONS=${BENCH_MCP_SESSIONS:-16}
gobuild -o "$TMP/mcpload" ./test/bench/mcpload
start mcp "$TMP/signpost" mcp --config "$ROOT/test/bench/rules.yaml" \
	--upstream "http://127.0.0.1:$UP_PORT" --listen "127.0.0.1:$MCP_PORT" \
	--admin "127.0.0.1:$MCP_ADMIN" --watch=false --log-level error
wait_port mcp $MCP_PORT
MCP_CALLS=(success error)
declare -A MCP_TOOL=([success]=get_ticket [error]=update_ticket)
declare -A MCP_ARGS=([success]='{"ticket_id":"T-1"}' [error]='{"ticket_id":"T-1","status":"OPEN-{n}"}')
declare -A MCP_ERROR=([success]=false [error]=true)
declare -A MCP_LABEL=([success]="get_ticket, success" [error]="update_ticket, wrong status")
mcp_run() { # call, sessions, warm-up, duration -> $TMP/mcpload.out and .err
	if ! "${WRK[@]}" "$TMP/mcpload" -url "http://127.0.0.1:$MCP_PORT/mcp" -tool "${MCP_TOOL[$1]}" \
		-args "${MCP_ARGS[$1]}" -want-error="${MCP_ERROR[$1]}" -sessions "$2" -warmup "$3" -duration "$4" \
		>"$TMP/mcpload.out" 2>"$TMP/mcpload.err"; then
		echo "run.sh: mcpload gave no result for MCP ${MCP_LABEL[$1]}:" >&2
		cat "$TMP/mcpload.out" "$TMP/mcpload.err" >&2
		exit 1
	fi
}
mcp_field() { awk -v k="$1" '/^calls=/ {for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2)}' "$TMP/mcpload.out"; }
# Sanity: each call is answered as expected before anything is timed.
for k in "${MCP_CALLS[@]}"; do
	mcp_run "$k" 1 0s 200ms
	if [[ $(mcp_field errors) != 0 ]]; then
		echo "run.sh: signpost mcp ${MCP_LABEL[$k]}: $(cat "$TMP/mcpload.err")" >&2
		exit 1
	fi
done
MCP_RESULTS=$TMP/mcp.tsv
: >"$MCP_RESULTS"
echo "MCP: $ROUNDS round(s) of $WARMUP warm-up and $DURATION per call, $MCP_SESSIONS sessions ..." >&2
for ((r = 1; r <= ROUNDS; r++)); do
	for k in "${MCP_CALLS[@]}"; do
		# shellcheck disable=SC2154 # set by start, through eval
		c0=$(cpu_ticks "$PID_mcp")
		mcp_run "$k" "$MCP_SESSIONS" "$WARMUP" "$DURATION"
		c1=$(cpu_ticks "$PID_mcp")
		[[ -s $TMP/mcpload.err ]] && echo "  note: MCP ${MCP_LABEL[$k]}: $(head -c 300 "$TMP/mcpload.err")" >&2
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$k" "$(mcp_field rps)" "$(mcp_field p50_us)" "$(mcp_field p99_us)" \
			"$(awk -v d=$((c1 - c0)) -v t="$TCK" -v n="$(mcp_field total)" 'BEGIN {printf "%.1f", d * 1e6 / t / n}')" \
			"$(mcp_field self_cpu_us)" "$(mcp_field errors)" >>"$MCP_RESULTS"
	done
done
{
	echo
	echo "MCP over streamable HTTP: signpost mcp on the same rules, every route validating before the upstream;"
	echo "$MCP_SESSIONS sessions of test/bench/mcpload, each calling one tool in a loop; medians over $ROUNDS round(s)."
	echo
	awk -F'\t' -v calls="${MCP_CALLS[*]}" -v lsuccess="${MCP_LABEL[success]}" -v lerror="${MCP_LABEL[error]}" "$AWK_LIB"'
	{ app($2 SUBSEP "rps", $3); app($2 SUBSEP "p50", $4); app($2 SUBSEP "p99", $5); app($2 SUBSEP "cpu", $6); app($2 SUBSEP "self", $7); errs[$2] += $8 }
	END {
		label["success"] = lsuccess; label["error"] = lerror
		n = split(calls, C, " ")
		printf "| tools/call | calls/s | p50 | p99 | CPU µs/call | mcpload CPU µs/call | errors |\n|---|---:|---:|---:|---:|---:|---:|\n"
		for (i = 1; i <= n; i++) {
			k = C[i]
			printf "| %s | %.0f | %s | %s | %.1f | %.1f | %d |\n", label[k], median(L[k SUBSEP "rps"]),
				lat(median(L[k SUBSEP "p50"])), lat(median(L[k SUBSEP "p99"])), median(L[k SUBSEP "cpu"]),
				median(L[k SUBSEP "self"]), errs[k]
		}
	}' "$MCP_RESULTS"
}
