#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on this machine, for the cluster tests.
#
# Usage:
#   scripts/galera.sh start        start the cluster, or the nodes of it that are down
#                                  (a running cluster is reused); prints the URLs
#   scripts/galera.sh urls         one mysql://root@127.0.0.1:PORT/test URL per node, one a
#                                  line (exit 1 unless all three nodes run)
#   scripts/galera.sh status       every node's pid, port and Galera state, on stderr
#   scripts/galera.sh stop         stop every node cleanly (node 3, 2, then 1)
#   scripts/galera.sh stop-node I  stop node I (1-3) cleanly; `start` brings it back
#
# The nodes are private servers (--no-defaults) with data under <repo>/target/galera/;
# the system MariaDB and its port 3306 are never touched. galera-4, mariadb-server and
# mariadb-client are installed with apt-get when missing (no service is started).
#
# No state transfer is needed to build the cluster: node 1 is initialised and bootstrapped
# alone, stopped cleanly (its grastate.dat then holds uuid:seqno), and its data directory is
# copied to nodes 2 and 3, which join with the same state. A node that was stopped while the
# others kept writing rejoins by IST from the donor's gcache (sized by
# RINGPIPE_GALERA_GCACHE). A full state transfer (SST) uses mysqldump over the nodes' SQL
# ports: no files are written by another user (rsync SST runs its daemon as `nobody` when the
# server runs as root, and would need data directories that user can write).
#
# Knobs: RINGPIPE_GALERA_PORT (first SQL port, default 3311; Galera and IST ports are 4571..
#        and 4581.., all shifted together by steps of 20 until nine free ports are found:
#        another checkout's cluster takes the next set, whose ports never meet this one's,
#        not even the IST ports that listen only during a transfer),
#        RINGPIPE_GALERA_GCACHE (default 512M), RINGPIPE_GALERA_START_TIMEOUT (seconds a
#        node may take to be synced, default 180).
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/mariadb.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/mariadb.sh"

readonly NODES=(1 2 3)
readonly DB_NAME=test
readonly CLUSTER_NAME=ringpipe-galera
readonly GALERA_DIR="$RINGPIPE_ROOT/target/galera"
readonly PORTS_FILE="$GALERA_DIR/ports"
readonly CREATED="$GALERA_DIR/created"
readonly LOCK_FILE="$GALERA_DIR/lock"
readonly FIRST_SQL_PORT="${RINGPIPE_GALERA_PORT:-3311}"
readonly GCACHE="${RINGPIPE_GALERA_GCACHE:-512M}"
readonly START_TIMEOUT="${RINGPIPE_GALERA_START_TIMEOUT:-180}"

# Port bases: node I listens on SQL_BASE+I, GCOMM_BASE+I (replication), IST_BASE+I.
SQL_BASE="" GCOMM_BASE="" IST_BASE=""

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; }

node_dir() { printf '%s/node%s\n' "$GALERA_DIR" "$1"; }
data_dir() { printf '%s/data\n' "$(node_dir "$1")"; }
pid_file() { printf '%s/mariadbd.pid\n' "$(node_dir "$1")"; }
err_log() { printf '%s/mariadbd.err\n' "$(node_dir "$1")"; }
sock() { socket_path "$(node_dir "$1")" mariadbd; }
node_pid() { pid_of "$(pid_file "$1")" "$(data_dir "$1")"; }
node_sql() { sock_sql "$(sock "$1")" "$2"; }
url() { printf 'mysql://root@127.0.0.1:%s/%s\n' "$((SQL_BASE + $1))" "$DB_NAME"; }

# status_var I NAME: a global status variable of node I.
status_var() { node_sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2; }

# grastate I KEY: a field of node I's grastate.dat (uuid, seqno, safe_to_bootstrap).
grastate() {
    local file
    file="$(data_dir "$1")/grastate.dat"
    [[ -f $file ]] || return 0
    awk -v key="$2:" '$1 == key { print $2 }' "$file"
}

lock_dir() {
    mkdir -p "$GALERA_DIR"
    exec 9>"$LOCK_FILE"
    if have flock && ! flock -w 600 9; then
        die "timed out waiting for $LOCK_FILE (another galera.sh running?)"
    fi
}

provider() {
    local lib
    for lib in /usr/lib/galera/libgalera_smm.so /usr/lib/libgalera_smm.so \
        /usr/lib/galera-4/libgalera_smm.so /usr/lib64/galera-4/libgalera_smm.so; do
        [[ -f $lib ]] && { printf '%s\n' "$lib"; return 0; }
    done
    return 1
}

ensure_packages() {
    if ! server_bin >/dev/null || ! install_db_bin >/dev/null || ! provider >/dev/null ||
        ! have mariadb || ! have mariadb-dump || ! have wsrep_sst_mysqldump; then
        apt_install galera-4 mariadb-server mariadb-client
    fi
    provider >/dev/null || die "no libgalera_smm.so after installing galera-4"
}

# load_ports: the recorded ports when a node runs or all are free, else the
# first free set from RINGPIPE_GALERA_PORT on, shifted by steps of 20.
load_ports() {
    local i running="" shift_by port free
    if [[ -f $PORTS_FILE ]]; then
        read -r SQL_BASE GCOMM_BASE IST_BASE <"$PORTS_FILE"
        for i in "${NODES[@]}"; do node_pid "$i" >/dev/null && running=1; done
        [[ -n $running ]] && return 0
    fi
    for ((shift_by = 0; shift_by < 400; shift_by += 20)); do
        if [[ -z $SQL_BASE || $shift_by -gt 0 ]]; then
            SQL_BASE=$((FIRST_SQL_PORT - 1 + shift_by))
            GCOMM_BASE=$((4570 + shift_by))
            IST_BASE=$((4580 + shift_by))
        fi
        free=1
        for i in "${NODES[@]}"; do
            for port in $((SQL_BASE + i)) $((GCOMM_BASE + i)) $((IST_BASE + i)); do
                if port_in_use "$port"; then free=""; fi
            done
        done
        if [[ -n $free ]]; then
            printf '%s %s %s\n' "$SQL_BASE" "$GCOMM_BASE" "$IST_BASE" >"$PORTS_FILE"
            return 0
        fi
        log "ports from $((SQL_BASE + 1)) / $((GCOMM_BASE + 1)) / $((IST_BASE + 1)) are taken; shifting by 20"
    done
    die "no nine free ports found from $FIRST_SQL_PORT on"
}

# node_args I: node I's server options (the data directory first: pid_of
# finds a node by it).
node_args() {
    local i=$1 gcomm="gcomm://" j sep=""
    for j in "${NODES[@]}"; do
        gcomm+="${sep}127.0.0.1:$((GCOMM_BASE + j))"
        sep=,
    done
    ARGS=(--no-defaults --datadir="$(data_dir "$i")" --socket="$(sock "$i")"
        --port="$((SQL_BASE + i))" --bind-address=127.0.0.1 --skip-name-resolve
        --pid-file="$(pid_file "$i")" --log-error="$(err_log "$i")"
        --local-infile=1 --max-allowed-packet=64M --innodb-buffer-pool-size=256M
        --innodb-flush-log-at-trx-commit=2 --skip-log-bin --binlog-format=ROW
        --default-storage-engine=InnoDB --innodb-autoinc-lock-mode=2
        --wsrep-on=ON --wsrep-provider="$(provider)" --wsrep-cluster-name="$CLUSTER_NAME"
        --wsrep-cluster-address="$gcomm" --wsrep-node-name="node$i"
        --wsrep-node-address="127.0.0.1:$((GCOMM_BASE + i))"
        --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$((GCOMM_BASE + i));ist.recv_addr=127.0.0.1:$((IST_BASE + i));gcache.size=$GCACHE;gcache.recover=yes"
        --wsrep-slave-threads=2
        --wsrep-sst-method=mysqldump --wsrep-sst-auth=root:
        --wsrep-sst-receive-address="127.0.0.1:$((SQL_BASE + i))")
}

# recovered_position I: uuid:seqno of node I's last commit, read from InnoDB
# (after a crash grastate.dat says seqno -1).
recovered_position() {
    local i=$1 out pos
    out="$(node_dir "$i")/recover.log"
    node_args "$i"
    : >"$out"
    user_args
    "$(server_bin)" "${ARGS[@]}" --log-error="$out" --skip-networking --wsrep-recover \
        "${USER_ARGS[@]}" </dev/null >>"$out" 2>&1 || true
    pos=$(grep -o 'Recovered position: [^ ]*' "$out" | tail -n 1 | cut -d' ' -f3)
    [[ $pos == *:* ]] || die "node $i: --wsrep-recover found no position; see $out"
    printf '%s\n' "$pos"
}

# launch_node I [OPTION...]: start node I in the background; sets LAUNCHED_PID.
launch_node() {
    local i=$1 pos
    shift
    mkdir -p "$(node_dir "$i")"
    rm -f "$(pid_file "$i")"
    node_args "$i"
    if [[ $(grastate "$i" seqno) == -1 ]]; then
        pos=$(recovered_position "$i")
        log "node $i was not stopped cleanly; starting from its recovered position $pos"
        ARGS+=(--wsrep-start-position="$pos")
    fi
    log "starting node $i on 127.0.0.1:$((SQL_BASE + i)) $*"
    launch_mariadbd "$(node_dir "$i")/mariadbd.out" "${ARGS[@]}" "$@"
}

# wait_synced I PID: node I answers and is Synced with the cluster.
wait_synced() {
    local i=$1 pid=$2 deadline=$(($(now_s) + START_TIMEOUT)) state=""
    while (($(now_s) < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 40 "$(err_log "$i")" >&2 || true
            die "node $i exited during start-up; log: $(err_log "$i")"
        fi
        state=$(status_var "$i" wsrep_local_state_comment 2>/dev/null) || state=""
        if [[ $state == Synced && $(status_var "$i" wsrep_ready 2>/dev/null) == ON ]]; then
            log "node $i is synced (pid $pid, cluster size $(status_var "$i" wsrep_cluster_size))"
            return 0
        fi
        sleep 0.5
    done
    tail -n 40 "$(err_log "$i")" >&2 || true
    die "node $i not synced within ${START_TIMEOUT}s (state: ${state:-no answer}); log: $(err_log "$i")"
}

# create: node 1 initialised and bootstrapped alone, stopped cleanly, its
# data directory copied to the other nodes (same state: no transfer).
create() {
    local i pid data1
    data1=$(data_dir 1)
    log "creating the cluster under $GALERA_DIR"
    mkdir -p "$(node_dir 1)"
    mariadb_init_datadir "$data1" "$(node_dir 1)/install-db.log"
    launch_node 1 --wsrep-new-cluster
    pid=$LAUNCHED_PID
    wait_synced 1 "$pid"
    open_root "$(sock 1)" "$DB_NAME"
    stop_mariadbd "$pid" "node 1"
    [[ $(grastate 1 seqno) =~ ^[0-9]+$ && $(grastate 1 safe_to_bootstrap) == 1 ]] ||
        die "node 1 did not record its state on shutdown; see $(err_log 1)"
    for i in "${NODES[@]:1}"; do
        rm -rf "$(data_dir "$i")"
        mkdir -p "$(node_dir "$i")"
        cp -a "$data1" "$(data_dir "$i")"
        rm -f "$(data_dir "$i")/galera.cache" "$(data_dir "$i")/gvwstate.dat"
        sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 0/' "$(data_dir "$i")/grastate.dat"
    done
    touch "$CREATED"
}

# bootstrap_node: the node to start a new primary component from: the one
# grastate.dat marks safe, else (after a crash) the most advanced one.
bootstrap_node() {
    local i best=1 best_seqno=-2 seqno
    for i in "${NODES[@]}"; do
        [[ $(grastate "$i" safe_to_bootstrap) == 1 ]] && { printf '%s\n' "$i"; return 0; }
    done
    for i in "${NODES[@]}"; do
        seqno=$(grastate "$i" seqno)
        [[ $seqno == -1 ]] && seqno=$(recovered_position "$i" | cut -d: -f2)
        if ((seqno > best_seqno)); then best=$i best_seqno=$seqno; fi
    done
    warn "no node is marked safe to bootstrap (a crash?); bootstrapping node $best (seqno $best_seqno)"
    sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 1/' "$(data_dir "$best")/grastate.dat"
    printf '%s\n' "$best"
}

start() {
    lock_dir
    ensure_packages
    load_ports
    local i pid primary="" first down=() pids=()
    [[ -f $CREATED ]] || create
    for i in "${NODES[@]}"; do
        if pid=$(node_pid "$i"); then
            [[ $(status_var "$i" wsrep_cluster_status 2>/dev/null) == Primary ]] && primary=1
        else
            down+=("$i")
        fi
    done
    if ((${#down[@]} == ${#NODES[@]})); then
        first=$(bootstrap_node)
        launch_node "$first" --wsrep-new-cluster
        wait_synced "$first" "$LAUNCHED_PID"
        pids[first]=$LAUNCHED_PID
        primary=1
    fi
    [[ -n $primary ]] || die "the running nodes are not a primary component; run: $0 stop; $0 start"
    for i in "${down[@]}"; do
        [[ -n ${pids[i]:-} ]] && continue
        launch_node "$i"
        pids[i]=$LAUNCHED_PID
    done
    for i in "${NODES[@]}"; do
        if [[ -z ${pids[i]:-} ]]; then
            pids[i]=$(node_pid "$i") || die "node $i stopped meanwhile"
        fi
        wait_synced "$i" "${pids[i]}"
    done
    for i in "${NODES[@]}"; do url "$i"; done
}

stop_node() {
    local i=$1 pid
    if pid=$(node_pid "$i"); then
        log "stopping node $i (pid $pid)"
        stop_mariadbd "$pid" "node $i"
    fi
    rm -f "$(pid_file "$i")"
}

stop() {
    lock_dir
    local i
    # The last node to leave is marked safe to bootstrap the next start.
    for ((i = ${#NODES[@]}; i >= 1; i--)); do stop_node "$i"; done
    log "stopped"
}

urls() {
    local i
    [[ -f $PORTS_FILE ]] || die "the cluster was never started; run: $0 start"
    read -r SQL_BASE GCOMM_BASE IST_BASE <"$PORTS_FILE"
    for i in "${NODES[@]}"; do
        node_pid "$i" >/dev/null || die "node $i is not running; run: $0 start"
    done
    for i in "${NODES[@]}"; do url "$i"; done
}

status() {
    local i pid
    [[ -f $PORTS_FILE ]] || die "the cluster was never started"
    read -r SQL_BASE GCOMM_BASE IST_BASE <"$PORTS_FILE"
    for i in "${NODES[@]}"; do
        if pid=$(node_pid "$i"); then
            log "node $i: pid $pid, port $((SQL_BASE + i)), $(status_var "$i" wsrep_local_state_comment 2>/dev/null || echo '?')," \
                "cluster $(status_var "$i" wsrep_cluster_status 2>/dev/null || echo '?') of $(status_var "$i" wsrep_cluster_size 2>/dev/null || echo '?')"
        else
            log "node $i: down (grastate seqno $(grastate "$i" seqno))"
        fi
    done
}

main() {
    case ${1:-} in
    start) start ;;
    stop) stop ;;
    urls) urls ;;
    status) status ;;
    stop-node)
        [[ ${2:-} =~ ^[1-3]$ ]] || { usage; die "stop-node needs a node number, 1 to 3"; }
        lock_dir
        [[ -f $PORTS_FILE ]] || die "the cluster was never started"
        read -r SQL_BASE GCOMM_BASE IST_BASE <"$PORTS_FILE"
        stop_node "$2"
        ;;
    -h | --help) usage ;;
    *) usage; die "unknown command: ${1:-(none)}" ;;
    esac
}

main "$@"
