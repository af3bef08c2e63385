# shellcheck shell=bash
# Helpers for scripts that run private MariaDB servers (dev-db.sh, galera.sh).
# Source it after lib/common.sh; do not execute it.
#
# Provides: find_bin, server_bin, install_db_bin, apt_install, port_in_use,
# socket_path, mariadbd_serves, pid_of, mariadb_init_datadir, launch_mariadbd,
# sock_sql, open_root, stop_mariadbd.

# find_bin CANDIDATE...: the first executable among the candidates (names on
# PATH or absolute paths).
find_bin() {
    local c
    for c in "$@"; do
        if [[ $c == /* ]]; then
            [[ -x $c ]] && { printf '%s\n' "$c"; return 0; }
        elif have "$c"; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

server_bin() { find_bin mariadbd /usr/sbin/mariadbd mysqld /usr/sbin/mysqld; }
install_db_bin() { find_bin mariadb-install-db /usr/bin/mariadb-install-db mysql_install_db /usr/bin/mysql_install_db; }

# apt_install PKG...: install the packages with apt-get (as root), never
# starting the services their maintainer scripts would start.
apt_install() {
    local policy=/usr/sbin/policy-rc.d added_policy="" rc=0
    have apt-get || die "$* not installed and apt-get is unavailable; install them by hand"
    log "installing $* with apt-get (no service is started)"
    # Deny service starts from maintainer scripts while we install.
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
        as_root chmod 755 "$policy"
        added_policy=1
    fi
    {
        local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300
            -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
        if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
            as_root "${apt[@]}" update >&2 </dev/null || true
        fi
        if ! as_root "${apt[@]}" install --no-install-recommends "$@" >&2 </dev/null; then
            log "install failed; refreshing package lists and retrying"
            as_root "${apt[@]}" update >&2 </dev/null &&
                as_root "${apt[@]}" install --no-install-recommends "$@" >&2 </dev/null
        fi
    } || rc=$?
    [[ -n $added_policy ]] && as_root rm -f "$policy"
    ((rc == 0)) || die "apt-get install $* failed (exit $rc)"
}

# port_in_use PORT: does anything accept TCP connections on 127.0.0.1:PORT?
# shellcheck disable=SC2016 # $0 expands in the inner bash
port_in_use() { timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null; }

# socket_path DIR NAME: DIR/NAME.sock, or a path under $TMPDIR when that
# would pass the ~107-byte limit of Unix socket paths (deep checkouts).
socket_path() {
    if ((${#1} + ${#2} + 6 <= 100)); then
        printf '%s/%s.sock\n' "$1" "$2"
    else
        printf '%s/ringpipe-%s-%s.sock\n' "${TMPDIR:-/tmp}" "$2" "$(cksum <<<"$1" | cut -d' ' -f1)"
    fi
}

# mariadbd_serves PID DATADIR: is PID a live server of DATADIR? (Guards
# against ever touching the system server, or a process that reused a
# stale pid.)
mariadbd_serves() {
    local pid=$1 cmdline
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [[ $cmdline == *"--datadir=$2 "* ]]
}

# pid_of PIDFILE DATADIR: the pid in PIDFILE when it is a server of DATADIR.
pid_of() {
    local pid
    [[ -f $1 ]] || return 1
    pid=$(<"$1")
    mariadbd_serves "$pid" "$2" || return 1
    printf '%s\n' "$pid"
}

# user_args: --user=<me> when running as root (mariadbd refuses root
# otherwise); nothing else. Sets the array USER_ARGS.
user_args() {
    USER_ARGS=()
    [[ $(id -u) -eq 0 ]] && USER_ARGS=(--user="$(id -un)")
    return 0
}

# mariadb_init_datadir DATADIR LOG: a new system database in DATADIR
# (emptied first), root without password; the installer's output in LOG.
mariadb_init_datadir() {
    local datadir=$1 install_log=$2 install_db
    install_db=$(install_db_bin) || die "mariadb-install-db not found"
    user_args
    log "initialising data directory $datadir"
    rm -rf "$datadir"
    mkdir -p "$datadir"
    if ! "$install_db" --no-defaults --auth-root-authentication-method=normal \
        --skip-name-resolve --datadir="$datadir" "${USER_ARGS[@]}" \
        >"$install_log" 2>&1 </dev/null; then
        tail -n 30 "$install_log" >&2
        die "mariadb-install-db failed; full log: $install_log"
    fi
}

# launch_mariadbd OUTLOG ARG...: start the server detached from this script
# (setsid+nohup: it outlives the script and its terminal); sets LAUNCHED_PID.
# Every fd is redirected (and a lock on fd 9 closed) so that callers reading
# our stdout see EOF when we exit.
launch_mariadbd() {
    local out=$1 server
    shift
    server=$(server_bin) || die "mariadbd not found"
    user_args
    setsid nohup "$server" "$@" "${USER_ARGS[@]}" </dev/null >>"$out" 2>&1 9>&- &
    # shellcheck disable=SC2034 # read by the callers
    LAUNCHED_PID=$!
}

# sock_sql SOCKET SQL: run SQL as root over the Unix socket SOCKET.
sock_sql() {
    MYSQL_PWD="" "${CLIENT:-mariadb}" --no-defaults --protocol=SOCKET --connect-timeout=5 \
        --batch --skip-column-names -S "$1" -uroot -e "$2"
}

# open_root SOCKET DB: DB exists, no anonymous accounts (they shadow
# user@% accounts), root without password from localhost, 127.0.0.1, ::1.
open_root() {
    local sock=$1 db=$2 anon h
    sock_sql "$sock" "CREATE DATABASE IF NOT EXISTS \`$db\`" >&2
    while IFS= read -r anon; do
        sock_sql "$sock" "DROP USER IF EXISTS ''@'$anon'" >&2
    done < <(sock_sql "$sock" "SELECT Host FROM mysql.user WHERE User = ''")
    for h in localhost 127.0.0.1 ::1; do
        sock_sql "$sock" "CREATE USER IF NOT EXISTS 'root'@'$h';
                  ALTER USER 'root'@'$h' IDENTIFIED BY '';
                  GRANT ALL PRIVILEGES ON *.* TO 'root'@'$h' WITH GRANT OPTION;" >&2
    done
}

# stop_mariadbd PID [NAME]: clean shutdown (SIGTERM), waiting up to 120 s,
# then SIGKILL.
stop_mariadbd() {
    local pid=$1 name=${2:-mariadbd} i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 240; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.5
    done
    warn "$name (pid $pid) ignored SIGTERM for 120 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}
