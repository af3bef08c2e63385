#!/usr/bin/env bash
# `--part i/n` into a real three-node MariaDB Galera cluster (scripts/galera.sh), exactly once.
#
#   scripts/test-cluster.sh        (run by scripts/test.sh as its `cluster` step; ~2 minutes)
#
# With the cluster up and a generated catalogue of $RINGPIPE_CLUSTER_ROWS records (default
# 120000), every scenario runs three importers at once, `ringpipe import FILE --part i/3
# --resume` with importer i writing to node i+1:
#   a. plain: all three finish; running all three again exits 0 ("already complete") and
#      changes nothing;
#   b. importer 1 is killed with `kill -9` mid-part (its part then holds fewer rows than it
#      will) and restarted with the same command: it resumes after what it committed;
#   c. node 3 is stopped cleanly mid-import and started again (it rejoins by IST): its
#      importer is NOT restarted: it sees the connection drop, rewinds the open batches,
#      reconnects once the node is back (within --retry-for) and exits 0 by itself;
#   d. certification conflicts on purpose: two importers upsert the same keys through two
#      nodes (files of 20000 and 20001 products: the same records, other inputs, so other
#      checkpoint rows); the losers get deadlock errors (1213), which the summaries count
#      under `conflicts` and replay (rewinds >= conflicts > 0; the two meeting on the same
#      keys is timing, so up to three rounds for a first conflict).
# Before them, the sink's own tests that need a cluster (crates/mysql/tests/it/galera.rs, ignored
# in the plain suite) run against nodes 1 and 2.
# After each, every node holds the exact table: row count and CHECKSUM TABLE equal on all
# three nodes and equal to a clean one-process import's (into a table of the cluster).
#
# Tables: galera_* in the cluster's `test` database, dropped at the end with their checkpoint
# rows. The cluster is left running for reuse (scripts/galera.sh stop stops it).
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

readonly ROWS="${RINGPIPE_CLUSTER_ROWS:-120000}"
readonly CONFLICT_ROWS=20000
# The importers' options in the fault scenarios (b, c).
readonly FAULT_ARGS=(--batch-rows 200)
readonly PARTS=3
readonly WORK="$RINGPIPE_ROOT/target/cluster-test"
readonly FILE="$WORK/products-$ROWS.xml"
readonly TABLES=(galera_ref galera_parts galera_kill galera_restart galera_conflict galera_conflict_ref)

mapfile -t URLS < <(scripts/galera.sh start)
((${#URLS[@]} == PARTS)) || die "scripts/galera.sh start printed ${#URLS[@]} URLs, not $PARTS"

log "building ringpipe"
cargo build --locked --quiet --bin ringpipe
readonly BIN="${CARGO_TARGET_DIR:-$RINGPIPE_ROOT/target}/debug/ringpipe"

log "the sink's tests that need a cluster"
RINGPIPE_TEST_GALERA_URLS="${URLS[*]}" cargo test --locked --quiet -p ringpipe-mysql --test it galera:: -- --ignored

# on_node N ARGS...: the mariadb client on node N (0-based, as the parts), with
# reads waiting until the node applied every write the cluster committed before.
on_node() {
    local node=$1
    shift
    parse_mysql_url "${URLS[node]}"
    db_sql --init-command="SET SESSION wsrep_sync_wait = 1" "$@"
}

# clean_up: on exit, the importers this script started and still runs (a
# failure mid-scenario leaves some) are stopped, then the tables dropped.
clean_up() {
    local t pid
    for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for t in "${TABLES[@]}"; do
        on_node 0 -e "DROP TABLE IF EXISTS \`$t\`" || warn "could not drop $t"
        on_node 0 -e "DELETE FROM ringpipe_checkpoint WHERE target_table = '$t'" 2>/dev/null || true
    done
}

# fresh TABLE: an empty catalogue table on the cluster, no checkpoints.
fresh() {
    on_node 0 -e "DROP TABLE IF EXISTS \`$1\`"
    on_node 0 -e "DELETE FROM ringpipe_checkpoint WHERE target_table = '$1'" 2>/dev/null || true
    "$BIN" gen --ddl "$1" | on_node 0
}

# state TABLE: "rows checksum" of TABLE on node 0, after which every node must agree.
state() {
    on_node 0 -e "SELECT COUNT(*) FROM \`$1\`; CHECKSUM TABLE \`$1\`" | awk 'NR == 1 { c = $1 } NR == 2 { print c, $2 }'
}

# exact TABLE REF_STATE WHAT: every node holds TABLE with the reference state.
exact() {
    local node got
    for ((node = 0; node < PARTS; node++)); do
        got=$(on_node "$node" -e "SELECT COUNT(*) FROM \`$1\`; CHECKSUM TABLE \`$1\`" |
            awk 'NR == 1 { c = $1 } NR == 2 { print c, $2 }')
        [[ $got == "$2" ]] || die "$3: node $((node + 1)) holds $1 as '$got' (rows checksum), expected '$2'"
    done
    log "$3: exact on all $PARTS nodes ($2)"
}

# part_records TABLE PART: "records complete" of the part's checkpoint rows.
part_records() {
    on_node "$2" -e "SELECT CAST(COALESCE(SUM(records), 0) AS UNSIGNED), COALESCE(MIN(complete), 0)
        FROM ringpipe_checkpoint WHERE target_table = '$1' AND part = $2" | tr '\t' ' '
}

# import_part TABLE PART [OPTION...] &: part PART/3 into node PART, the same
# command every time; its --json summary in $WORK/TABLE-PART.json. Run it in
# the background only: the subshell `&` forks becomes the importer (exec),
# so that `kill -9 $!` hits the importer itself.
import_part() {
    local table=$1 part=$2
    shift 2
    exec "$BIN" import "$FILE" --url "${URLS[part]}" --table "$table" --row product \
        --resume --part "$part/$PARTS" --retry-for 120 --json "$@" \
        >"$WORK/$table-$part.json" 2>>"$WORK/$table-$part.log"
}

# wait_part PID TABLE PART RECORDS: until the part committed RECORDS (or PID ended).
wait_part() {
    local records
    while kill -0 "$1" 2>/dev/null; do
        read -r records _ < <(part_records "$2" "$3")
        ((records >= $4)) && return 0
        sleep 0.05
    done
    die "$2: part $3 ended before it committed $4 records: the fault would land after the work"
}

# field TABLE PART NAME: a number from the part's summary.
field() { json_field "$WORK/$1-$2.json" "$3"; }

# summary TABLE: the three parts' recoveries, one line each.
summary() {
    local part
    for ((part = 0; part < PARTS; part++)); do
        log "$1 part $part: written $(field "$1" "$part" rows_written), resumed $(field "$1" "$part" rows_skipped)," \
            "rewinds $(field "$1" "$part" rewinds) (reconnects $(field "$1" "$part" reconnects)," \
            "conflicts $(field "$1" "$part" conflicts))"
    done
}

# all_parts TABLE: the three importers at once; each must exit 0.
all_parts() {
    local part pids=()
    for ((part = 0; part < PARTS; part++)); do
        import_part "$1" "$part" &
        pids[part]=$!
    done
    for ((part = 0; part < PARTS; part++)); do
        wait "${pids[part]}" || die "$1: part $part failed; see $WORK/$1-$part.log"
    done
}

# again TABLE [OPTION...]: every part once more, with the options of its first run:
# exit 0, "already complete", nothing changed.
again() {
    local table=$1 part before
    shift
    before=$(state "$table")
    for ((part = 0; part < PARTS; part++)); do
        "$BIN" import "$FILE" --url "${URLS[part]}" --table "$table" --row product \
            --resume --part "$part/$PARTS" "$@" >"$WORK/$table-again-$part.out" 2>&1 ||
            die "$table: re-running part $part after completion failed; see $WORK/$table-again-$part.out"
        grep -q 'already complete' "$WORK/$table-again-$part.out" ||
            die "$table: re-running part $part did not say 'already complete'"
    done
    exact "$table" "$before" "$table re-run of all parts"
}

mkdir -p "$WORK"
rm -f "$WORK"/*.json "$WORK"/*.log "$WORK"/*.out
trap clean_up EXIT
[[ -s $FILE ]] || "$BIN" gen --rows "$ROWS" --out "$FILE"

# The reference: one process, one node.
fresh galera_ref
t0=$(now_s)
"$BIN" import "$FILE" --url "${URLS[0]}" --table galera_ref --row product --json >"$WORK/ref.json"
log "reference: one importer into node 1: $(json_field "$WORK/ref.json" rows_per_second) rows/s ($(($(now_s) - t0)) s)"
ref=$(state galera_ref)
[[ ${ref%% *} == "$ROWS" ]] || die "reference import holds ${ref%% *} rows, not $ROWS"
exact galera_ref "$ref" "reference"

# a. Three importers, three nodes.
fresh galera_parts
t0=$(now_s)
all_parts galera_parts
log "a. three importers into three nodes: $(($(now_s) - t0)) s"
summary galera_parts
exact galera_parts "$ref" "a. three parts"
again galera_parts

# b. kill -9 of importer 1 mid-part, restarted with the same command. Small
# batches (many commits, each certified by the cluster) keep a part running
# long after the fault's threshold, however fast the machine.
fresh galera_kill
for ((part = 0; part < PARTS; part++)); do
    import_part galera_kill "$part" "${FAULT_ARGS[@]}" &
    pids[part]=$!
done
wait_part "${pids[1]}" galera_kill 1 $((ROWS / PARTS / 10))
kill -9 "${pids[1]}"
wait "${pids[1]}" 2>/dev/null && die "b: importer 1 exited 0 although killed"
read -r killed_at complete < <(part_records galera_kill 1)
((complete == 0)) || die "b: part 1 was complete when killed"
log "b. importer 1 killed with $killed_at records of its part committed"
import_part galera_kill 1 "${FAULT_ARGS[@]}" &
pids[1]=$!
for ((part = 0; part < PARTS; part++)); do
    wait "${pids[part]}" || die "galera_kill: part $part failed; see $WORK/galera_kill-$part.log"
done
read -r part_total _ < <(part_records galera_kill 1)
((killed_at < part_total)) || die "b: the kill landed after part 1 was whole ($killed_at of $part_total)"
(($(field galera_kill 1 rows_skipped) == killed_at)) ||
    die "b: the restarted importer resumed after $(field galera_kill 1 rows_skipped) records, not $killed_at"
summary galera_kill
exact galera_kill "$ref" "b. kill -9 and --resume"
again galera_kill "${FAULT_ARGS[@]}"

# c. Node 3 restarted mid-import; its importer carries on by itself.
fresh galera_restart
for ((part = 0; part < PARTS; part++)); do
    import_part galera_restart "$part" "${FAULT_ARGS[@]}" &
    pids[part]=$!
done
wait_part "${pids[2]}" galera_restart 2 $((ROWS / PARTS / 10))
read -r stopped_at _ < <(part_records galera_restart 2)
scripts/galera.sh stop-node 3
scripts/galera.sh start >/dev/null
for ((part = 0; part < PARTS; part++)); do
    wait "${pids[part]}" || die "galera_restart: part $part failed; see $WORK/galera_restart-$part.log"
done
summary galera_restart
(($(field galera_restart 2 reconnects) > 0 && $(field galera_restart 2 rewinds) > 0)) ||
    die "c: importer 2 shows no reconnect or no rewind: it never saw its node go"
log "c. node 3 was restarted while importer 2 wrote to it (its part had $stopped_at records)"
exact galera_restart "$ref" "c. node restart"
again galera_restart "${FAULT_ARGS[@]}"

# d. Certification conflicts: the same keys upserted through nodes 1 and 2.
"$BIN" gen --rows "$CONFLICT_ROWS" --out "$WORK/conflict-a.xml"
"$BIN" gen --rows $((CONFLICT_ROWS + 1)) --out "$WORK/conflict-b.xml"
fresh galera_conflict_ref
"$BIN" import "$WORK/conflict-b.xml" --url "${URLS[0]}" --table galera_conflict_ref --row product --quiet
conflict_ref=$(state galera_conflict_ref)
# conflict_round: both importers at once into a fresh table; the sum of their
# conflicts in CONFLICTS, checked and exact.
conflict_round() {
    local side node c r rewinds=0 pids=()
    fresh galera_conflict
    for side in a b; do
        node=0
        [[ $side == b ]] && node=1
        "$BIN" import "$WORK/conflict-$side.xml" --url "${URLS[node]}" --table galera_conflict \
            --row product --mode upsert --part 0/1 --batch-rows 50 --retry-for 120 --json \
            >"$WORK/galera_conflict-$side.json" 2>"$WORK/galera_conflict-$side.log" &
        pids[node]=$!
    done
    wait "${pids[0]}" || die "d: importer a failed; see $WORK/galera_conflict-a.log"
    wait "${pids[1]}" || die "d: importer b failed; see $WORK/galera_conflict-b.log"
    CONFLICTS=0
    for side in a b; do
        c=$(field galera_conflict "$side" conflicts)
        r=$(field galera_conflict "$side" rewinds)
        log "d. importer $side: conflicts $c, rewinds $r"
        CONFLICTS=$((CONFLICTS + c)) rewinds=$((rewinds + r))
    done
    ((rewinds >= CONFLICTS)) || die "d: $CONFLICTS conflicts but only $rewinds rewinds"
    exact galera_conflict "$conflict_ref" "d. $CONFLICTS certification conflicts replayed"
}
# Whether the two meet on the same keys at the same moment is timing: up to
# three rounds for at least one conflict.
for round in 1 2 3; do
    conflict_round
    ((CONFLICTS > 0)) && break
    log "d. round $round: no conflict arose; again"
done
((CONFLICTS > 0)) || die "d: no certification conflict arose in 3 rounds: the counting was not exercised"

log "all cluster scenarios exact"
