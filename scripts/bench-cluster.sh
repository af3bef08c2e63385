#!/usr/bin/env bash
# One round of import throughput on the local Galera cluster (scripts/galera.sh), release build:
#
#   scripts/bench-cluster.sh [ROWS]     (default 300000 generated products)
#
#   1. one importer into node 1;
#   2. three importers, `--part i/3`, importer i into node i+1;
#   3. three importers, `--part i/3`, all into node 1.
# Each into a fresh table (galera_bench, dropped at the end), default shards and batches; the
# wall time runs from the first start until the last importer exited and every node applied
# every row (a read with wsrep_sync_wait on each). Prints one Markdown table row per case. One round on whatever else the machine is doing: a figure to compare the cases
# with, not a benchmark.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

readonly ROWS="${1:-300000}"
readonly WORK="$RINGPIPE_ROOT/target/cluster-test"
readonly FILE="$WORK/bench-$ROWS.xml"
readonly TABLE=galera_bench

mapfile -t URLS < <(scripts/galera.sh start)
((${#URLS[@]} == 3)) || die "scripts/galera.sh start printed ${#URLS[@]} URLs, not 3"
log "building ringpipe (release)"
cargo build --locked --release --quiet --bin ringpipe
readonly BIN="${CARGO_TARGET_DIR:-$RINGPIPE_ROOT/target}/release/ringpipe"
mkdir -p "$WORK"
[[ -s $FILE ]] || "$BIN" gen --rows "$ROWS" --out "$FILE"

# sql [NODE] ARGS...: the client on node NODE (0-based, default 0); reads
# wait until the node applied what the cluster committed before.
sql() {
    local node=0
    [[ ${1:-} =~ ^[0-2]$ ]] && { node=$1; shift; }
    parse_mysql_url "${URLS[node]}"
    db_sql --init-command="SET SESSION wsrep_sync_wait = 1" "$@"
}

fresh() {
    sql -e "DROP TABLE IF EXISTS \`$TABLE\`"
    sql -e "DELETE FROM ringpipe_checkpoint WHERE target_table = '$TABLE'" 2>/dev/null || true
    "$BIN" gen --ddl "$TABLE" | sql
}
trap 'sql -e "DROP TABLE IF EXISTS \`$TABLE\`; DELETE FROM ringpipe_checkpoint WHERE target_table = '"'$TABLE'"'" || true' EXIT

# run CASE NODE... : one importer per NODE (0-based) at once, part i/N for the
# i-th when there are several; prints the table row.
run() {
    local name=$1 i t0 t1 pids=()
    shift
    local n=$#
    fresh
    t0=$(date +%s.%N)
    for ((i = 0; i < n; i++)); do
        local node=${*:i+1:1} part=()
        ((n > 1)) && part=(--part "$i/$n")
        "$BIN" import "$FILE" --url "${URLS[node]}" --table "$TABLE" --row product \
            "${part[@]}" --quiet &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || die "$name: an importer failed"; done
    for i in 0 1 2; do
        [[ $(sql "$i" -e "SELECT COUNT(*) FROM \`$TABLE\`") == "$ROWS" ]] ||
            die "$name: node $((i + 1)) does not hold $ROWS rows"
    done
    t1=$(date +%s.%N)
    awk -v name="$name" -v rows="$ROWS" -v t0="$t0" -v t1="$t1" \
        'BEGIN { printf "| %s | %d | %.1f s | %.0f rows/s |\n", name, rows, t1 - t0, rows / (t1 - t0) }'
}

printf '| case | rows | wall | rows/s |\n|---|---:|---:|---:|\n'
run "1 importer → node 1" 0
run "3 importers (parts) → nodes 1, 2, 3" 0 1 2
run "3 importers (parts) → node 1" 0 0 0
