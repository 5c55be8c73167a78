#!/usr/bin/env bash
# Builds the reference oracle: a serde_json reader with the reference's types and checks, used to
# (re)generate canon/testdata/reference-verdicts.txt and for differential fuzzing. Offline, from
# Debian's packaged crates. Usage: canon/testdata/oracle/build.sh  → prints the binary's path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d /usr/share/cargo/registry ] || ! ls /usr/share/cargo/registry | grep -q '^serde_json'; then
  apt-get install -y -qq librust-serde-json-dev librust-serde-derive-dev >/dev/null
fi
out=${TMPDIR:-/tmp}/stdiff-oracle
mkdir -p "$out/.cargo"
cp -r "$here/Cargo.toml" "$here/src" "$out/"
cat > "$out/.cargo/config.toml" <<'CFG'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
CFG
(cd "$out" && cargo build --release -q)
echo "$out/target/release/oracle"
