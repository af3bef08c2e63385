#!/usr/bin/env bash
# Make sure a MariaDB server answers and print its URL as the LAST line of stdout.
#
# Usage:
#   scripts/dev-db.sh [--force-private]   ensure a server; print mysql://user@host:port/db
#   scripts/dev-db.sh status              print the private instance's URL (exit 1 if down)
#   scripts/dev-db.sh stop                stop the private instance (never the system one)
#
# Order of preference (first that answers wins):
#   1. $RINGPIPE_MYSQL_URL
#   2. 127.0.0.1:3306 as root with an empty password, database `test` (created if missing)
#   3. a PRIVATE instance under <repo>/target/dev-db/ on a free port >= 3307; mariadb-server
#      and mariadb-client are installed with apt-get when missing (the system service is
#      never started). The instance is left running and reused by later runs.
# --force-private (or RINGPIPE_FORCE_PRIVATE_DB=1) skips 1 and 2.
#
# Everything except the URL goes to stderr. Safe to run repeatedly and concurrently.
#
# Knobs: RINGPIPE_DEV_DB_PORT (first port to probe, default 3307),
#        RINGPIPE_DEV_DB_START_TIMEOUT (seconds to wait for start-up, default 60).
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/mariadb.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/mariadb.sh"

readonly SYSTEM_HOST=127.0.0.1
readonly SYSTEM_PORT=3306
readonly DB_NAME=test
readonly DEV_DIR="$RINGPIPE_ROOT/target/dev-db"
readonly DATA_DIR="$DEV_DIR/data"
readonly PID_FILE="$DEV_DIR/mariadbd.pid"
readonly ERR_LOG="$DEV_DIR/mariadbd.err"
readonly OUT_LOG="$DEV_DIR/mariadbd.out"
readonly URL_FILE="$DEV_DIR/url"
readonly PORT_FILE="$DEV_DIR/port"
readonly LOCK_FILE="$DEV_DIR/lock"
readonly INIT_MARKER="$DEV_DIR/initialized"
readonly FIRST_PORT="${RINGPIPE_DEV_DB_PORT:-3307}"
readonly START_TIMEOUT="${RINGPIPE_DEV_DB_START_TIMEOUT:-60}"

SOCKET="$(socket_path "$DEV_DIR" mariadbd)"
readonly SOCKET

CLIENT=""

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; }

find_client() {
    CLIENT=""
    if have mariadb; then
        CLIENT=mariadb
    elif have mysql; then
        CLIENT=mysql
    fi
}

# sql_tcp HOST PORT USER PASS DB SQL  (DB may be empty). Quiet on success.
sql_tcp() {
    local host=$1 port=$2 user=$3 pass=$4 db=$5 sql=$6
    local args=(--no-defaults --protocol=TCP --connect-timeout=5 --batch --skip-column-names
        -h "$host" -P "$port" -u "$user")
    [[ -n $db ]] && args+=("$db")
    MYSQL_PWD="$pass" "$CLIENT" "${args[@]}" -e "$sql"
}

# sql_sock SQL: run SQL as root over the private instance's socket.
sql_sock() { sock_sql "$SOCKET" "$1"; }

# tcp_greets HOST PORT: does something speaking the MySQL protocol (a version string in
# its greeting packet) listen there? Used only when no client binary is installed.
tcp_greets() {
    local greeting
    # shellcheck disable=SC2016 # $0/$1 expand in the inner bash
    greeting=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" && dd bs=512 count=1 <&3 2>/dev/null' \
        "$1" "$2" 2>/dev/null | tr -c '[:print:]' '.') || true
    [[ $greeting =~ [0-9]+\.[0-9]+\.[0-9]+ ]]
}

# ensure_db HOST PORT USER PASS DB: server answers and DB exists (created if missing).
ensure_db() {
    local host=$1 port=$2 user=$3 pass=$4 db=$5 err
    if [[ -z $CLIENT ]]; then
        if tcp_greets "$host" "$port"; then
            warn "no mariadb/mysql client installed: $host:$port greets like MySQL, but" \
                "credentials and database '$db' could not be checked"
            return 0
        fi
        return 1
    fi
    err=$(sql_tcp "$host" "$port" "$user" "$pass" "$db" 'SELECT 1' 2>&1 >/dev/null) && return 0
    if [[ -n $db ]] && sql_tcp "$host" "$port" "$user" "$pass" "" 'SELECT 1' >/dev/null 2>&1; then
        log "creating database '$db' on $host:$port"
        err=$(sql_tcp "$host" "$port" "$user" "$pass" "" "CREATE DATABASE IF NOT EXISTS \`$db\`" 2>&1) &&
            sql_tcp "$host" "$port" "$user" "$pass" "$db" 'SELECT 1' >/dev/null && return 0
    fi
    log "$user@$host:$port/$db does not answer: ${err:-?}"
    return 1
}

urldecode() { printf '%b' "${1//%/\\x}"; }

# check_url URL: parse mysql://user[:pass]@host[:port][/db][?opts] and check it answers.
check_url() {
    local re='^(mysql|mariadb)://([^:@/]+)(:([^@/]*))?@(\[[^]/]+\]|[^:/?]+)(:([0-9]+))?(/([^?]*))?(\?.*)?$'
    if ! [[ $1 =~ $re ]]; then
        warn "cannot parse RINGPIPE_MYSQL_URL (want mysql://user[:password]@host[:port]/db)"
        return 1
    fi
    local user pass host port db
    user=$(urldecode "${BASH_REMATCH[2]}")
    pass=$(urldecode "${BASH_REMATCH[4]}")
    host=${BASH_REMATCH[5]#[}
    host=${host%]}
    port=${BASH_REMATCH[7]:-3306}
    db=$(urldecode "${BASH_REMATCH[9]}")
    ensure_db "$host" "$port" "$user" "$pass" "$db"
}

# ---------------------------------------------------------------- private instance --

private_pid() { pid_of "$PID_FILE" "$DATA_DIR"; }

private_url() { printf 'mysql://root@127.0.0.1:%s/%s\n' "$1" "$DB_NAME"; }

lock_dev_dir() {
    mkdir -p "$DEV_DIR"
    exec 9>"$LOCK_FILE"
    if have flock && ! flock -w 300 9; then
        die "timed out waiting for $LOCK_FILE (another dev-db.sh running?)"
    fi
}

init_datadir() {
    [[ -f $INIT_MARKER && -d $DATA_DIR/mysql ]] && return 0
    rm -f "$INIT_MARKER"
    mariadb_init_datadir "$DATA_DIR" "$DEV_DIR/install-db.log"
    touch "$INIT_MARKER"
}

# launch PORT: start mariadbd in the background, detached from this script.
launch() {
    local port=$1
    rm -f "$PID_FILE"
    printf '%s\n' "$port" >"$PORT_FILE"
    : >"$ERR_LOG"
    launch_mariadbd "$OUT_LOG" --no-defaults --datadir="$DATA_DIR" --socket="$SOCKET" \
        --port="$port" --bind-address=127.0.0.1 --local-infile=1 \
        --max-allowed-packet=64M --innodb-buffer-pool-size=512M --skip-log-bin \
        --skip-name-resolve --pid-file="$PID_FILE" --log-error="$ERR_LOG"
}

# wait_ready PID: 0 = answers on the socket, 1 = process died, 2 = timed out.
wait_ready() {
    local pid=$1 deadline=$(($(now_s) + START_TIMEOUT))
    while (($(now_s) < deadline)); do
        sql_sock 'SELECT 1' >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.5
    done
    return 2
}

configure_private() {
    open_root "$SOCKET" "$DB_NAME"
    ensure_db 127.0.0.1 "$1" root "" "$DB_NAME" ||
        die "private instance answers on its socket but not over TCP port $1"
}

ensure_private() {
    lock_dev_dir
    local pid port url rc

    if pid=$(private_pid); then
        port=$(<"$PORT_FILE")
        if ! sql_sock 'SELECT 1' >/dev/null 2>&1; then
            log "private instance (pid $pid) is up but not answering yet; waiting"
            rc=0
            wait_ready "$pid" || rc=$?
            ((rc == 0)) || die "private instance (pid $pid) does not answer; see $ERR_LOG," \
                "or run: $0 stop"
        fi
        log "reusing private MariaDB (pid $pid) on port $port"
        configure_private "$port"
        url=$(private_url "$port")
        printf '%s\n' "$url" >"$URL_FILE"
        printf '%s\n' "$url"
        return 0
    fi
    rm -f "$PID_FILE" "$URL_FILE"

    find_client
    if [[ -z $CLIENT ]] || ! server_bin >/dev/null || ! install_db_bin >/dev/null; then
        apt_install mariadb-server mariadb-client
        find_client
        [[ -n $CLIENT ]] || die "no mariadb client after installing mariadb-client"
    fi
    init_datadir

    port=$FIRST_PORT
    local attempt
    for attempt in 1 2 3 4 5; do
        while port_in_use "$port"; do
            port=$((port + 1))
            ((port < FIRST_PORT + 200)) || die "no free TCP port in $FIRST_PORT..$port"
        done
        log "starting private MariaDB on 127.0.0.1:$port (datadir $DATA_DIR)"
        launch "$port"
        rc=0
        wait_ready "$LAUNCHED_PID" || rc=$?
        if ((rc == 0)); then
            break
        elif ((rc == 1)) && grep -qiE 'address already in use|another mysqld server running' "$ERR_LOG"; then
            log "port $port was taken meanwhile (attempt $attempt); trying the next one"
            port=$((port + 1))
            continue
        fi
        tail -n 40 "$ERR_LOG" >&2 || true
        if ((rc == 2)); then
            kill -TERM "$LAUNCHED_PID" 2>/dev/null || true
            die "private MariaDB did not answer within ${START_TIMEOUT}s; log: $ERR_LOG"
        fi
        die "private MariaDB exited during start-up; log: $ERR_LOG"
    done
    ((rc == 0)) || die "could not find a port to start the private MariaDB on"

    configure_private "$port"
    url=$(private_url "$port")
    printf '%s\n' "$url" >"$URL_FILE"
    log "private MariaDB ready (pid $(<"$PID_FILE")); stop it with: scripts/dev-db.sh stop"
    printf '%s\n' "$url"
}

stop_private() {
    lock_dev_dir
    local pid
    if ! pid=$(private_pid); then
        log "private MariaDB is not running"
        rm -f "$PID_FILE" "$URL_FILE"
        return 0
    fi
    log "stopping private MariaDB (pid $pid)"
    stop_mariadbd "$pid" "private MariaDB"
    rm -f "$PID_FILE" "$URL_FILE"
    log "stopped"
}

status_private() {
    local pid
    if pid=$(private_pid); then
        log "private MariaDB running (pid $pid)"
        private_url "$(<"$PORT_FILE")"
    else
        log "private MariaDB is not running"
        return 1
    fi
}

main() {
    local action=ensure force="${RINGPIPE_FORCE_PRIVATE_DB:-0}"
    while (($#)); do
        case $1 in
        --force-private) force=1 ;;
        stop | status | start) action=$1 ;;
        -h | --help) usage; return 0 ;;
        *) usage; die "unknown argument: $1" ;;
        esac
        shift
    done
    case $action in
    stop) stop_private; return ;;
    status) status_private; return ;;
    esac

    find_client
    if [[ $force != 1 && $force != true ]]; then
        if [[ -n ${RINGPIPE_MYSQL_URL:-} ]]; then
            if check_url "$RINGPIPE_MYSQL_URL"; then
                log "using RINGPIPE_MYSQL_URL"
                printf '%s\n' "$RINGPIPE_MYSQL_URL"
                return 0
            fi
            warn "RINGPIPE_MYSQL_URL is set but does not answer; trying other options"
        fi
        if ensure_db "$SYSTEM_HOST" "$SYSTEM_PORT" root "" "$DB_NAME"; then
            log "using the MariaDB on $SYSTEM_HOST:$SYSTEM_PORT"
            printf 'mysql://root@%s:%s/%s\n' "$SYSTEM_HOST" "$SYSTEM_PORT" "$DB_NAME"
            return 0
        fi
        log "no usable server on $SYSTEM_HOST:$SYSTEM_PORT; using a private instance"
    else
        log "--force-private: using a private instance"
    fi
    ensure_private
}

main "$@"
