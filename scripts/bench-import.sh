#!/usr/bin/env bash
# End-to-end import benchmark, built to convince a sceptic: the same generated
# catalogue loaded into the same MariaDB by ringpipe's default import and by
# the server's own strongest bulk paths, each baseline over the same transport
# as ringpipe, in rotated order, round after round, every table checked.
#
#   scripts/bench-import.sh                                  # 1,000,000 products, 5 rounds
#   RINGPIPE_BENCH_ROWS=20000 RINGPIPE_BENCH_ROUNDS=2 scripts/bench-import.sh   # smoke run
#
# Contenders (the ready TSV and CSV are converted from the XML once, untimed):
#   ringpipe                 the default import (`ringpipe import FILE --url … --table …`)
#   ringpipe of the ready CSV the same of the ready CSV (the TSV's rows, RFC 4180,
#                            NULL as \N): what the import costs with the XML
#                            parse replaced by a cheap one, on the baselines' input
#   LOAD DATA                one LOAD DATA LOCAL of the TSV
#   LOAD DATA, bulk settings the same after SET unique_checks=0, foreign_key_checks=0
#   LOAD DATA, keys after    into the table without its secondary indexes, then one
#                            ALTER TABLE … ADD UNIQUE KEY …, ADD KEY …
#   2 × LOAD DATA            the TSV's two halves loaded at once on two connections
#   LOAD DATA INFILE         one LOAD DATA INFILE without LOCAL: the server reads
#                            the TSV itself, no data crosses the connection
#   2 × LOAD DATA INFILE     the same of the two halves at once on two connections
#   LOAD XML                 LOAD XML LOCAL … ROWS IDENTIFIED BY '<product>' (slice)
#   naive INSERT             the mariadb client fed one autocommitted single-row
#                            INSERT per record (slice)
#   ringpipe --batch-rows 1  ringpipe --write-path insert --shards 1 --batch-rows 1 (slice)
#   … (TCP)                  LOAD DATA and ringpipe again over TCP (prefer_socket=false)
# On a machine of more than two CPUs (or with RINGPIPE_BENCH_PARTS above 2),
# also ringpipe with as many shards (a region each) and as many LOAD DATA
# and LOAD DATA INFILE of the TSV's parts at once as there are parts.
# ringpipe's wire client moves itself to the server's Unix socket when the
# host is this machine; then every baseline's client uses that socket too
# (`mariadb --socket=@@socket`), and the TCP pair is a second table. Slices
# (RINGPIPE_BENCH_SLICE rows, default 20,000) are extrapolated per row.
# The server-side loads need the FILE privilege and the server on this
# machine; they read the files in place when they lie under secure_file_priv
# (NULL or empty: anywhere) and the server's OS user reads a probe file made
# beside them, else copies made once, untimed, in a new directory (mode 755,
# files 644) under secure_file_priv's directory or /tmp, removed on exit.
#
# An untimed warm-up round runs every contender once first, so that no
# timed run pays for a cold server (its buffer pool, the table's first
# pages, the binary's first start). Round k runs the contenders starting
# with contender k mod N. Every run starts from an empty table with the
# same indexes and ends with the row count and CHECKSUM TABLE against a
# reference load; a mismatch stops the benchmark. Each run records wall time, the client's CPU (user + system of
# the processes it waited for, getrusage) and the server's (utime + stime
# from /proc/<mariadbd>/stat before and after).
#
#   RINGPIPE_BENCH_ROUNDS=5       rounds (default 5)
#   RINGPIPE_BENCH_SLICE=20000    rows of the slow contenders' slice
#   RINGPIPE_BENCH_ONLY='a|b'     only contenders whose name matches this ERE
#   RINGPIPE_BENCH_VARIANTS='--shards 3 --regions 3;--batch-rows 2500'
#                                 more contenders: ringpipe's default import
#                                 with each of these flag sets (`;` between)
#   RINGPIPE_BENCH_URL=mysql://…  the server (default: scripts/dev-db.sh's)
#   RINGPIPE_BENCH_PARTS=N        parts for the N-way contenders (default: the CPUs, nproc)
# Results: target/bench-import/runs.csv and results.md.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${RINGPIPE_BENCH_ROWS:-1000000}"
rounds="${RINGPIPE_BENCH_ROUNDS:-5}"
slice="${RINGPIPE_BENCH_SLICE:-20000}"
(( slice > rows )) && slice="$rows"
parts="$(bench_parts)"
work="target/bench-import"
table="bench_products"
columns="id,sku,name,description,price,quantity,category,currency,updated"
mkdir -p "$work"

url="${RINGPIPE_BENCH_URL:-$(scripts/dev-db.sh | tail -n 1)}"
parse_mysql_url "$url"
tcp_url="$url$([[ "$url" == *\?* ]] && echo '&' || echo '?')prefer_socket=false"
sock="$(db_socket)"
if [[ -n "$sock" ]]; then
    transport="Unix socket ($sock)"
    sql() { db_sql_socket "$sock" "$@"; }
else
    transport="TCP ($DB_HOST:$DB_PORT)"
    sql() { db_sql "$@"; }
fi
log "transport of ringpipe and the baselines: $transport"

log "building (release)"
cargo build --release --locked -p ringpipe -p ringpipe-tools
bin="target/release/ringpipe"

xml="$work/products-$rows.xml"
tsv="$work/products-$rows.tsv"
csv="$work/products-$rows.csv"
[[ -s "$xml" ]] || { log "generating $rows products"; "$bin" gen --rows "$rows" --out "$xml"; }
[[ -s "$tsv" ]] || target/release/xml_to_tsv "$xml" product "$columns" "$tsv"
[[ -s "$csv" ]] || target/release/xml_to_csv "$xml" product "$columns" "$csv"
[[ -s "$work/products-$slice.xml" ]] || "$bin" gen --rows "$slice" --out "$work/products-$slice.xml"
head -n "$slice" "$tsv" > "$work/slice.tsv"
rm -f "$work"/half-* "$work"/part-*
split -n l/2 -d "$tsv" "$work/half-"
part_files=()
if (( parts > 2 )); then
    split -n "l/$parts" -d "$tsv" "$work/part-"
    part_files=("$work"/part-*)
fi
# The naive loader's input: one INSERT per record, as a plain client would
# send them (autocommit on). The TSV's escapes (\\ \t \n \r \0) are string
# literal escapes too; \N is NULL.
python3 - "$work/slice.tsv" "$table" "$columns" > "$work/naive.sql" <<'EOF'
import sys
path, table, columns = sys.argv[1:4]
for line in open(path, encoding="utf-8"):
    fields = line.rstrip("\n").split("\t")
    values = ",".join("NULL" if f == "\\N" else "'" + f.replace("'", "\\'") + "'" for f in fields)
    print(f"INSERT INTO `{table}` ({columns}) VALUES ({values});")
EOF
# The table without its secondary indexes, and the one ALTER that adds them.
ddl="$("$bin" gen --ddl "$table")"
bare_ddl="$(printf '%s\n' "$ddl" | grep -Ev '^ *(UNIQUE )?KEY ' | sed -E 'N;s/,\n\)/\n)/;P;D')"
add_keys="ALTER TABLE \`$table\` $(printf '%s\n' "$ddl" | grep -E '^ *(UNIQUE )?KEY ' | sed -E 's/^ */ADD /; s/,$//' | paste -sd, -)"

fresh_table() { { echo "DROP TABLE IF EXISTS \`$table\`;"; printf '%s;\n' "${1:-$ddl}"; } | sql; }
load_sql() { # FILE [server]: LOAD DATA LOCAL of FILE into the table; with "server", without LOCAL
    local how="LOCAL "
    [[ "${2:-}" == server ]] && how=""
    printf "LOAD DATA %sINFILE '%s' INTO TABLE \`%s\` CHARACTER SET utf8mb4 (%s)" "$how" "$1" "$table" "$columns"
}
table_state() { sql -e "SELECT COUNT(*) FROM \`$table\`; CHECKSUM TABLE \`$table\`" | awk 'NR == 1 { c = $1 } NR == 2 { print c, $2 }'; }

trap 'sql -e "DROP TABLE IF EXISTS \`$table\`" || true; forget_checkpoints "$table" || true; rm -rf -- "${SERVER_COPIES:-}"' EXIT
log "reference loads"
fresh_table && sql -e "$(load_sql "$tsv")" && reference="$(table_state)"
fresh_table && sql -e "$(load_sql "$work/slice.tsv")" && slice_reference="$(table_state)"
[[ "$reference" == "$rows "* && "$slice_reference" == "$slice "* ]] || die "reference loads: $reference / $slice_reference"

# name | transport | rows | command (a function below) | "lossy": a wrong
# table is recorded (and shown) instead of stopping the benchmark. LOAD XML
# drops records of this catalogue (CDATA sections, the xsi namespace):
# measured all the same, its table is never counted as correct.
contenders=(
    "ringpipe|$transport|$rows|c_ringpipe"
    "ringpipe of the ready CSV|$transport|$rows|c_ringpipe_csv"
    "LOAD DATA|$transport|$rows|c_load_data"
    "LOAD DATA, unique_checks=0 foreign_key_checks=0|$transport|$rows|c_load_data_bulk"
    "LOAD DATA without secondary keys, then ALTER ADD KEY|$transport|$rows|c_load_data_keys_after"
    "2 × LOAD DATA of the TSV's halves at once|$transport|$rows|c_load_data_halves"
    "LOAD DATA INFILE (server reads the file)|$transport|$rows|c_infile"
    "2 × LOAD DATA INFILE of the TSV's halves at once|$transport|$rows|c_infile_halves"
    "LOAD XML (slice)|$transport|$slice|c_load_xml|lossy"
    "naive: 1 autocommitted INSERT per row, mariadb client (slice)|$transport|$slice|c_naive"
    "ringpipe --write-path insert --shards 1 --batch-rows 1 (slice)|$transport|$slice|c_ringpipe_row"
)
if (( parts > 2 )); then
    contenders+=(
        "ringpipe --shards $parts|$transport|$rows|c_ringpipe_with --shards $parts"
        "$parts × LOAD DATA of the TSV's parts at once|$transport|$rows|c_load_data_parts"
        "$parts × LOAD DATA INFILE of the TSV's parts at once|$transport|$rows|c_infile_parts"
    )
fi
if [[ -n "$sock" ]]; then
    contenders+=("ringpipe|TCP|$rows|c_ringpipe_tcp" "LOAD DATA|TCP|$rows|c_load_data_tcp")
fi
if [[ -n "${RINGPIPE_BENCH_ONLY:-}" ]]; then
    mapfile -t contenders < <(printf '%s\n' "${contenders[@]}" | grep -E "^ringpipe\||${RINGPIPE_BENCH_ONLY}")
fi
IFS=';' read -ra variants <<< "${RINGPIPE_BENCH_VARIANTS:-}"
for flags in "${variants[@]}"; do
    [[ "$flags" != *'|'* ]] || die "RINGPIPE_BENCH_VARIANTS: a flag set may not hold '|'"
    contenders+=("ringpipe $flags|$transport|$rows|c_ringpipe_with $flags")
done

# Where the server-side loads read the TSV, its halves and its parts (see the header).
SERVER_FILES=("$tsv" "$work/half-00" "$work/half-01" "${part_files[@]}")
infile_reads() { # PATH: the one line the server reads from PATH with LOAD DATA INFILE
    sql -e "CREATE TEMPORARY TABLE ringpipe_probe (t text); LOAD DATA INFILE '$1' INTO TABLE ringpipe_probe; SELECT t FROM ringpipe_probe"
}
if printf '%s\n' "${contenders[@]}" | grep -q '|c_infile'; then
    [[ "$(sql -e "SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'FILE'
          AND GRANTEE IN (CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), ''''),
                          CONCAT('''', CURRENT_ROLE(), ''''))")" != 0 ]] ||
        die "LOAD DATA INFILE needs the FILE privilege, which $DB_USER lacks here (GRANT FILE ON *.* TO …, or leave these contenders out with RINGPIPE_BENCH_ONLY)"
    priv="$(sql -e 'SELECT @@secure_file_priv')" confined=""
    if [[ "$priv" != NULL && -n "$priv" && "$(realpath "$tsv")" != "${priv%/}"/* ]]; then
        log "secure_file_priv is $priv: the server reads files only under it; copying the TSV and its parts there (untimed)"
        confined="$priv"
    fi
    server_files infile_reads "$confined" "${SERVER_FILES[@]}"
fi

c_ringpipe() { "$bin" import "$xml" --url "$url" --table "$table" --row product --quiet; }
c_ringpipe_csv() { "$bin" import "$csv" --url "$url" --table "$table" --null-string '\N' --quiet; }
c_ringpipe_with() { "$bin" import "$xml" --url "$url" --table "$table" --row product --quiet "$@"; }
c_ringpipe_tcp() { "$bin" import "$xml" --url "$tcp_url" --table "$table" --row product --quiet; }
c_ringpipe_row() {
    "$bin" import "$work/products-$slice.xml" --url "$url" --table "$table" --row product --quiet \
        --write-path insert --shards 1 --batch-rows 1
}
c_load_data() { sql -e "$(load_sql "$tsv")"; }
c_load_data_tcp() { db_sql -e "$(load_sql "$tsv")"; }
c_load_data_bulk() { sql -e "SET SESSION unique_checks = 0, foreign_key_checks = 0; $(load_sql "$tsv")"; }
c_load_data_keys_after() { sql -e "$(load_sql "$tsv"); $add_keys"; }
load_local() { sql -e "$(load_sql "$1")"; }
load_server() { sql -e "$(load_sql "$1" server)"; }
c_load_data_halves() { at_once load_local "$work/half-00" "$work/half-01"; }
c_infile() { load_server "${SERVER_FILES[0]}"; }
c_infile_halves() { at_once load_server "${SERVER_FILES[1]}" "${SERVER_FILES[2]}"; }
c_load_data_parts() { at_once load_local "${part_files[@]}"; }
c_infile_parts() { at_once load_server "${SERVER_FILES[@]:3}"; }
c_load_xml() {
    sql -e "LOAD XML LOCAL INFILE '$work/products-$slice.xml' INTO TABLE \`$table\` CHARACTER SET utf8mb4 ROWS IDENTIFIED BY '<product>'"
}
c_naive() { sql --default-character-set=utf8mb4 < "$work/naive.sql"; }

server_pid="$(db_server_pid)"
[[ -n "$(proc_cpu_ticks "$server_pid")" ]] || warn "the server's /proc entry is not readable here: no server CPU figures"
hz="$(getconf CLK_TCK)"
runs="$work/runs.csv"
echo "round,contender,transport,rows,wall_s,client_cpu_s,server_cpu_s,check" > "$runs"
run_one() { # ROUND ENTRY
    local name transport n fn lossy
    IFS='|' read -r name transport n fn lossy <<< "$2"
    local -a command
    read -ra command <<< "$fn" # the function, and a variant's flags
    if [[ "$fn" == c_load_data_keys_after ]]; then fresh_table "$bare_ddl"; else fresh_table; fi
    # Inputs read once untimed: every run starts with its file in the page cache.
    cat "$xml" "$tsv" "$csv" "$work/products-$slice.xml" "$work/naive.sql" "${part_files[@]}" "${SERVER_FILES[@]}" > /dev/null
    local before after times state expect="$reference"
    (( n == rows )) || expect="$slice_reference"
    before="$(proc_cpu_ticks "$server_pid")"
    { TIMEFORMAT='%R %U %S'; time "${command[@]}" > /dev/null 2> "$work/run.err"; } 2> "$work/run.time" || true
    after="$(proc_cpu_ticks "$server_pid")"
    times="$(tail -n 1 "$work/run.time")"
    state="$(table_state)"
    local check=ok
    [[ "$state" == "$expect" ]] || check="WRONG: $state"
    [[ "$check" == ok || "$lossy" == lossy ]] ||
        die "round $1: $name ($transport) left count/checksum $state, expected $expect; it said: $(tail -n 3 "$work/run.err")"
    if (( $1 == 0 )); then
        log "warm-up: $name ($transport): ${times%% *} s, table $check"
        return
    fi
    awk -v r="$1" -v c="$name" -v t="$transport" -v n="$n" -v x="$times" -v b="$before" -v a="$after" -v hz="$hz" -v k="$check" 'BEGIN {
        split(x, s, " "); server = (b == "" || a == "") ? "" : sprintf("%.2f", (a - b) / hz)
        printf "%s,\"%s\",\"%s\",%s,%.3f,%.3f,%s,%s\n", r, c, t, n, s[1], s[2] + s[3], server, k }' >> "$runs"
    log "round $1: $name ($transport): ${times%% *} s, table $check"
}
# Round 0 is the untimed warm-up.
for round in $(seq 0 "$rounds"); do
    for k in "${!contenders[@]}"; do
        run_one "$round" "${contenders[$(( (round + k) % ${#contenders[@]} ))]}"
    done
done
sql -e "DROP TABLE IF EXISTS \`$table\`"

python3 scripts/bench_report.py "$runs" "$work/results.md" \
    "$(sql -e 'SELECT VERSION()')" \
    "$(sql -e "SELECT CONCAT('innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit, ', sync_binlog=', @@sync_binlog, ', log_bin=', @@log_bin, ', innodb_buffer_pool_size=', @@innodb_buffer_pool_size DIV 1048576, 'M, max_allowed_packet=', @@max_allowed_packet DIV 1048576, 'M')")" \
    "$rows"
cat "$work/results.md"
