#!/usr/bin/env python3
"""Make one cargo workspace of several crates.io packages, as their own repository has it.

A project such as ripgrep publishes its workspace as separate crates (ripgrep, grep,
grep-searcher, ...), which name each other by version. This script unpacks each
`.crate` into DST/NAME, writes DST/Cargo.toml with every package a member and a
`[patch.crates-io]` entry for each, so that the members resolve to one another (as the
repository's path dependencies do), fetches the rest once from crates.io, and then
makes `cargo metadata --offline` pass the way prepare_crate.py does: dev-dependencies
dropped, unavailable dependencies (and the features naming them) removed.

Usage: prepare_workspace.py DST CRATE_DIR NAME-VERSION...   (CRATE_DIR holds NAME-VERSION.crate)
"""
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from prepare_crate import drop_dep, load, save


def unpack(crate, dst):
    with tarfile.open(crate) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(dst.parent, filter="data")
    (dst.parent / top).rename(dst)


def main():
    dst, crates, pkgs = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    members = []
    for pkg in pkgs:
        name = pkg.rsplit("-", 1)[0]
        unpack(crates / f"{pkg}.crate", dst / name)
        (dst / name / "Cargo.lock").unlink(missing_ok=True)
        manifest = dst / name / "Cargo.toml"
        doc = load(manifest)
        doc.pop("dev-dependencies", None)
        for t in doc.get("target", {}).values():
            t.pop("dev-dependencies", None)
        save(manifest, doc)
        members.append(name)
    with open(dst / "Cargo.toml", "w") as f:
        f.write("[workspace]\nresolver = \"2\"\nmembers = [%s]\n\n[patch.crates-io]\n"
                % ", ".join(f'"{m}"' for m in members))
        for m in members:
            f.write(f'{m} = {{ path = "{m}" }}\n')
    # online once (crates.io): the members' own dependencies
    subprocess.run(["cargo", "fetch"], cwd=dst, check=True,
                   env={k: v for k, v in os.environ.items() if k != "CARGO_NET_OFFLINE"})
    env = {**os.environ, "CARGO_NET_OFFLINE": "true"}
    for _ in range(30):
        r = subprocess.run(["cargo", "metadata", "--offline", "--format-version", "1"],
                           cwd=dst, env=env, capture_output=True, text=True)
        if r.returncode == 0:
            (dst / "Cargo.lock").unlink(missing_ok=True)
            print(f"OK: cargo metadata succeeds in {dst} ({len(members)} members)")
            return
        m = re.search(r"no matching package named `([^`]+)`", r.stderr)
        if not m:
            sys.exit("cargo metadata failed:\n" + r.stderr)
        name = m.group(1)
        print(f"dropping unavailable dependency {name}")
        if not any([drop_dep(doc := load(dst / mb / "Cargo.toml"), name)
                    and save(dst / mb / "Cargo.toml", doc) is None for mb in members]):
            sys.exit(f"no member names {name}\n{r.stderr}")
    sys.exit("gave up")


if __name__ == "__main__":
    main()
