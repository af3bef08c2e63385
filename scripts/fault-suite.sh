#!/usr/bin/env bash
# The whole fault suite, from one command.
#
#   scripts/fault-suite.sh                  fast part (CI runs it too) + long part on both servers
#   scripts/fault-suite.sh --fast           only the automated tests
#   scripts/fault-suite.sh --long [SERVER]  only the long part: mariadb, postgres or both (default)
#
# Fast part: cargo test --test it -- reliability:: resume:: (bad input, bad values,
# KILL CONNECTION ×10, lock contention, statement limits, kill -9 + --resume).
# Long part, against a PRIVATE server that this script stops and starts (MariaDB
# under target/dev-db/, a PostgreSQL cluster under target/dev-pg/):
#   A. kill -9 of the importer at 5 random points of a RINGPIPE_FAULT_ROWS-row
#      import (default 1,000,000), then --resume: table equal to a clean import.
#   B. server restart mid-import: the importer waits (--retry-for) and finishes
#      exactly.
#   C. server down longer than --retry-for: a clear error; --resume finishes.
#   D. every importer connection killed mid-import (KILL CONNECTION,
#      pg_terminate_backend): it reconnects and finishes exactly.
# Each ends with row count and a content check computed by the server (CHECKSUM
# TABLE; md5 of the rows in key order) against a clean import, and each asserts
# that its fault really landed mid-import: rows committed before it fewer than
# the total, the importer's JSON report showing the rewinds and reconnects it took,
# the server's uptime showing the restart. A fault that missed fails the suite.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${RINGPIPE_FAULT_ROWS:-1000000}"
work="target/fault-suite"
mkdir -p "$work"

if [[ "${1:-}" != "--long" ]]; then
    log "fast part: automated fault tests"
    RINGPIPE_TEST_MYSQL_URL="${RINGPIPE_TEST_MYSQL_URL:-$(scripts/dev-db.sh | tail -n 1)}" \
        cargo test --locked --test it -- reliability:: resume::
fi
[[ "${1:-}" == "--fast" ]] && exit 0
case "${2:-both}" in
both) servers=(mariadb postgres) ;;
mariadb | postgres) servers=("$2") ;;
*) die "unknown server ${2}: mariadb, postgres or both" ;;
esac

log "building ringpipe (release; about 5 minutes the first time)"
cargo build --release --locked --bin ringpipe
bin=target/release/ringpipe
xml="$work/products-$rows.xml"
[[ -s "$xml" ]] || "$bin" gen --rows "$rows" --out "$xml"

# What each server's scenarios need: start, stop, one query's answer (q), a
# fresh catalogue table, a content check, its uptime, and killing every
# importer connection (prints how many).
use_mariadb() {
    url="$(scripts/dev-db.sh --force-private | tail -n 1)"
    parse_mysql_url "$url"
    port="$DB_PORT"
    srv_stop() { scripts/dev-db.sh stop >/dev/null; }
    srv_start() { RINGPIPE_DEV_DB_PORT="$port" scripts/dev-db.sh --force-private >/dev/null; }
    q() { db_sql -e "$1"; }
    fresh() { { echo "DROP TABLE IF EXISTS \`$1\`;"; "$bin" gen --ddl "$1"; } | db_sql; }
    checksum() { db_sql -e "CHECKSUM TABLE \`$1\`" | cut -f2; }
    uptime_s() { q "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'"; }
    kill_importers() {
        local ids id n=0
        ids="$(q "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE() AND COMMAND <> 'Daemon'")"
        for id in $ids; do db_sql -e "KILL CONNECTION $id" 2>/dev/null && n=$((n + 1)); done
        echo "$n"
    }
}
use_postgres() {
    url="$(scripts/dev-pg.sh --force-private | tail -n 1)"
    srv_stop() { scripts/dev-pg.sh stop 2>/dev/null; }
    srv_start() { scripts/dev-pg.sh --force-private >/dev/null; }
    q() { psql "$url" -X -v ON_ERROR_STOP=1 -Atq -c "$1"; }
    fresh() {
        q "SET client_min_messages = warning; DROP TABLE IF EXISTS \"$1\"" >/dev/null
        q "$("$bin" gen --ddl "$1" --dialect postgres)" >/dev/null
    }
    checksum() { q "SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY id)), '') FROM \"$1\" t"; }
    uptime_s() { q "SELECT floor(extract(epoch FROM now() - pg_postmaster_start_time()))::bigint"; }
    kill_importers() {
        q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    }
}

import() { "$bin" import "$xml" --url "$url" --row product --shards 2 "$@"; }
count_rows() { q "SELECT COUNT(*) FROM $1"; }
# landed WHAT COMMITTED: the fault hit an import that had not finished.
landed() {
    (( $2 < rows )) || die "$1: the import had committed all $rows rows before the fault: it did not land mid-import"
    log "$1: landed after $2 of $rows rows"
}
# wait_rows PID TABLE N: until TABLE holds N rows (or PID ended), so that faults
# land mid-import whatever the machine's speed.
wait_rows() {
    while kill -0 "$1" 2>/dev/null && (( $(count_rows "$2") < $3 )); do
        sleep 0.1
    done
}
results=()
verdict() { # NAME TABLE SECONDS
    local found sum ok=FAIL
    found="$(count_rows "$2")"
    sum="$(checksum "$2")"
    [[ "$found" == "$rows" && "$sum" == "$reference" ]] && ok=ok
    results+=("| $server | $1 | $rows | $found | $([[ "$sum" == "$reference" ]] && echo yes || echo NO) | $3 s | $ok |")
    log "$server: $1: expected $rows, found $found, content $sum vs $reference: $ok"
}
# seen_fault NAME REPORT: the import's JSON report shows it met the fault: the
# batches it replayed and the connections it opened again.
seen_fault() {
    local rewinds reconnects
    rewinds=$(json_field "$2" rewinds)
    reconnects=$(json_field "$2" reconnects)
    (( rewinds > 0 && reconnects > 0 )) ||
        die "$server: $1: the import's report shows $rewinds rewinds and $reconnects reconnects: it never met the fault"
    log "$server: $1: the import rewound $rewinds batches and reconnected $reconnects times"
}

long_part() {
    server=$1
    log "long part: private $server"
    "use_$server"

    fresh fault_clean
    import --table fault_clean --json > /dev/null
    reference="$(checksum fault_clean)"

    # A. kill -9 at random points, then --resume. The binary runs directly in
    # the background (not through a function, whose subshell would take the kill).
    local i pid target start restart_at flag=()
    fresh fault_kill
    start=$(now_s)
    for i in 1 2 3 4 5; do
        "$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_kill "${flag[@]}" > /dev/null 2>&1 &
        pid=$!
        target=$(( rows * i / 6 - RANDOM % (rows / 12) ))
        wait_rows "$pid" fault_kill "$target"
        kill -9 "$pid" 2>/dev/null || die "$server: kill -9 #$i: the import had already ended"
        wait "$pid" 2>/dev/null || true
        landed "kill -9 #$i" "$(count_rows fault_kill)"
        flag=(--resume)
    done
    import --table fault_kill --resume > /dev/null
    verdict "kill -9 ×5, then --resume" fault_kill "$(($(now_s) - start))"

    # B. server restart mid-import, within --retry-for.
    fresh fault_restart
    start=$(now_s)
    "$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_restart --retry-for 120 --json \
        > "$work/$server-restart.json" 2> "$work/$server-restart.log" &
    pid=$!
    wait_rows "$pid" fault_restart $((rows / 3))
    kill -0 "$pid" 2>/dev/null || die "$server: server restart: the import ended before the restart"
    landed "server restart" "$(count_rows fault_restart)"
    restart_at=$(now_s)
    srv_stop
    sleep 5
    srv_start
    (( $(uptime_s) <= $(now_s) - restart_at )) || die "$server: server restart: the server's uptime shows no restart"
    wait "$pid"
    seen_fault "server restart" "$work/$server-restart.json"
    verdict "server restart mid-import (down 5 s, --retry-for 120)" fault_restart "$(($(now_s) - start))"

    # D. every importer connection killed mid-import: the import reconnects,
    # replays the open batches and finishes exactly.
    fresh fault_killconn
    start=$(now_s)
    "$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_killconn --json \
        > "$work/$server-killconn.json" 2> "$work/$server-killconn.log" &
    pid=$!
    wait_rows "$pid" fault_killconn $((rows / 3))
    kill -0 "$pid" 2>/dev/null || die "$server: connection kill: the import ended before the kill"
    landed "connection kill" "$(count_rows fault_killconn)"
    (( $(kill_importers) > 0 )) || die "$server: connection kill: no importer connection found"
    wait "$pid"
    seen_fault "connection kill" "$work/$server-killconn.json"
    verdict "every importer connection killed" fault_killconn "$(($(now_s) - start))"

    # C. server down longer than --retry-for: clear error, then --resume.
    fresh fault_down
    start=$(now_s)
    "$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_down --retry-for 3 \
        > "$work/$server-down.log" 2>&1 &
    pid=$!
    wait_rows "$pid" fault_down $((rows / 3))
    kill -0 "$pid" 2>/dev/null || die "$server: server down: the import ended before the server stopped"
    srv_stop
    if wait "$pid"; then die "$server: the import survived a server that stayed down past --retry-for"; fi
    log "$server: import stopped with: $(tail -n 1 "$work/$server-down.log")"
    sleep 2
    srv_start
    landed "server down" "$(count_rows fault_down)"
    import --table fault_down --resume --retry-for 120 --json > "$work/$server-down-resume.json"
    (( $(json_field "$work/$server-down-resume.json" rows_skipped) > 0 )) ||
        die "$server: server down: --resume skipped no committed rows"
    verdict "server down past --retry-for, then --resume" fault_down "$(($(now_s) - start))"

    srv_stop
}

for server in "${servers[@]}"; do long_part "$server"; done
printf '%s\n' "| server | scenario | rows expected | rows found | content match | time | result |" \
    "|---|---|---:|---:|---|---:|---|" "${results[@]}" | tee "$work/results.md"
[[ "${results[*]}" != *FAIL* ]]
