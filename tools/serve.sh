#!/usr/bin/env bash
# Serves Attention Lab as N replicas behind nginx, all on the loopback address.
#
#     make serve REPLICAS=2 PORT=8501          # or: REPLICAS=2 PORT=8501 bash tools/serve.sh
#
# What it does, and says as it goes:
#   1. installs the Debian package nginx with apt-get if no nginx is found (as root only; without
#      root it stops and says what to install). Services are not started by the install.
#   2. starts REPLICAS `streamlit run app.py` processes on 127.0.0.1:PORT+1 … PORT+REPLICAS, with
#      the glibc malloc tunables `make run` uses, and waits until each answers /_stcore/health;
#   3. writes an nginx config from tools/nginx.conf.template into a run folder (RUN_DIR, default
#      a new /tmp/attention-lab-serve.XXXXXX) and runs nginx in the foreground on 127.0.0.1:PORT:
#      websocket upgrade, sticky sessions by a cookie nginx sets (the template explains why not
#      ip_hash), replica and nginx logs in the run folder;
#   4. prints the PIDs, and the bench/load_protocol.py command that measures exactly these processes.
# Ctrl-C (or TERM, or any replica or nginx exiting) stops everything it started.
#
# Several machines: run the replicas on each machine (bound to an address nginx can reach, e.g.
# --server.address 10.0.0.5, instead of 127.0.0.1) and list them all as `server host:port;`
# lines of the one upstream; nginx keeps the same cookie hash across machines.
set -euo pipefail

REPLICAS="${REPLICAS:-2}"
PORT="${PORT:-8501}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
[[ "$PY" == /* ]] || PY="$PWD/$PY"  # make passes .venv/bin/python, relative to the caller's folder
TEMPLATE="$ROOT/tools/nginx.conf.template"
export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1}"

say() { echo "serve: $*" >&2; }

if ! [[ "$REPLICAS" =~ ^[1-9][0-9]*$ && "$PORT" =~ ^[0-9]+$ ]] || (( PORT < 1024 || PORT + REPLICAS > 65535 )); then
    say "REPLICAS must be a positive number and PORT a port from 1024 up (got REPLICAS=$REPLICAS PORT=$PORT)"
    exit 2
fi
[[ -x "$PY" ]] || { say "no Python at $PY: run \`make run\` once (it creates .venv) or set PY"; exit 2; }

# ------------------------------------------------------------------ 1. nginx
NGINX="$(command -v nginx || true)"
[[ -z "$NGINX" && -x /usr/sbin/nginx ]] && NGINX=/usr/sbin/nginx
if [[ -z "$NGINX" ]]; then
    if [[ "$(id -u)" != 0 ]]; then
        say "nginx is not installed; install the Debian package first: sudo apt-get install nginx"
        exit 1
    fi
    say "nginx is not installed: installing the Debian package nginx with apt-get (apt-get update, then install)"
    # Debian starts a freshly installed service on port 80 of every interface; a policy-rc.d that
    # answers 101 stops that. Docker images usually have one; otherwise use one for the install.
    made_policy=""
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
    [[ -n "$made_policy" ]] && rm -f /usr/sbin/policy-rc.d
    NGINX=/usr/sbin/nginx
    say "installed $("$NGINX" -v 2>&1)"
fi

# ------------------------------------------------------------------ 2. replicas
RUN_DIR="${RUN_DIR:-$(mktemp -d /tmp/attention-lab-serve.XXXXXX)}"
mkdir -p "$RUN_DIR"/{client_body,proxy,fastcgi,uwsgi,scgi}
replica_pids=()
nginx_pid=""

stop_all() {
    trap - INT TERM EXIT
    say "stopping nginx and ${#replica_pids[@]} replicas"
    [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null || true
    for pid in "${replica_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One cookie secret for all replicas, so a cookie Streamlit signs (st.login) is valid on each;
# passed in the environment, not on the command line, where `ps` would show it.
export STREAMLIT_SERVER_COOKIE_SECRET="${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PY" -c 'import secrets; print(secrets.token_hex(32))')}"
servers=""
for ((i = 1; i <= REPLICAS; i++)); do
    port=$((PORT + i))
    say "starting replica $i on 127.0.0.1:$port (log: $RUN_DIR/replica-$port.log)"
    (cd "$ROOT" && exec "$PY" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$port" \
        --server.headless true --browser.serverAddress 127.0.0.1 --browser.serverPort "$PORT" \
        --browser.gatherUsageStats false) > "$RUN_DIR/replica-$port.log" 2>&1 &
    replica_pids+=("$!")
    servers+="        server 127.0.0.1:$port max_fails=3 fail_timeout=10s;"$'\n'
done

for ((i = 1; i <= REPLICAS; i++)); do
    port=$((PORT + i))
    for ((tries = 0; ; tries++)); do
        curl -fsS -o /dev/null "http://127.0.0.1:$port/_stcore/health" 2>/dev/null && break
        if ! kill -0 "${replica_pids[i - 1]}" 2>/dev/null; then
            say "replica $i exited; its log:"; tail -n 20 "$RUN_DIR/replica-$port.log" >&2; exit 1
        fi
        (( tries < 600 )) || { say "replica $i did not answer in 120 s"; exit 1; }
        sleep 0.2
    done
done
say "all $REPLICAS replicas answer"

# ------------------------------------------------------------------ 3. nginx in front
if [[ "$(id -u)" == 0 ]]; then  # root: workers drop to an unprivileged user that owns the temp folders
    worker_user="$(id -u www-data >/dev/null 2>&1 && echo www-data || echo nobody)"
    chown "$worker_user" "$RUN_DIR"/{client_body,proxy,fastcgi,uwsgi,scgi}
    user_line="user $worker_user;"
else
    user_line="# not root: nginx runs as $(id -un)"
fi
conf="$RUN_DIR/nginx.conf"
awk -v user_line="$user_line" -v run_dir="$RUN_DIR" -v listen="127.0.0.1:$PORT" -v servers="${servers%$'\n'}" '
    { gsub(/@USER_LINE@/, user_line); gsub(/@RUN_DIR@/, run_dir); gsub(/@LISTEN@/, listen); gsub(/@SERVERS@/, servers); print }
' "$TEMPLATE" > "$conf"
"$NGINX" -t -q -e stderr -p "$RUN_DIR" -c "$conf"
"$NGINX" -e stderr -p "$RUN_DIR" -c "$conf" &
nginx_pid="$!"
for ((tries = 0; ; tries++)); do
    curl -fsS -o /dev/null "http://127.0.0.1:$PORT/_stcore/health" 2>/dev/null && break
    kill -0 "$nginx_pid" 2>/dev/null || { say "nginx exited"; exit 1; }
    (( tries < 100 )) || { say "nginx did not answer on 127.0.0.1:$PORT"; exit 1; }
    sleep 0.1
done

pids_csv="$(IFS=,; echo "${replica_pids[*]}"),$nginx_pid"
cat <<EOF
Attention Lab: http://127.0.0.1:$PORT  (nginx → $REPLICAS replicas on ports $((PORT + 1))–$((PORT + REPLICAS)))
replica PIDs: ${replica_pids[*]}
nginx PID: $nginx_pid
run folder: $RUN_DIR (nginx.conf, access.log with the upstream of every request, replica logs)
measure it: $PY bench/load_protocol.py --url http://127.0.0.1:$PORT --server-pids $pids_csv
Ctrl-C stops everything.
EOF
echo "$pids_csv" > "$RUN_DIR/server-pids"

# Until Ctrl-C, or until one of them exits (then the rest are stopped too).
wait -n "${replica_pids[@]}" "$nginx_pid" || true
say "a replica or nginx exited (or Ctrl-C reached them); stopping the rest"
exit 1
