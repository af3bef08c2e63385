#!/usr/bin/env bash
# What a second sink connection into the same table costs the server: the
# same rows loaded by one connection, by two connections into one table
# (fed by one parser, or by two parsers on the two halves of the file: the
# importer's default, `--regions`), and by two imports at once into two
# tables, beside one LOAD DATA. Two more contenders split the work between
# two imports into one table, each with its own parser and ring: one takes
# the first half of the records and the other the second (their keys 500k
# apart), or they take alternate runs of 5,000 records (keys as close as the
# one-parser shards'). The last two contenders take the parsing out of it:
# two LOAD DATA of the ready TSV's halves at once, into one table and into
# two, show what two connections can get from this server at all. So do the
# two driverless bulk streams (`tools/src/bin/bulk_wire_probe.rs`): the same
# halves sent as bulk-insert packets built straight from the TSV, waiting for
# each reply (as the `mysql` crate does) or one statement ahead of it.
# Rounds are interleaved, each starting with a different contender; each run
# records its wall time and the server's CPU time.
# Results: target/bench-contention/results.md.
#
#   scripts/bench-contention.sh                       # 1,000,000 products, 4 rounds
#   RINGPIPE_BENCH_ROUNDS=6 scripts/bench-contention.sh
#   RINGPIPE_BENCH_DROP_INDEX=category scripts/bench-contention.sh   # without that index
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${RINGPIPE_BENCH_ROWS:-1000000}"
rounds="${RINGPIPE_BENCH_ROUNDS:-4}"
drop_index="${RINGPIPE_BENCH_DROP_INDEX:-}"
half=$((rows / 2))
work="target/bench-contention"
columns="id,sku,name,description,price,quantity,category,currency,updated"
mkdir -p "$work"

url="$(scripts/dev-db.sh | tail -n 1)"
parse_mysql_url "$url"

log "building (release)"
cargo build --release --locked -p ringpipe -p ringpipe-tools
bin="target/release/ringpipe"
for n in "$rows" "$half"; do
    [[ -s "$work/products-$n.xml" ]] || "$bin" gen --rows "$n" --out "$work/products-$n.xml"
done
[[ -s "$work/products-$rows.tsv" ]] ||
    target/release/xml_to_tsv "$work/products-$rows.xml" product "$columns" "$work/products-$rows.tsv"

# The same records cut into two documents, as halves and as alternate runs of
# 5,000. The generator starts every record on a line of its own.
split_records() { # FILE OUT_PREFIX
    python3 - "$1" "$2" <<'PY'
import sys
path, out = sys.argv[1:]
data = open(path, "rb").read()
mark = b"\n  <product "
first = data.index(mark) + 1
tail = data.rindex(b"</catalogue>")
head, body = data[:first], data[first:tail]
starts = [0]
at = body.find(mark)
while at >= 0:
    starts.append(at + 1)
    at = body.find(mark, at + 1)
starts.append(len(body))
records = [body[a:b] for a, b in zip(starts, starts[1:])]
half = len(records) // 2
parts = {
    "half1": records[:half],
    "half2": records[half:],
    "alt1": [r for i, r in enumerate(records) if (i // 5000) % 2 == 0],
    "alt2": [r for i, r in enumerate(records) if (i // 5000) % 2 == 1],
}
for name, part in parts.items():
    with open(f"{out}-{name}.xml", "wb") as f:
        f.write(head + b"".join(part) + b"</catalogue>\n")
PY
}
[[ -s "$work/split-$rows-alt2.xml" ]] || split_records "$work/products-$rows.xml" "$work/split-$rows"
# The ready TSV's halves (one row per line: the TSV escapes newlines).
if [[ ! -s "$work/products-$rows-half2.tsv" ]]; then
    head -n "$half" "$work/products-$rows.tsv" > "$work/products-$rows-half1.tsv"
    tail -n "+$((half + 1))" "$work/products-$rows.tsv" > "$work/products-$rows-half2.tsv"
fi

fresh() { # TABLE...: empty catalogue tables, without $drop_index if set
    local table
    for table in "$@"; do
        {
            echo "DROP TABLE IF EXISTS \`$table\`;"
            "$bin" gen --ddl "$table"
            if [[ -n "$drop_index" ]]; then echo "ALTER TABLE \`$table\` DROP INDEX \`$drop_index\`;"; fi
        } | db_sql
    done
}
count() { db_sql -e "SELECT COUNT(*) FROM \`$1\`"; }
server_pid="$(db_server_pid)"
[[ -n "$server_pid" && -r "/proc/$server_pid/stat" ]] ||
    die "the server's /proc entry is not readable: this benchmark needs the server on this machine"
server_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
load_tsv() { # FILE TABLE: the server's own bulk path, one connection
    db_sql -e "LOAD DATA LOCAL INFILE '$1' INTO TABLE \`$2\` CHARACTER SET utf8mb4 ($columns)"
}
import() { # FILE TABLE SHARDS [IMPORT OPTION...]
    "$bin" import "$1" --url "$url" --table "$2" --row product --shards "$3" "${@:4}" > /dev/null
}

contenders=("LOAD DATA" "bulk ×1" "bulk ×2 from one parser" "bulk ×2 in 2 regions (default)" "2 tables × bulk ×1"
    "2 imports into one table: halves" "2 imports into one table: alternate 5k runs"
    "2 LOAD DATA of the TSV halves into one table" "2 LOAD DATA of the TSV halves into 2 tables"
    "2 driverless bulk streams of the TSV halves: in lockstep" "2 driverless bulk streams of the TSV halves: one ahead")
runs="$work/runs.csv"
echo "round,contender,wall_s,server_cpu_s" > "$runs"
for round in $(seq 1 "$rounds"); do
    for k in "${!contenders[@]}"; do
        contender="${contenders[$(( (round - 1 + k) % ${#contenders[@]} ))]}"
        fresh bc_one bc_two
        before="$(server_ticks)"
        t0=$(date +%s%N)
        expect=$rows
        case "$contender" in
            "LOAD DATA") load_tsv "$work/products-$rows.tsv" bc_one ;;
            "2 LOAD DATA of the TSV halves into one table")
                load_tsv "$work/products-$rows-half1.tsv" bc_one &
                load_tsv "$work/products-$rows-half2.tsv" bc_one
                wait $! ;;
            "2 LOAD DATA of the TSV halves into 2 tables")
                load_tsv "$work/products-$rows-half1.tsv" bc_one &
                load_tsv "$work/products-$rows-half2.tsv" bc_two
                wait $! ;;
            "2 driverless bulk streams of the TSV halves: "*)
                [[ "$contender" == *ahead ]] && ahead=1 || ahead=0
                target/release/bulk_wire_probe "$url" bc_one "$columns" "$ahead" \
                    "$work/products-$rows-half1.tsv" "$work/products-$rows-half2.tsv" ;;
            "bulk ×1") import "$work/products-$rows.xml" bc_one 1 ;;
            "bulk ×2 from one parser") import "$work/products-$rows.xml" bc_one 2 --regions 1 ;;
            "bulk ×2 in 2 regions (default)") import "$work/products-$rows.xml" bc_one 2 ;;
            "2 tables × bulk ×1")
                expect=$((half * 2))
                import "$work/products-$half.xml" bc_one 1 &
                import "$work/products-$half.xml" bc_two 1
                wait $! ;;
            *)
                [[ "$contender" == *halves ]] && part=half || part=alt
                import "$work/split-$rows-${part}1.xml" bc_one 1 &
                import "$work/split-$rows-${part}2.xml" bc_one 1
                wait $! ;;
        esac
        t1=$(date +%s%N)
        after="$(server_ticks)"
        stored=$(( $(count bc_one) + $(count bc_two) ))
        (( stored == expect )) || die "round $round: $contender stored $stored of $expect rows"
        awk -v r="$round" -v c="$contender" -v a="$t0" -v b="$t1" -v x="$before" -v y="$after" -v hz="$(getconf CLK_TCK)" \
            'BEGIN { printf "%s,%s,%.2f,%.2f\n", r, c, (b - a) / 1e9, (y - x) / hz }' >> "$runs"
        log "round $round: $contender: $(tail -n 1 "$runs" | cut -d, -f3-) (wall s, server CPU-s)"
    done
done
db_sql -e "DROP TABLE IF EXISTS bc_one, bc_two"
forget_checkpoints bc_one bc_two

python3 - "$runs" "$rows" "$rounds" "${drop_index:-none}" > "$work/results.md" <<'EOF'
import csv, statistics, sys
path, rows, rounds, dropped = sys.argv[1:]
runs = list(csv.DictReader(open(path)))
print(f"{int(rows):,} rows, {rounds} interleaved rounds, index dropped: {dropped}\n")
print("| load | median wall s | min–max | median server CPU-s | min–max "
      "| × LOAD DATA per round, median | min–max |")
print("|---|---:|---:|---:|---:|---:|---:|")
reference = {r["round"]: float(r["wall_s"]) for r in runs if r["contender"] == "LOAD DATA"}
for name in dict.fromkeys(r["contender"] for r in runs):
    mine = [r for r in runs if r["contender"] == name]
    wall = [float(r["wall_s"]) for r in mine]
    cpu = [float(r["server_cpu_s"]) for r in mine]
    ratios = [reference[r["round"]] / float(r["wall_s"]) for r in mine]
    print(f"| {name} | {statistics.median(wall):.2f} | {min(wall):.2f}–{max(wall):.2f} "
          f"| {statistics.median(cpu):.2f} | {min(cpu):.2f}–{max(cpu):.2f} "
          f"| {statistics.median(ratios):.2f} | {min(ratios):.2f}–{max(ratios):.2f} |")
EOF
cat "$work/results.md"
