#!/usr/bin/env bash
# End-to-end import benchmark: the same generated catalogue loaded into the
# same MariaDB by every contender, each from an empty table with the same
# secondary indexes, each checked afterwards (row count and CHECKSUM TABLE).
#
#   scripts/bench-import.sh                 # 1,000,000 products
#   RINGPIPE_BENCH_ROWS=200000 scripts/bench-import.sh
#
# Contenders:
#   ringpipe           every write path × shards 1, 2, 4 (the file read in one
#                      region per shard, the default)
#   LOAD DATA          LOCAL INFILE of a ready TSV (XML → TSV conversion timed apart)
#   LOAD XML           LOCAL INFILE ... ROWS IDENTIFIED BY '<product>' on a slice
#                      (it runs at hundreds of rows/s), extrapolated
#   naive              one INSERT and one COMMIT per row (ringpipe --shards 1
#                      --batch-rows 1 --write-path insert) on a slice, extrapolated
# Results: target/bench-import/results.md (+ .csv, + chart SVG in docs/img/).
#
#   RINGPIPE_BENCH_ROUNDS=5       head-to-head rounds (default 3)
#   RINGPIPE_BENCH_H2H_ONLY=1     only the reference and the head-to-head rounds
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${RINGPIPE_BENCH_ROWS:-1000000}"
slice_xml="${RINGPIPE_BENCH_XML_SLICE:-20000}"
slice_naive="${RINGPIPE_BENCH_NAIVE_SLICE:-5000}"
paths="${RINGPIPE_BENCH_PATHS:-load-data insert prepared bulk}"
shard_counts="${RINGPIPE_BENCH_SHARDS:-1 2 4}"
work="target/bench-import"
table="bench_products"
columns="id,sku,name,description,price,quantity,category,currency,updated"
mkdir -p "$work" docs/img

url="$(scripts/dev-db.sh | tail -n 1)"
parse_mysql_url "$url"

log "building (release)"
cargo build --release --locked -p ringpipe -p ringpipe-tools
bin="target/release/ringpipe"
to_tsv="target/release/xml_to_tsv"

xml="$work/products-$rows.xml"
[[ -s "$xml" ]] || { log "generating $rows products"; "$bin" gen --rows "$rows" --out "$xml"; }
for n in "$slice_xml" "$slice_naive"; do
    [[ -s "$work/products-$n.xml" ]] || "$bin" gen --rows "$n" --out "$work/products-$n.xml"
done

fresh_table() {
    { echo "DROP TABLE IF EXISTS \`$table\`;"; "$bin" gen --ddl "$table"; } | db_sql
}
checksum() { db_sql -e "CHECKSUM TABLE \`$table\`" | cut -f2; }
count() { db_sql -e "SELECT COUNT(*) FROM \`$table\`"; }

# now_ns: wall clock in nanoseconds.
now_ns() { date +%s%N; }
results="$work/results.csv"
echo "contender,rows,seconds,rows_per_s,peak_rss_mib,count_ok,checksum_ok,note" > "$results"
record() { echo "$*" >> "$results"; log "result: $*"; }

log "XML → TSV conversion"
t0=$(now_ns)
"$to_tsv" "$xml" product "$columns" "$work/products-$rows.tsv"
t1=$(now_ns)
conv_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
record "xml-to-tsv conversion,$rows,$conv_s,$(awk -v r="$rows" -v s="$conv_s" 'BEGIN { printf "%.0f", r / s }'),,,,not a load"

# Reference table: LOAD DATA of the TSV; its checksum is what everyone must match.
fresh_table
t0=$(now_ns)
db_sql -e "LOAD DATA LOCAL INFILE '$work/products-$rows.tsv' INTO TABLE \`$table\` CHARACTER SET utf8mb4 ($columns)"
t1=$(now_ns)
ld_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
reference="$(checksum)"
[[ "$(count)" == "$rows" ]] || die "LOAD DATA stored $(count) of $rows rows"
record "LOAD DATA LOCAL (ready TSV),$rows,$ld_s,$(awk -v r="$rows" -v s="$ld_s" 'BEGIN { printf "%.0f", r / s }'),,yes,reference,"

run_ringpipe() { # NAME FILE ROWS EXPECTED_CHECKSUM FLAGS...
    local name="$1" file="$2" n="$3" expect="$4"; shift 4
    fresh_table
    local json
    json="$("$bin" import "$file" --url "$url" --table "$table" --row product --json "$@")"
    local fields
    fields="$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("%.2f,%.0f,%.1f" % (r["seconds"], r["rows_per_second"], r["peak_rss_mib"]))' "$json")"
    local c_ok=no k_ok=no
    [[ "$(count)" == "$n" ]] && c_ok=yes
    if [[ -z "$expect" ]]; then k_ok=n/a; elif [[ "$(checksum)" == "$expect" ]]; then k_ok=yes; fi
    record "$name,$n,$fields,$c_ok,$k_ok,"
}

# RINGPIPE_BENCH_H2H_ONLY=1: only the reference and the head-to-head rounds.
[[ "${RINGPIPE_BENCH_H2H_ONLY:-0}" == 1 ]] && paths=""
for path in $paths; do
    for shards in $shard_counts; do
        run_ringpipe "ringpipe $path ×$shards" "$xml" "$rows" "$reference" --write-path "$path" --shards "$shards"
    done
done

# Slices: their own reference is a ringpipe import of the same slice.
[[ -n "$paths" ]] && run_ringpipe "naive (1 INSERT + COMMIT per row)" "$work/products-$slice_naive.xml" "$slice_naive" "" \
    --write-path insert --shards 1 --batch-rows 1

if [[ -n "$paths" ]]; then
    fresh_table
    t0=$(now_ns)
    db_sql -e "LOAD XML LOCAL INFILE '$work/products-$slice_xml.xml' INTO TABLE \`$table\` CHARACTER SET utf8mb4 ROWS IDENTIFIED BY '<product>'" || true
    t1=$(now_ns)
    lx_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    lx_rows="$(count)"
    record "LOAD XML LOCAL (slice),$slice_xml,$lx_s,$(awk -v r="$slice_xml" -v s="$lx_s" 'BEGIN { printf "%.0f", r / s }'),,$([[ "$lx_rows" == "$slice_xml" ]] && echo yes || echo "no: $lx_rows rows"),n/a,documented LOAD XML differences"
fi

# Head to head: the reference, the default (bulk on ringpipe's wire client),
# the same path through the mysql crate, and LOAD DATA streamed, interleaved
# round by round (the same code swings widely between minutes on a shared VM),
# each round starting with a different contender; the report takes the ratio
# within each round and their median. Each run also records the client's and
# the server's CPU seconds: on a small machine their sum over the cores is the
# floor no pipeline can beat.
server_pid="$(db_server_pid)"
server_cpu_ticks() { # utime + stime of the server process, or empty when it is not readable here
    if [[ -n "$server_pid" && -r "/proc/$server_pid/stat" ]]; then
        awk '{ print $14 + $15 }' "/proc/$server_pid/stat"
    fi
}
h2h_run() { # ROUND CONTENDER COMMAND...: one timed run, appended to $h2h
    local round="$1" contender="$2"; shift 2
    fresh_table
    # Both inputs read once untimed, so that no contender pays for a page
    # cache the kernel reclaimed between runs (it does here, under memory
    # monitoring): every run starts with its file cached.
    cat "$xml" "$work/products-$rows.tsv" > /dev/null
    local before after times
    before="$(server_cpu_ticks)"
    times="$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null; } 2>&1 | tail -n 1)"
    after="$(server_cpu_ticks)"
    [[ "$(count)" == "$rows" && "$(checksum)" == "$reference" ]] || die "round $round: $contender left a different table"
    awk -v round="$round" -v c="$contender" -v rows="$rows" -v t="$times" -v b="$before" -v a="$after" -v hz="$(getconf CLK_TCK)" 'BEGIN {
        split(t, x, " "); server = (b == "" || a == "") ? "" : sprintf("%.1f", (a - b) / hz)
        printf "%s,%s,%.0f,%.2f,%.1f,%s\n", round, c, rows / x[1], x[1], x[2] + x[3], server }' >> "$h2h"
}
load_data_tsv() {
    db_sql -e "LOAD DATA LOCAL INFILE '$work/products-$rows.tsv' INTO TABLE \`$table\` CHARACTER SET utf8mb4 ($columns)"
}
ringpipe_path() { # WRITE_PATH [FLAGS...]
    local path="$1"; shift
    "$bin" import "$xml" --url "$url" --table "$table" --row product --write-path "$path" --shards 2 "$@"
}
rounds="${RINGPIPE_BENCH_ROUNDS:-3}"
h2h="$work/head_to_head.csv"
echo "round,contender,rows_per_s,wall_s,client_cpu_s,server_cpu_s" > "$h2h"
contenders=("LOAD DATA LOCAL" "ringpipe bulk ×2" "ringpipe bulk ×2 via the mysql crate" "ringpipe load-data ×2")
for round in $(seq 1 "$rounds"); do
    for k in "${!contenders[@]}"; do
        contender="${contenders[$(( (round - 1 + k) % ${#contenders[@]} ))]}"
        case "$contender" in
            LOAD*) h2h_run "$round" "$contender" load_data_tsv ;;
            *"mysql crate") h2h_run "$round" "$contender" ringpipe_path bulk --bulk-client driver ;;
            *bulk*) h2h_run "$round" "$contender" ringpipe_path bulk ;;
            *) h2h_run "$round" "$contender" ringpipe_path load-data ;;
        esac
    done
    log "head-to-head round $round done"
done

# Only a full run replaces the published chart.
chart=docs/img/import-throughput.svg
[[ -z "$paths" ]] && chart="$work/import-throughput.svg"
python3 scripts/bench_report.py "$results" "$work/results.md" "$chart" \
    "$(db_sql -e 'SELECT VERSION()')" \
    "$(db_sql -e "SELECT CONCAT('innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit, ', sync_binlog=', @@sync_binlog, ', log_bin=', @@log_bin, ', innodb_buffer_pool_size=', @@innodb_buffer_pool_size DIV 1048576, 'M, max_allowed_packet=', @@max_allowed_packet DIV 1048576, 'M')")"
cat "$work/results.md"
