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
# Each ends with row count and CHECKSUM TABLE against a clean import.
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
    kill -9 "$pid" 2>/dev/null && log "kill -9 #$i at $(db_sql -e 'SELECT COUNT(*) FROM fault_kill') rows"
    wait "$pid" 2>/dev/null || true
    flag=(--resume)
done
# A run that finished just before its kill cleared the checkpoint: then there
# is nothing left to resume, and the verdict below still checks every row.
if (( $(db_sql -e "SELECT COUNT(*) FROM ringpipe_checkpoint WHERE target_table = 'fault_kill'") > 0 )); then
    import --table fault_kill --resume > /dev/null
fi
verdict "kill -9 ×5, then --resume" fault_kill "$(($(now_s) - start))"

# B. server restart mid-import, within --retry-for.
fresh fault_restart
start=$(now_s)
"$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_restart --retry-for 120 > "$work/restart.log" 2>&1 &
pid=$!
wait_rows "$pid" fault_restart $((rows / 3))
restart_db 5
wait "$pid"
verdict "server restart mid-import (down 5 s, --retry-for 120)" fault_restart "$(($(now_s) - start))"

# C. server down longer than --retry-for: clear error, then --resume.
fresh fault_down
start=$(now_s)
"$bin" import "$xml" --url "$url" --row product --shards 2 --table fault_down --retry-for 3 > "$work/down.log" 2>&1 &
pid=$!
wait_rows "$pid" fault_down $((rows / 3))
scripts/dev-db.sh stop >/dev/null
if wait "$pid"; then die "the import survived a server that stayed down past --retry-for"; fi
log "import stopped with: $(tail -n 1 "$work/down.log")"
sleep 2
RINGPIPE_DEV_DB_PORT="$port" scripts/dev-db.sh --force-private >/dev/null
import --table fault_down --resume --retry-for 120 > /dev/null
verdict "server down past --retry-for, then --resume" fault_down "$(($(now_s) - start))"

scripts/dev-db.sh stop >/dev/null
printf '%s\n' "| scenario | rows expected | rows found | checksum match | time | result |" "|---|---:|---:|---|---:|---|" "${results[@]}" | tee "$work/results.md"
[[ "${results[*]}" != *FAIL* ]]
