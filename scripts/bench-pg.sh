#!/usr/bin/env bash
# PostgreSQL import benchmark: the same generated catalogue loaded into the
# same PostgreSQL by ringpipe, by psql's \copy and by the server's own COPY
# FROM a file, in rotated order, round after round, every table checked by
# the server.
#
#   scripts/bench-pg.sh                                          # 1,000,000 products, 5 rounds
#   RINGPIPE_BENCH_ROWS=20000 RINGPIPE_BENCH_ROUNDS=1 scripts/bench-pg.sh   # smoke run
#
# Contenders (the ready file is converted from the XML once, untimed; it is
# tab-separated with \N for NULL and backslash escapes, which is exactly
# COPY's text format, so \copy and COPY read it as it is):
#   ringpipe        the default import (`ringpipe import FILE --url postgres://… --table …`)
#   ringpipe of the ready CSV  the same of the ready file's rows as CSV (RFC 4180,
#                   NULL as \N, converted once, untimed): the import with the XML
#                   parse replaced by a cheap one, on the baselines' input
#   \copy           one `psql -c "\copy … FROM file"` of the ready file
#   2 × \copy       the file's two halves copied at once on two connections
#   COPY FROM file  one `psql -c "COPY … FROM '/abs/path'"`: the server reads the
#                   file itself, no data crosses the connection
#   2 × COPY FROM file  the same of the two halves at once on two connections
# On a machine of more than two CPUs (or with RINGPIPE_BENCH_PARTS above 2),
# also ringpipe with as many shards and as many \copy and COPY FROM file of
# the file's parts at once as there are parts.
# The server-side copies need superuser or pg_read_server_files and the
# server on this machine; they read the files in place when the server's OS
# user reads a probe file made beside them, else copies made once, untimed,
# in a new directory under /tmp (mode 755, files 644), removed on exit.
#
# An untimed warm-up runs every contender once first (the server's WAL
# segments, catalogue and the inputs' pages are then as warm for the first
# timed run as for the last); its first table is the reference. Round k
# runs the contenders starting with contender k mod N. Every run starts
# from an empty table with the same primary key and unique index, with
# every input read once untimed and, where the role may (superuser or
# pg_checkpoint), right after a CHECKPOINT, so that no run pays for a
# checkpoint the runs before it made due; it ends with the row count and a
# content hash computed by the server,
# md5(string_agg(t::text, '|' ORDER BY id)), compared with the reference;
# a mismatch stops the benchmark. Each run records wall time, the client's
# CPU (user + system of the processes it waited for) and, when the server
# runs on this machine, the cluster's CPU (the postmaster's own and reaped
# children's time plus its live children's: other sessions' work counts
# too, so it is only meaningful on an otherwise idle server).
#
#   RINGPIPE_BENCH_ROUNDS=5          rounds (default 5)
#   RINGPIPE_BENCH_ONLY='a|b'        only contenders whose name matches this ERE
#   RINGPIPE_BENCH_PG_URL=postgres://…  the server (default: scripts/dev-pg.sh's)
#   RINGPIPE_BENCH_ARGS='--shards 4' extra arguments for ringpipe import
#   RINGPIPE_BENCH_PARTS=N           parts for the N-way contenders (default: the CPUs, nproc)
# Results: target/bench-pg/runs.csv and results.md.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${RINGPIPE_BENCH_ROWS:-1000000}"
rounds="${RINGPIPE_BENCH_ROUNDS:-5}"
only="${RINGPIPE_BENCH_ONLY:-.}"
read -r -a extra <<< "${RINGPIPE_BENCH_ARGS:-}"
parts="$(bench_parts)"
work="target/bench-pg"
table="bench_pg_products"
columns="id,sku,name,description,price,quantity,category,currency,updated"
mkdir -p "$work"

have psql || die "psql is needed (apt-get install postgresql-client)"
url="${RINGPIPE_BENCH_PG_URL:-$(scripts/dev-pg.sh | tail -n 1)}"
sql() { psql "$url" -X -v ON_ERROR_STOP=1 -Atq "$@"; }

log "building (release)"
cargo build --release --locked -p ringpipe -p ringpipe-tools
bin="target/release/ringpipe"

xml="$work/products-$rows.xml"
tsv="$work/products-$rows.tsv"
csv="$work/products-$rows.csv"
[[ -s "$xml" ]] || { log "generating $rows products"; "$bin" gen --rows "$rows" --out "$xml"; }
[[ -s "$tsv" ]] || target/release/xml_to_tsv "$xml" product "$columns" "$tsv"
[[ -s "$csv" ]] || target/release/xml_to_csv "$xml" product "$columns" "$csv"
rm -f "$work"/half-* "$work"/part-*
split -n l/2 -d "$tsv" "$work/half-"
part_files=()
if (( parts > 2 )); then
    split -n "l/$parts" -d "$tsv" "$work/part-"
    part_files=("$work"/part-*)
fi

ddl="SET client_min_messages = warning; DROP TABLE IF EXISTS $table;
$("$bin" gen --ddl "$table" --dialect postgres)"
# ringpipe's fresh import clears the table's checkpoints itself; these go at the end.
forget_checkpoints="DO \$\$ BEGIN IF to_regclass('ringpipe_checkpoint') IS NOT NULL THEN
  DELETE FROM ringpipe_checkpoint WHERE target_table = '$table'; END IF; END \$\$"

# The cluster's CPU ticks, when its processes are readable here.
# The postmaster is the parent of this session's backend, read while it lives.
# shellcheck disable=SC2016 # $BACKEND and $2 are for psql's shell and awk
postmaster="$(printf '%s\n' 'SELECT pg_backend_pid() AS pid \gset' '\setenv BACKEND :pid' \
    "\\! sed 's/^.*) //' /proc/\$BACKEND/stat 2>/dev/null | awk '{ print \$2 }'" | sql || true)"
cluster_ticks() {
    [[ -n "$postmaster" && -r "/proc/$postmaster/stat" ]] || return 0
    local total child ticks
    total="$(sed 's/^.*) //' "/proc/$postmaster/stat" | awk '{ print $12 + $13 + $14 + $15 }')"
    for child in $(pgrep -P "$postmaster"); do
        ticks="$(proc_cpu_ticks "$child")"
        total=$(( total + ${ticks:-0} ))
    done
    echo "$total"
}
# Waits (up to 2 s) until the run's sessions are gone, and so reaped by the
# postmaster with their CPU time.
settle() {
    local i
    for (( i = 0; i < 20; i++ )); do
        [[ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
              AND application_name IN ('ringpipe', 'psql')")" == 0 ]] && break
        sleep 0.1
    done
    sleep 0.1
}
[[ -n "$(cluster_ticks)" ]] || warn "the server's processes are not readable here: no server CPU figures"
tck="$(getconf CLK_TCK)"

copy_file() { sql -c "\\copy $table ($columns) FROM '$1'"; }
copy_server() { sql -c "COPY $table ($columns) FROM '$1'"; }

run_ringpipe() { # [FLAG…]
    "$bin" import "$xml" --url "$url" --table "$table" --row product --quiet "${extra[@]}" "$@"
}
run_ringpipe_csv() {
    "$bin" import "$csv" --url "$url" --table "$table" --null-string '\N' --quiet "${extra[@]}"
}
run_copy() { copy_file "$tsv"; }
run_copy2() { at_once copy_file "$work/half-00" "$work/half-01"; }
run_server_copy() { copy_server "${SERVER_FILES[0]}"; }
run_server_copy2() { at_once copy_server "${SERVER_FILES[1]}" "${SERVER_FILES[2]}"; }
run_ringpipe_parts() { run_ringpipe --shards "$parts"; }
run_copy_parts() { at_once copy_file "${part_files[@]}"; }
run_server_copy_parts() { at_once copy_server "${SERVER_FILES[@]:3}"; }

names=("ringpipe" "ringpipe of the ready CSV" "\\copy" "2 × \\copy" "COPY FROM file (server reads the file)" "2 × COPY FROM file of its halves at once")
fns=(run_ringpipe run_ringpipe_csv run_copy run_copy2 run_server_copy run_server_copy2)
if (( parts > 2 )); then
    names+=("ringpipe --shards $parts" "$parts × \\copy of its parts at once" "$parts × COPY FROM file of its parts at once")
    fns+=(run_ringpipe_parts run_copy_parts run_server_copy_parts)
fi

# Where the server-side copies read the file, its halves and its parts (see the header).
SERVER_FILES=("$tsv" "$work/half-00" "$work/half-01" "${part_files[@]}")
trap 'rm -rf -- "${SERVER_COPIES:-}"' EXIT
copy_reads() { # PATH: the one line the server reads from PATH with COPY FROM a file
    sql -c "CREATE TEMP TABLE ringpipe_probe (t text)" -c "COPY ringpipe_probe FROM '$1'" -c "SELECT t FROM ringpipe_probe"
}
for (( i = 0; i < ${#fns[@]}; i++ )); do
    [[ "${fns[$i]}" == run_server_* && "${names[$i]}" =~ $only ]] || continue
    [[ "$(sql -c "SELECT pg_has_role('pg_read_server_files', 'USAGE')")" == t ]] ||
        die "COPY FROM a file needs superuser or pg_read_server_files, which $(sql -c 'SELECT current_user') lacks (GRANT pg_read_server_files TO …, or leave these contenders out with RINGPIPE_BENCH_ONLY)"
    server_files copy_reads "" "${SERVER_FILES[@]}"
    break
done

runs="$work/runs.csv"
echo "round,contender,rows,wall_s,client_cpu_s,server_cpu_s,check" > "$runs"
checkpoint=true
sql -c "CHECKPOINT" >/dev/null 2>&1 || {
    checkpoint=false
    warn "$(sql -c 'SELECT current_user') may not CHECKPOINT: a run may pay for a checkpoint the runs before it made due"
}
reference=""
# Round 0 is the untimed warm-up.
for (( round = 0; round <= rounds; round++ )); do
    for (( k = 0; k < ${#fns[@]}; k++ )); do
        i=$(( (round + k) % ${#fns[@]} ))
        name="${names[$i]}"
        [[ "$name" =~ $only ]] || continue
        sql -c "$ddl" >/dev/null
        cat "$xml" "$tsv" "$csv" "$work"/half-* "${part_files[@]}" "${SERVER_FILES[@]}" > /dev/null
        ! "$checkpoint" || sql -c "CHECKPOINT" >/dev/null
        before="$(cluster_ticks)"
        { TIMEFORMAT='%R %U %S'; time "${fns[$i]}" > /dev/null 2> "$work/run.err"; } 2> "$work/run.time" \
            || { cat "$work/run.err" >&2; die "$name failed"; }
        settle
        after="$(cluster_ticks)"
        read -r wall user system < <(tail -n 1 "$work/run.time")
        got="$(sql -F ' ' -c "SELECT count(*), coalesce(md5(string_agg(t::text, '|' ORDER BY id)), '') FROM $table t")"
        [[ -n "$reference" ]] || reference="$got"
        [[ "$got" == "$reference" && "${got%% *}" == "$rows" ]] \
            || die "$name: table holds '$got', expected '$reference' with $rows rows"
        client="$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }')"
        server=""
        [[ -n "$before" && -n "$after" ]] && server="$(awk -v a="$after" -v b="$before" -v t="$tck" 'BEGIN { printf "%.2f", (a - b) / t }')"
        if (( round == 0 )); then
            log "warm-up: $name ${wall}s"
            continue
        fi
        echo "$round,$name,$rows,$wall,$client,$server,ok" >> "$runs"
        log "round $round: $name ${wall}s (client CPU ${client}s, server CPU ${server:-?}s)"
    done
done
sql -c "DROP TABLE IF EXISTS $table" -c "$forget_checkpoints" >/dev/null

# One table row per contender: medians, and its wall time's ratio to
# contender B's in the same round.
report_rows() { # B [NAME…]
    local base="$1" name
    shift
    for name in "$@"; do
        N="$name" B="$base" awk -F, -v r="$rows" '
            $2 == ENVIRON["B"] { base[$1] = $4 }
            $2 == ENVIRON["N"] { w[++c] = $4; u[c] = $5; s[c] = $6; round[c] = $1 }
            function median(a, k,   i, j, t) {
                for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
            }
            END {
                if (!c) exit
                n = 0; each = ""
                for (i = 1; i <= c; i++) if (round[i] in base) {
                    q[++n] = w[i] / base[round[i]]
                    each = each (n > 1 ? " / " : "") sprintf("%.2f", q[n])
                }
                m = median(w, c)
                printf "| %s | %.2f | %d | %.2f | %s | %s | %s |\n", ENVIRON["N"], m, r / m, median(u, c),
                    s[1] == "" ? "?" : sprintf("%.2f", median(s, c)), n ? sprintf("%.2f", median(q, n)) : "?", n ? each : "?"
            }
        ' "$runs"
    done
}
csv_run="ringpipe of the ready CSV"
{
    echo "# PostgreSQL import: $rows products, $rounds timed round(s) after an untimed warm-up"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M') UTC, $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(sql -c 'SHOW server_version')"
    echo
    echo "Median per contender (wall, client CPU, server CPU in seconds; rows/s from the median wall)"
    echo "and the median of the per-round ratios (the contender's wall / ringpipe's in the same round):"
    echo
    echo "| contender | wall | rows/s | client CPU | server CPU | × ringpipe (median) | × ringpipe per round |"
    echo "|---|---|---|---|---|---|---|"
    report_rows ringpipe "${names[@]}"
    if grep -q ",$csv_run," "$runs"; then
        echo
        echo "The same runs against $csv_run (the baselines' input):"
        echo
        echo "| contender | wall | rows/s | client CPU | server CPU | × CSV run (median) | × CSV run per round |"
        echo "|---|---|---|---|---|---|---|"
        report_rows "$csv_run" "${names[@]:1}"
    fi
} > "$work/results.md"
cat "$work/results.md"
