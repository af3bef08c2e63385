#!/usr/bin/env bash
# Installs the Debian packages whose XML files crates/xml/tests/it/debian.rs
# reads (iso-codes, shared-mime-info), or fails: the test never skips.
set -euo pipefail
if dpkg -s iso-codes shared-mime-info >/dev/null 2>&1; then
    exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iso-codes shared-mime-info >/dev/null
