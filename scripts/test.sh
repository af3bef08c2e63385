#!/usr/bin/env bash
# The ONE command that runs every check and test of the workspace:
#
#   1. fmt      cargo fmt --all -- --check
#   2. clippy   cargo clippy --workspace --all-targets --locked -- -D warnings
#   3. doc      cargo doc --workspace --no-deps --locked with RUSTDOCFLAGS=-D warnings
#               (a broken link in the API docs fails like a lint)
#   4. db       scripts/dev-db.sh -> RINGPIPE_TEST_MYSQL_URL (starts a private MariaDB
#               under target/dev-db/ if none answers; it is left running for reuse), and
#               scripts/dev-pg.sh -> RINGPIPE_TEST_PG_URL (likewise for PostgreSQL)
#   5. test     cargo test --workspace --locked   (unit, integration, doc tests, examples),
#               then a check that the tests left no table and no checkpoint row behind
#               in either test database
#   6. cluster  scripts/test-cluster.sh: `--part i/3` into a three-node MariaDB Galera cluster
#               (scripts/galera.sh, under target/galera/, left running for reuse), ~2 min
#   7. loom     loom model tests of ringpipe-ring (--cfg loom, own target dir target/loom)
#   (benches and examples are compiled and linted by step 2, clippy --all-targets;
#    building them again in the release profile cost ~8 minutes for nothing)
#
# Fails fast. SKIP_LINT=1 skips steps 1-3 for local iteration (CI never sets it).
# A pre-set RINGPIPE_TEST_MYSQL_URL is offered to dev-db.sh as RINGPIPE_MYSQL_URL.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

readonly TOTAL_STEPS=7
STEP=0
SUMMARY=()
T_START=$(now_s)

# step NAME CMD...: announce, run and time one step; stop everything on failure.
# (CMD runs in an `||` context, where `set -e` is off: shell functions used as CMD
# must propagate failures explicitly.)
step() {
    local name=$1 t0 rc=0
    shift
    STEP=$((STEP + 1))
    printf '\n==> [%d/%d] %s: %s\n' "$STEP" "$TOTAL_STEPS" "$name" "$*"
    t0=$(now_s)
    "$@" || rc=$?
    local dt=$(($(now_s) - t0))
    if ((rc != 0)); then
        printf '\n==> FAILED at [%d/%d] %s (exit %d, %ds); total %ds\n' \
            "$STEP" "$TOTAL_STEPS" "$name" "$rc" "$dt" "$(($(now_s) - T_START))" >&2
        exit "$rc"
    fi
    printf '<== %s ok (%ds)\n' "$name" "$dt"
    SUMMARY+=("$name ${dt}s")
}

skip() {
    STEP=$((STEP + 1))
    printf '\n==> [%d/%d] %s: SKIPPED (%s)\n' "$STEP" "$TOTAL_STEPS" "$1" "$2"
    SUMMARY+=("$1 skipped")
}

# Step 4: obtain the database URL (last stdout line of dev-db.sh) and export it.
get_db() {
    local out url
    if [[ -n ${RINGPIPE_TEST_MYSQL_URL:-} && -z ${RINGPIPE_MYSQL_URL:-} ]]; then
        out=$(RINGPIPE_MYSQL_URL="$RINGPIPE_TEST_MYSQL_URL" scripts/dev-db.sh) || return
    else
        out=$(scripts/dev-db.sh) || return
    fi
    url=${out##*$'\n'}
    if [[ $url != mysql://* && $url != mariadb://* ]]; then
        printf 'dev-db.sh printed no database URL (last line: %q)\n' "$url" >&2
        return 1
    fi
    export RINGPIPE_TEST_MYSQL_URL="$url"
    printf 'RINGPIPE_TEST_MYSQL_URL=%s\n' "$url"
    url=$(scripts/dev-pg.sh | tail -n 1) || return
    if [[ $url != postgres://* ]]; then
        printf 'dev-pg.sh printed no database URL (last line: %q)\n' "$url" >&2
        return 1
    fi
    export RINGPIPE_TEST_PG_URL="$url"
    printf 'RINGPIPE_TEST_PG_URL=%s\n' "$url"
}

# Step 7: loom models. A separate target dir keeps the different RUSTFLAGS from
# invalidating the main build. Warn loudly if the filter matched no test at all.
loom_tests() {
    local log="$LOOM_TARGET_DIR/loom-test.log"
    mkdir -p "$LOOM_TARGET_DIR" || return
    RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg loom" LOOM_MAX_PREEMPTIONS=2 \
        CARGO_TARGET_DIR="$LOOM_TARGET_DIR" \
        cargo test -p ringpipe-ring --release --locked --lib -- loom 2>&1 | tee "$log" || return
    if ! grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$log"; then
        printf 'WARNING: no loom test ran (no test name in ringpipe-ring matches "loom")\n'
    fi
}
LOOM_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"

# The two test databases, as `kind` arguments: `mysql` (RINGPIPE_TEST_MYSQL_URL)
# and `pg` (RINGPIPE_TEST_PG_URL).
DATABASES=(mysql pg)

# sql KIND QUERY: the query's rows in the test database, tab-separated, no header.
sql() {
    case $1 in
        mysql) parse_mysql_url "$RINGPIPE_TEST_MYSQL_URL" && db_sql -e "$2" ;;
        pg) psql "$RINGPIPE_TEST_PG_URL" -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1 -c "$2" ;;
    esac
}

# tables KIND: the tables of the test database, one per line (PostgreSQL's as
# schema.table, outside the system schemas).
tables() {
    case $1 in
        mysql) sql mysql "SELECT table_name FROM information_schema.tables
                          WHERE table_schema = DATABASE() ORDER BY 1" ;;
        pg) sql pg "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables
                    WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1" ;;
    esac
}

# checkpoint_tables KIND: the checkpoint tables among `tables KIND` (PostgreSQL
# keeps one per schema of the imported tables).
checkpoint_tables() {
    local listed
    listed=$(tables "$1") || return
    grep -E '(^|\.)ringpipe_checkpoint$' <<<"$listed" || true
}

# checkpointed KIND: the tables that hold checkpoint rows.
checkpointed() {
    local tables table
    tables=$(checkpoint_tables "$1") || return
    while IFS= read -r table; do
        [[ -z $table ]] || sql "$1" "SELECT DISTINCT target_table FROM $table ORDER BY 1" || return
    done <<<"$tables"
}

# Step 5: the tests, then what they left behind in either database. Every test
# drops the tables it made and their checkpoint rows (a guard does so on
# failure too); the checkpoint tables the imports create are their own
# bookkeeping, dropped here when they are new and empty.
tests_leave_nothing() {
    local kind table tables left
    local -A before marked
    for kind in "${DATABASES[@]}"; do
        before[$kind]=$(tables "$kind") || return
        marked[$kind]=$(checkpointed "$kind") || return
    done
    cargo test --workspace --locked || return
    for kind in "${DATABASES[@]}"; do
        left=$(comm -13 <(sort <<<"${marked[$kind]}") <(checkpointed "$kind" | sort))
        if [[ -n $left ]]; then
            printf 'the tests left checkpoint rows of these tables (%s):\n%s\n' "$kind" "$left" >&2
            return 1
        fi
        tables=$(checkpoint_tables "$kind") || return
        while IFS= read -r table; do
            if [[ -n $table ]] && ! grep -qxF "$table" <<<"${before[$kind]}" \
                && [[ $(sql "$kind" "SELECT COUNT(*) FROM $table") == 0 ]]; then
                sql "$kind" "DROP TABLE $table" >/dev/null || return
            fi
        done <<<"$tables"
        left=$(comm -13 <(sort <<<"${before[$kind]}") <(tables "$kind" | sort))
        if [[ -n $left ]]; then
            printf 'the tests left these tables in the test database (%s):\n%s\n' "$kind" "$left" >&2
            return 1
        fi
    done
}

if [[ ${SKIP_LINT:-0} == 1 ]]; then
    skip fmt "SKIP_LINT=1"
    skip clippy "SKIP_LINT=1"
    skip doc "SKIP_LINT=1"
else
    step fmt cargo fmt --all -- --check
    step clippy cargo clippy --workspace --all-targets --locked -- -D warnings
    step doc env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
fi
step db get_db
step test tests_leave_nothing
step cluster scripts/test-cluster.sh
step loom loom_tests

joined=$(printf '%s, ' "${SUMMARY[@]}")
printf '\n==> ALL %d STEPS PASSED in %ds (%s)\n' "$TOTAL_STEPS" "$(($(now_s) - T_START))" \
    "${joined%, }"
