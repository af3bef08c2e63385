#!/usr/bin/env bash
# The main job, end to end on a fresh machine:
#   a MariaDB (the local one, or a private one started under target/),
#   60,000 generated products, one import, the summary.
#
#   scripts/demo.sh [ROWS]          (default 60000)
#
# Environment: RINGPIPE_MYSQL_URL to use another server; RINGPIPE_DEMO_ARGS
# for extra import flags (e.g. "--shards 4 --write-path insert").
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$RINGPIPE_ROOT"

rows="${1:-60000}"
table="demo_products"
work="target/demo"

url="$(scripts/dev-db.sh | tail -n 1)"
log "database: $url"

log "building ringpipe (release; the first build compiles ~150 crates: about 5 minutes on 2 cores, seconds afterwards)"
cargo build --release --locked --bin ringpipe
bin="target/release/ringpipe"

mkdir -p "$work"
file="$work/products-$rows.xml"
if [[ ! -s "$file" ]]; then
    log "generating $rows products into $file"
    "$bin" gen --rows "$rows" --out "$file"
fi

# The table: dropped and created afresh from the catalogue's DDL, through
# the client (a server that already answered may have come without one).
if ! have mariadb; then
    log "installing mariadb-client"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-client >&2 \
        || { as_root apt-get update -q >&2 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-client >&2; }
fi
parse_mysql_url "$url"
{
    echo "DROP TABLE IF EXISTS \`$table\`;"
    "$bin" gen --ddl "$table"
} | mariadb --no-defaults --protocol=TCP -h "$DB_HOST" -P "$DB_PORT" -u "$DB_USER" "$DB_NAME"

log "importing"
# shellcheck disable=SC2086 # RINGPIPE_DEMO_ARGS is a list of flags
"$bin" import "$file" --url "$url" --table "$table" --row product --mode truncate ${RINGPIPE_DEMO_ARGS:-}

log "the first rows of $table:"
# utf8mb4: the client's default (latin1 under a C locale) would print the
# catalogue's four-byte characters as '?', though the table holds them.
mariadb --no-defaults --default-character-set=utf8mb4 --protocol=TCP -h "$DB_HOST" \
    -P "$DB_PORT" -u "$DB_USER" "$DB_NAME" \
    -e "SELECT id, sku, name, price, currency FROM \`$table\` ORDER BY id LIMIT 5"
log "the binary is $bin (\`cargo install --path .\` puts ringpipe on PATH)"
