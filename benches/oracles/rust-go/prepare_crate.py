#!/usr/bin/env python3
"""Copy a registry crate into a scratch dir and make `cargo metadata --offline` succeed.

Registry crates usually fail offline resolution because their dev-dependencies
(quickcheck, criterion, doc-comment, ...) or some optional dependencies are not in
the local cargo cache, or because their shipped Cargo.lock pins versions that are
not cached.  This script:
  1. copies SRC to DST (refuses to touch DST if it exists, unless --force),
  2. deletes Cargo.lock,
  3. drops every [dev-dependencies] table (also target-specific ones),
  4. runs `cargo metadata --offline` and, while it fails with
     "no matching package named `X`", removes dependency X (normal/build/target
     tables) and every feature entry that mentions it ("X", "dep:X", "X/f", "X?/f").

Usage: prepare_crate.py SRC DST [--force]
"""
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import tomli_w

DEP_TABLES = ("dependencies", "build-dependencies", "dev-dependencies")


def load(p):
    with open(p, "rb") as f:
        return tomllib.load(f)


def save(p, doc):
    with open(p, "wb") as f:
        tomli_w.dump(doc, f)


def drop_dep(doc, name, tables=DEP_TABLES):
    removed = False
    scopes = [doc] + list(doc.get("target", {}).values())
    for scope in scopes:
        for t in tables:
            deps = scope.get(t)
            if not deps:
                continue
            for key in list(deps):
                spec = deps[key]
                pkg = spec.get("package", key) if isinstance(spec, dict) else key
                if key == name or pkg == name:
                    del deps[key]
                    removed = True
                    # delete every feature that enables the dependency (so code behind
                    # those features becomes cfg-inactive instead of unresolved), then
                    # delete references to deleted features, transitively
                    feats = doc.get("features", {})

                    def mentions(it, k):
                        return (it == k or it == f"dep:{k}" or it.startswith(f"{k}/")
                                or it.startswith(f"{k}?/"))
                    dead = {key}
                    changed = True
                    while changed:
                        changed = False
                        for fname, items in list(feats.items()):
                            if fname in dead:
                                del feats[fname]
                                changed = True
                            elif any(mentions(it, k) and not it.startswith(f"{k}?/")
                                     for it in items for k in dead):
                                dead.add(fname)
                                del feats[fname]
                                changed = True
                            else:
                                feats[fname] = [it for it in items
                                                if not any(mentions(it, k) for k in dead)]
    return removed


def main():
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    if dst.exists():
        if "--force" not in sys.argv:
            sys.exit(f"{dst} exists (use --force)")
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    (dst / "Cargo.lock").unlink(missing_ok=True)
    manifest = dst / "Cargo.toml"
    doc = load(manifest)
    doc.pop("dev-dependencies", None)
    for t in doc.get("target", {}).values():
        t.pop("dev-dependencies", None)
    save(manifest, doc)
    env = {"CARGO_NET_OFFLINE": "true"}
    import os
    env = {**os.environ, **env}
    for _ in range(30):
        r = subprocess.run(["cargo", "metadata", "--offline", "--format-version", "1"],
                           cwd=dst, env=env, capture_output=True, text=True)
        if r.returncode == 0:
            print(f"OK: cargo metadata succeeds in {dst}")
            return
        m = re.search(r"no matching package named `([^`]+)`", r.stderr) or \
            re.search(r"failed to select a version for the requirement `([^ =`]+)", r.stderr)
        if not m:
            sys.exit("cargo metadata failed:\n" + r.stderr)
        name = m.group(1)
        print(f"dropping unavailable dependency {name}")
        doc = load(manifest)
        if not drop_dep(doc, name):
            sys.exit(f"could not find dependency {name} in manifest\n{r.stderr}")
        save(manifest, doc)
    sys.exit("gave up")


if __name__ == "__main__":
    main()
