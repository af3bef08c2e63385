#!/usr/bin/env bash
# The ONE command that runs every check and test of the workspace:
#
#   1. fmt      cargo fmt --all -- --check
#   2. clippy   cargo clippy --workspace --all-targets --locked -- -D warnings
#   3. db       scripts/dev-db.sh -> RINGPIPE_TEST_MYSQL_URL (starts a private MariaDB
#               under target/dev-db/ if none answers; it is left running for reuse), and
#               scripts/dev-pg.sh -> RINGPIPE_TEST_PG_URL (likewise for PostgreSQL)
#   4. test     cargo test --workspace --locked   (unit, integration, doc tests, examples),
#               then a check that the tests left no table behind in the test database
#   5. cluster  scripts/test-cluster.sh: `--part i/3` into a three-node MariaDB Galera cluster
#               (scripts/galera.sh, under target/galera/, left running for reuse), ~2 min
#   6. loom     loom model tests of ringpipe-ring (--cfg loom, own target dir target/loom)
#   (benches and examples are compiled and linted by step 2, clippy --all-targets;
#    building them again in the release profile cost ~8 minutes for nothing)
#
# Fails fast. SKIP_LINT=1 skips steps 1-2 for local iteration (CI never sets it).
# A pre-set RINGPIPE_TEST_MYSQL_URL is offered to dev-db.sh as RINGPIPE_MYSQL_URL.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

readonly TOTAL_STEPS=6
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

# Step 3: obtain the database URL (last stdout line of dev-db.sh) and export it.
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

# Step 5: loom models. A separate target dir keeps the different RUSTFLAGS from
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

# The tables of the test database, one per line.
tables() {
    parse_mysql_url "$RINGPIPE_TEST_MYSQL_URL"
    db_sql -e "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1"
}

# The tables that hold checkpoint rows (none while there is no checkpoint table).
checkpointed() {
    grep -qx ringpipe_checkpoint <<<"$(tables)" || return 0
    parse_mysql_url "$RINGPIPE_TEST_MYSQL_URL"
    db_sql -e "SELECT DISTINCT target_table FROM ringpipe_checkpoint ORDER BY 1"
}

# Step 4: the tests, then what they left behind. Every test drops the tables
# it made and their checkpoint rows (a guard does so on failure too); the
# checkpoint table the imports create is their own bookkeeping, dropped here
# when it is new and empty.
tests_leave_nothing() {
    local before after left marked
    before=$(tables) || return
    marked=$(checkpointed) || return
    cargo test --workspace --locked || return
    left=$(comm -13 <(sort <<<"$marked") <(checkpointed | sort))
    if [[ -n $left ]]; then
        printf 'the tests left checkpoint rows of these tables:\n%s\n' "$left" >&2
        return 1
    fi
    after=$(tables) || return
    if ! grep -qx ringpipe_checkpoint <<<"$before" && grep -qx ringpipe_checkpoint <<<"$after" \
        && [[ $(db_sql -e "SELECT COUNT(*) FROM ringpipe_checkpoint") == 0 ]]; then
        db_sql -e "DROP TABLE ringpipe_checkpoint" || return
        after=$(tables) || return
    fi
    left=$(comm -13 <(sort <<<"$before") <(sort <<<"$after"))
    if [[ -n $left ]]; then
        printf 'the tests left these tables in the test database:\n%s\n' "$left" >&2
        return 1
    fi
}

if [[ ${SKIP_LINT:-0} == 1 ]]; then
    skip fmt "SKIP_LINT=1"
    skip clippy "SKIP_LINT=1"
else
    step fmt cargo fmt --all -- --check
    step clippy cargo clippy --workspace --all-targets --locked -- -D warnings
fi
step db get_db
step test tests_leave_nothing
step cluster scripts/test-cluster.sh
step loom loom_tests

joined=$(printf '%s, ' "${SUMMARY[@]}")
printf '\n==> ALL %d STEPS PASSED in %ds (%s)\n' "$TOTAL_STEPS" "$(($(now_s) - T_START))" \
    "${joined%, }"
