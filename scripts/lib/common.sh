# shellcheck shell=bash
# Shared helpers for scripts/*.sh and .ci/run. Source it; do not execute it.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
#
# Provides: RINGPIPE_ROOT, log, warn, die, have, now_s, as_root, parse_mysql_url,
# db_sql, db_server_pid, db_socket, db_sql_socket, proc_cpu_ticks, json_field.

# Absolute path of the repository root (this file lives in <root>/scripts/lib).
RINGPIPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
export RINGPIPE_ROOT

# Name used as the prefix of every diagnostic line.
RINGPIPE_LOG_TAG="${RINGPIPE_LOG_TAG:-$(basename "$0")}"

# All diagnostics go to stderr so that stdout stays machine-readable.
log() { printf '[%s] %s\n' "$RINGPIPE_LOG_TAG" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "$RINGPIPE_LOG_TAG" "$*" >&2; }
die() {
    printf '[%s] ERROR: %s\n' "$RINGPIPE_LOG_TAG" "$*" >&2
    exit 1
}

# have CMD: is CMD on PATH?
have() { command -v "$1" >/dev/null 2>&1; }

# Seconds since the epoch (bash builtin, no fork).
now_s() { printf '%(%s)T\n' -1; }

# as_root CMD...: run CMD as root (directly, or via non-interactive sudo).
as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif have sudo; then
        sudo -n "$@"
    else
        die "need root to run: $*  (no sudo available)"
    fi
}

# parse_mysql_url URL: sets DB_USER, DB_HOST, DB_PORT (default 3306) and DB_NAME
# from mysql://user[:password]@host[:port]/db[?params], for the mariadb client.
# The password is not extracted: pass it through MYSQL_PWD.
parse_mysql_url() {
    local rest="${1#mysql://}" hostport
    DB_USER="${rest%%@*}"
    DB_USER="${DB_USER%%:*}"
    hostport="${rest#*@}"
    hostport="${hostport%%/*}"
    DB_HOST="${hostport%%:*}"
    DB_PORT="${hostport##*:}"
    [[ "$DB_PORT" == "$hostport" ]] && DB_PORT=3306
    DB_NAME="${rest##*/}"
    DB_NAME="${DB_NAME%%\?*}"
    export DB_USER DB_HOST DB_PORT DB_NAME
}

# db_sql ARGS...: the mariadb client on the server parse_mysql_url described,
# in batch mode without column names, LOCAL INFILE allowed.
db_sql() {
    mariadb --no-defaults --local-infile=1 --protocol=TCP -h "$DB_HOST" -P "$DB_PORT" \
        -u "$DB_USER" -N -B "$DB_NAME" "$@"
}

# db_server_pid: the server's process id when it runs on this machine
# (its /proc entry then gives its CPU time), else nothing.
db_server_pid() {
    db_sql -e 'SELECT @@pid_file' | xargs cat 2>/dev/null || pgrep -xo mariadbd || true
}

# db_socket: the server's Unix socket when the URL's host is this machine and
# the socket is reachable here (ringpipe's wire client then moves to it), else
# nothing: the transport a fair baseline must use too.
db_socket() {
    local sock
    case "$DB_HOST" in 127.*|localhost|::1) ;; *) return 0 ;; esac
    sock="$(db_sql -e 'SELECT @@socket')"
    [[ -S "$sock" ]] && printf '%s\n' "$sock"
    return 0
}

# db_sql_socket SOCKET ARGS...: db_sql over the Unix socket SOCKET.
db_sql_socket() {
    local sock="$1"; shift
    mariadb --no-defaults --local-infile=1 --socket="$sock" \
        -u "$DB_USER" -N -B "$DB_NAME" "$@"
}

# proc_cpu_ticks PID: utime + stime of PID in clock ticks (getconf CLK_TCK),
# or nothing when its /proc entry is not readable here.
proc_cpu_ticks() {
    [[ -n "$1" && -r "/proc/$1/stat" ]] || return 0
    # The command name (field 2) may hold spaces: count from after its ')'.
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# json_field FILE FIELD: a number of an import's --json report, a one-line
# object whose other numbers sit at the top level too (0 if FIELD is absent).
json_field() {
    local value
    value=$(grep -o "\"$2\":[-0-9.eE+]*" "$1" | head -n 1 | cut -d: -f2)
    printf '%s\n' "${value:-0}"
}
