# shellcheck shell=bash
# Shared helpers for scripts/*.sh and .ci/run. Source it; do not execute it.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
#
# Provides: RINGPIPE_ROOT, log, warn, die, have, now_s, as_root, parse_mysql_url,
# db_sql, db_server_pid, db_socket, db_sql_socket, proc_cpu_ticks, json_field,
# at_once, server_files.

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

# forget_checkpoints TABLE...: deletes ringpipe's checkpoint rows of these
# tables (a script's own fixed names) from the database db_sql reaches, when
# it has a checkpoint table: a benchmark's imports leave none behind.
forget_checkpoints() {
    local table
    [[ -n $(db_sql -e "SELECT 1 FROM information_schema.tables
                       WHERE table_schema = DATABASE() AND table_name = 'ringpipe_checkpoint'") ]] ||
        return 0
    for table in "$@"; do
        db_sql -e "DELETE FROM ringpipe_checkpoint WHERE target_table = '$table'" || return
    done
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

# at_once FN ARG...: `FN ARG` for every ARG, all at the same time; fails
# when any fails (all are waited for).
at_once() {
    local fn=$1 arg pid rc=0
    local -a pids=()
    shift
    for arg; do
        "$fn" "$arg" & pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || rc=$?
    done
    return "$rc"
}

# bench_parts: the parts of the benchmarks' N-way contenders,
# RINGPIPE_BENCH_PARTS or the CPUs (nproc); dies unless it is 1 to 99.
bench_parts() {
    local parts="${RINGPIPE_BENCH_PARTS:-$(nproc)}"
    [[ "$parts" =~ ^[1-9][0-9]?$ ]] ||
        die "RINGPIPE_BENCH_PARTS must be a number of parts from 1 to 99, not '$parts'"
    printf '%s\n' "$parts"
}

# server_files READS DIR FILE...: sets the array SERVER_FILES to the paths at
# which a database server on this machine reads FILE... itself (LOAD DATA
# INFILE, COPY FROM a file), as its own OS user. READS PATH is the caller's
# probe: the server reads the one-line file PATH through the statement the
# benchmark runs and prints the line. With DIR empty the files stay where
# they are if the server reads a probe file made beside them with the first
# FILE's mode; else, or with DIR (a directory the server is confined to),
# they are copied once into a new directory under DIR (/tmp when empty;
# mktemp -d, mode 755, files 644), named in SERVER_COPIES for the caller's
# exit trap to remove. Dies when the server cannot read them there either.
server_files() {
    local reads=$1 base=$2 dir said f
    shift 2
    dir="$(cd "$(dirname "$1")" && pwd -P)"
    if [[ -z "$base" ]]; then
        if said="$(server_reads_in "$reads" "$dir" "$1")"; then
            SERVER_FILES=()
            for f; do SERVER_FILES+=("$dir/$(basename "$f")"); done
            return 0
        fi
        log "the server cannot read files in $dir ($said): copying them (untimed) to a private directory under /tmp"
        base=/tmp
    fi
    SERVER_COPIES="$(mktemp -d "$base/ringpipe-bench.XXXXXX")" ||
        die "cannot make a directory under $base for the server to read the files from"
    chmod 755 "$SERVER_COPIES"
    cp -- "$@" "$SERVER_COPIES/"
    chmod 644 "$SERVER_COPIES"/*
    said="$(server_reads_in "$reads" "$SERVER_COPIES" "$1")" ||
        die "the server cannot read its copies in $SERVER_COPIES ($said); to read a file itself it must run on this machine and see that directory (or leave these contenders out with RINGPIPE_BENCH_ONLY)"
    SERVER_FILES=()
    for f; do SERVER_FILES+=("$SERVER_COPIES/$(basename "$f")"); done
    log "the server reads its files in $SERVER_COPIES"
}

# server_reads_in READS DIR MODEL: does the server read back a probe file
# made in DIR with MODEL's mode? When not, prints what it said.
server_reads_in() {
    local probe="$2/ringpipe-probe.$$" token="ringpipe probe $$ $RANDOM" got
    printf '%s\n' "$token" > "$probe"
    chmod --reference="$3" "$probe"
    got="$("$1" "$probe" 2>&1)" || true
    rm -f -- "$probe"
    [[ "$got" == "$token" ]] && return 0
    # The error line alone when there is one (clients echo the statement too).
    grep -m 1 ERROR <<< "$got" || printf '%s\n' "${got:-it read nothing}" | paste -sd ' ' -
    return 1
}
