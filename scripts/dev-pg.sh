#!/usr/bin/env bash
# Make sure a PostgreSQL server answers and print its URL as the LAST line of stdout.
#
#   scripts/dev-pg.sh [--force-private]   ensure a server; print postgres://user@host:port/db
#   scripts/dev-pg.sh stop                stop the private cluster (never the system one)
#
# Order of preference (first that answers wins):
#   1. $RINGPIPE_TEST_PG_URL
#   2. 127.0.0.1:5432 as postgres (trust), database `test` (created if missing)
#   3. a PRIVATE cluster under <repo>/target/dev-pg/ on port 5433, trust
#      authentication on 127.0.0.1 only; postgresql is installed with apt-get
#      when missing. The cluster is left running and reused by later runs.
# --force-private (or RINGPIPE_FORCE_PRIVATE_PG=1) skips 1 and 2.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly DEV_DIR="$RINGPIPE_ROOT/target/dev-pg"
readonly DATA_DIR="$DEV_DIR/data"
readonly PRIVATE_PORT="${RINGPIPE_DEV_PG_PORT:-5433}"

# answers HOST PORT: does a server there take the postgres user's login?
answers() { have psql && psql -h "$1" -p "$2" -U postgres -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1; }

# with_test_db HOST PORT: creates database `test` if missing, prints the URL.
with_test_db() {
    psql -h "$1" -p "$2" -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
        | grep -q 1 || psql -h "$1" -p "$2" -U postgres -d postgres -qc 'CREATE DATABASE test' >&2
    echo "postgres://postgres@$1:$2/test"
}

# bin: the newest installed PostgreSQL's binary directory (installing it if needed).
bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [[ -z $dir ]]; then
        log "installing postgresql"
        as_root apt-get update -q >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql postgresql-client >&2
        dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
    echo "$dir"
}

private() {
    local pg
    pg=$(bin)
    if [[ ! -s $DATA_DIR/PG_VERSION ]]; then
        log "initialising a private cluster in $DATA_DIR"
        mkdir -p "$DATA_DIR"
        as_root chown -R postgres:postgres "$DEV_DIR"
        as_root runuser -u postgres -- "$pg/initdb" -D "$DATA_DIR" -U postgres --auth=trust >&2
    fi
    if ! answers 127.0.0.1 "$PRIVATE_PORT"; then
        log "starting the private cluster on port $PRIVATE_PORT"
        as_root runuser -u postgres -- "$pg/pg_ctl" -D "$DATA_DIR" -l "$DEV_DIR/server.log" -w \
            -o "-p $PRIVATE_PORT -k $DATA_DIR -h 127.0.0.1" start >&2
    fi
    with_test_db 127.0.0.1 "$PRIVATE_PORT"
}

case "${1:-}" in
stop)
    [[ -s $DATA_DIR/PG_VERSION ]] && as_root runuser -u postgres -- "$(bin)/pg_ctl" -D "$DATA_DIR" -w stop >&2
    exit 0
    ;;
--force-private) private; exit ;;
esac
if [[ ${RINGPIPE_FORCE_PRIVATE_PG:-0} == 1 ]]; then
    private
elif [[ -n ${RINGPIPE_TEST_PG_URL:-} ]]; then
    echo "$RINGPIPE_TEST_PG_URL"
elif answers 127.0.0.1 5432; then
    with_test_db 127.0.0.1 5432
else
    private
fi
