#!/usr/bin/env bash
# One-time setup for the Rust oracle (idempotent).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# 1. rust-analyzer binary + std sources (the rustup proxy exists but the component is
#    not installed by default: "Unknown binary 'rust-analyzer' in official toolchain").
rustup component add rust-analyzer rust-src
rust-analyzer --version
# 2. Python deps (venv shared with the Go oracle)
[ -x "$HERE/../venv/bin/python" ] || python3 -m venv "$HERE/../venv"
"$HERE/../venv/bin/pip" install -q tomli_w tree-sitter tree-sitter-rust
# 3. Private CARGO_HOME = copy of ~/.cargo/registry (index+cache) + the sysroot's locked
#    dependencies.  Without them rust-analyzer's `cargo metadata` on library/ fails offline
#    ("no matching package named `rand_xorshift`"), it falls back to --no-deps, the
#    std -> alloc -> core dependency edges are lost and almost every std call is unresolved.
CH=$HERE/cargo-home
mkdir -p "$CH/registry"
cp -rn ~/.cargo/registry/cache ~/.cargo/registry/index "$CH/registry/" 2>/dev/null || true
SYS=$(rustc --print sysroot)/lib/rustlib/src/rust/library
CARGO_HOME=$CH RUSTC_BOOTSTRAP=1 cargo fetch --manifest-path "$SYS/Cargo.toml"   # online, crates.io only
CARGO_HOME=$CH RUSTC_BOOTSTRAP=1 CARGO_NET_OFFLINE=true \
  cargo metadata --format-version 1 --manifest-path "$SYS/Cargo.toml" >/dev/null && echo "sysroot metadata OK offline"
echo '{"cargo": {"features": "all"}}' > "$HERE/ra-allfeatures.json"
