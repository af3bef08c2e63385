#!/usr/bin/env bash
# The whole fault suite, from one command.
#
#   scripts/fault-suite.sh            fast part (CI runs it too) + long part
#   scripts/fault-suite.sh --fast     only the automated tests
#   scripts/fault-suite.sh --long     only the long part
#
# Fast part: cargo test --test it -- reliability:: resume:: (bad input, bad values,
# KILL CONNECTION ×10, lock contention, statement limits, kill -9 + --resume).
# Long part, against a PRIVATE MariaDB that this script stops and starts:
#   A. kill -9 of the importer at 5 random points of a RINGPIPE_FAULT_ROWS-row
#      import (default 1,000,000), then --resume: table equal to a clean import.
#   B. server restart mid-import: the importer waits (--retry-for) and finishes
#      exactly.
#   C. server down longer than --retry-for: a clear error; --resume finishes.
#   D. KILL CONNECTION of the importer's connections mid-import: it reconnects
#      and finishes exactly.
# Each ends with row count and CHECKSUM TABLE against a clean import, and each
# asserts that its fault really landed mid-import: rows committed before it
# fewer than the total, the importer's JSON report showing the reconnect or
# rewind it took, the server's uptime showing the restart. A fault that missed
# fails the suite.
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

log "long part: private MariaDB"
url="$(scripts/dev-db.sh --force-private | tail -n 1)"
parse_mysql_url "$url"
port="$DB_PORT"
restart_db() { scripts/dev-db.sh stop >/dev/null; sleep "$1"; RINGPIPE_DEV_DB_PORT="$port" scripts/dev-db.sh --force-private >/dev/null; }

log "building ringpipe (release; about 5 minutes the first time)"
cargo build --release --locked --bin ringpipe
bin=target/release/ringpipe
xml="$work/products-$rows.xml"
[[ -s "$xml" ]] || "$bin" gen --rows "$rows" --out "$xml"

fresh() { { echo "DROP TABLE IF EXISTS \`$1\`;"; "$bin" gen --ddl "$1"; } | db_sql; }
import() { "$bin" import "$xml" --url "$url" --row product --shards 2 "$@"; }
checksum() { db_sql -e "CHECKSUM TABLE \`$1\`" | cut -f2; }
results=()
count_rows() { db_sql -e "SELECT COUNT(*) FROM \`$1\`"; }
# landed WHAT COMMITTED: the fault hit an import that had not finished.
landed() {
    (( $2 < rows )) || die "$1: the import had committed all $rows rows before the fault: it did not land mid-import"
    log "$1: landed after $2 of $rows rows"
}
uptime_s() { db_sql -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'"; }
# wait_rows PID TABLE N: until TABLE holds N rows (or PID ended), so that faults
# land mid-import whatever the machine's speed.
wait_rows() {
    while kill -0 "$1" 2>/dev/null && (( $(db_sql -e "SELECT COUNT(*) FROM \`$2\`") < $3 )); do
        sleep 0.1
    done
}
verdict() { # NAME TABLE SECONDS
    local found sum
    found="$(db_sql -e "SELECT COUNT(*) FROM \`$2\`")"
    sum="$(checksum "$2")"
    local ok=FAIL
    [[ "$found" == "$rows" && "$sum" == "$reference" ]] && ok=ok
    results+=("| $1 | $rows | $found | $([[ "$sum" == "$reference" ]] && echo yes || echo NO) | $3 s | $ok |")
    log "$1: expected $rows, found $found, checksum $sum vs $reference: $ok"
}

fresh fault_clean
import --table fault_clean --json > /dev/null
reference="$(checksum fault_clean)"

# A. kill -9 at random points, then --resume. The binary runs directly in
# the background (not through a function, whose subshell would take the kill).
fresh fault_kill
start=$(now_s)
flag=()
for i in 1 2 3 4 5; do
    "$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_kill "${flag[@]}" > /dev/null 2>&1 &
    pid=$!
    target=$(( rows * i / 6 - RANDOM % (rows / 12) ))
    wait_rows "$pid" fault_kill "$target"
    kill -9 "$pid" 2>/dev/null || die "kill -9 #$i: the import had already ended"
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
    > "$work/restart.json" 2> "$work/restart.log" &
pid=$!
wait_rows "$pid" fault_restart $((rows / 3))
kill -0 "$pid" 2>/dev/null || die "server restart: the import ended before the restart"
landed "server restart" "$(count_rows fault_restart)"
restart_at=$(now_s)
restart_db 5
(( $(uptime_s) <= $(now_s) - restart_at )) || die "server restart: the server's uptime shows no restart"
wait "$pid"
seen=$(( $(json_field "$work/restart.json" reconnects) + $(json_field "$work/restart.json" rewinds) ))
(( seen > 0 )) || die "server restart: the import's report shows no reconnect and no rewind: it never saw the fault"
log "server restart: the import reconnected/rewound $seen times"
verdict "server restart mid-import (down 5 s, --retry-for 120)" fault_restart "$(($(now_s) - start))"

# D. KILL CONNECTION of every importer connection mid-import: the import
# reconnects, replays the open batches and finishes exactly.
fresh fault_killconn
start=$(now_s)
"$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_killconn --json \
    > "$work/killconn.json" 2> "$work/killconn.log" &
pid=$!
wait_rows "$pid" fault_killconn $((rows / 3))
kill -0 "$pid" 2>/dev/null || die "KILL CONNECTION: the import ended before the kill"
landed "KILL CONNECTION" "$(count_rows fault_killconn)"
ids="$(db_sql -e "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE() AND COMMAND <> 'Daemon'")"
[[ -n "$ids" ]] || die "KILL CONNECTION: no importer connection found"
for id in $ids; do db_sql -e "KILL CONNECTION $id" 2>/dev/null || true; done
wait "$pid"
seen=$(( $(json_field "$work/killconn.json" reconnects) + $(json_field "$work/killconn.json" rewinds) ))
(( seen > 0 )) || die "KILL CONNECTION: the import's report shows no reconnect and no rewind: it never saw the kill"
log "KILL CONNECTION: the import reconnected/rewound $seen times"
verdict "KILL CONNECTION of every importer connection" fault_killconn "$(($(now_s) - start))"

# C. server down longer than --retry-for: clear error, then --resume.
fresh fault_down
start=$(now_s)
"$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_down --retry-for 3 > "$work/down.log" 2>&1 &
pid=$!
wait_rows "$pid" fault_down $((rows / 3))
kill -0 "$pid" 2>/dev/null || die "server down: the import ended before the server stopped"
scripts/dev-db.sh stop >/dev/null
if wait "$pid"; then die "the import survived a server that stayed down past --retry-for"; fi
log "import stopped with: $(tail -n 1 "$work/down.log")"
sleep 2
RINGPIPE_DEV_DB_PORT="$port" scripts/dev-db.sh --force-private >/dev/null
landed "server down" "$(count_rows fault_down)"
import --table fault_down --resume --retry-for 120 --json > "$work/down-resume.json"
(( $(json_field "$work/down-resume.json" rows_skipped) > 0 )) || die "server down: --resume skipped no committed rows"
verdict "server down past --retry-for, then --resume" fault_down "$(($(now_s) - start))"

scripts/dev-db.sh stop >/dev/null
printf '%s\n' "| scenario | rows expected | rows found | checksum match | time | result |" "|---|---:|---:|---|---:|---|" "${results[@]}" | tee "$work/results.md"
[[ "${results[*]}" != *FAIL* ]]
