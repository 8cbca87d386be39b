#!/usr/bin/env python3
"""Test selection measured by running tests (`make bench-impact`).

    impact.py CRUXE [--samples N] [--seed S] [--cache DIR] [--out DIR]

For each corpus (a real project whose tests run offline here), it samples library
functions, makes one edit per function that fails at its entry (Python: `raise`
as the first statement), runs the project's tests, and records which fail. It then
asks `cruxe impact --diff HEAD --run-ids [--depth N]` (the README's CI recipe) for the same
edit and scores the tests it named against the tests that failed:

  recall      failing tests (files, functions) the answer named / failing tests
  precision   named tests that failed / named tests
  exact miss  an answer that said `exact` (exit 0) yet missed a failing test: must be 0

An edit that fails no test is left out of the scores (counted). Setup is cached
under --cache (default ~/.cache/cruxe-impact): the project's sdist from PyPI and a
venv with its test runner; the tree is a git repository so that `--diff HEAD` is
the edit. Prints markdown; JSON and per-edit details go to --out.
"""
import argparse
import ast
import fcntl
import json
import os
import random
import re
import subprocess
import sys
import time

CORPORA = {
    # name: (pip requirement, source dir in the sdist, test command after the venv's python)
    "py-click": ("click==8.4.0", "src", ["-m", "pytest", "-q", "-p", "no:cacheprovider",
                                          "-p", "no:randomly", "--tb=no", "-rfE", "tests"]),
}
RUNNER = ["pytest==8.4.2"]
MARK = "cruxe-bench-impact"


def sh(cmd, cwd=None, env=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip()[-800:]}")
    return r


def setup(cache, name):
    req, _, _ = CORPORA[name]
    venv = os.path.join(cache, "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        sh([sys.executable, "-m", "venv", venv])
        sh([py, "-m", "pip", "install", "-q", *RUNNER])
    tree = os.path.join(cache, name, "tree")
    if not os.path.isdir(os.path.join(tree, ".git")):
        dl = os.path.join(cache, name, "sdist")
        os.makedirs(dl, exist_ok=True)
        sh([py, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", req, "-d", dl])
        tar = [f for f in os.listdir(dl) if f.endswith(".tar.gz")][0]
        sh(["tar", "xzf", os.path.join(dl, tar), "-C", dl])
        src = os.path.join(dl, tar[: -len(".tar.gz")])
        os.rename(src, tree)
        git = ["git", "-c", "user.email=bench@cruxe", "-c", "user.name=bench"]
        sh(["git", "init", "-q"], cwd=tree)
        sh(git + ["add", "-A"], cwd=tree)
        sh(git + ["commit", "-q", "-m", "sdist"], cwd=tree)
    return py, tree


def failing(py, tree, name, only=None):
    """Failing test node ids (parameters dropped) of a test run (of the tests
    `only` names, else all), and its time."""
    _, srcdir, cmd = CORPORA[name]
    if only:
        cmd = [c for c in cmd if c != "tests"] + list(only)
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, srcdir), PYTHONDONTWRITEBYTECODE="1")
    t0 = time.time()
    r = sh([py, *cmd], cwd=tree, env=env, check=False)
    out = set()
    for line in r.stdout.splitlines():
        m = re.match(r"(?:FAILED|ERROR) (\S+?)(?:\[.*?\])?(?: - .*)?$", line)
        if m:
            out.add(m.group(1))
    return out, time.time() - t0


def functions(tree, srcdir):
    """Library functions whose body starts on a line of its own: (path, line, indent)."""
    out = []
    root = os.path.join(tree, srcdir)
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            try:
                mod = ast.parse(open(path).read())
            except SyntaxError:
                continue
            for n in ast.walk(mod):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
                    first = n.body[0]
                    if first.lineno > n.lineno and not n.name.startswith("__"):
                        out.append((os.path.relpath(path, tree), first.lineno, first.col_offset, n.name))
    return sorted(out)


def impact(cruxe, tree, data, depth):
    r = sh([cruxe, "impact", "--diff", "HEAD", "--run-ids", "--depth", str(depth), "--data", data, "-C", tree],
           check=False)
    if r.returncode not in (0, 3):
        raise RuntimeError(f"cruxe impact: {r.stderr.strip()[-500:]}")
    ids = [l for l in r.stdout.splitlines() if l and not l.startswith("#")]
    return r.returncode, ids, [l for l in r.stdout.splitlines() if l.startswith("# lower_bound")]


def pct(a, b):
    return None if not b else round(100.0 * a / b, 1)


def run(args, name):
    # One run at a time: the edits are made in the shared tree.
    os.makedirs(os.path.join(args.cache, name), exist_ok=True)
    lock = open(os.path.join(args.cache, name, ".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"another bench-impact run is editing {args.cache}/{name}: wait for it")
    py, tree = setup(args.cache, name)
    _, srcdir, _ = CORPORA[name]
    data = os.path.join(args.cache, name, "data")
    sh([args.cruxe, "index", tree, "--data", data, "--force"])
    base, base_s = failing(py, tree, name)
    funcs = functions(tree, srcdir)
    rng = random.Random(args.seed)
    sample = rng.sample(funcs, min(args.samples, len(funcs)))
    edits = []
    flaky = set()
    for path, line, col, fn in sample:
        full = os.path.join(tree, path)
        text = open(full).read()
        lines = text.split("\n")
        lines.insert(line - 1, " " * col + f'raise RuntimeError("{MARK}")')
        open(full, "w").write("\n".join(lines))
        try:
            failed, secs = failing(py, tree, name)
            code, ids, note = impact(args.cruxe, tree, data, args.depth)
        finally:
            open(full, "w").write(text)
        failed -= base
        if failed:
            # A test that fails on the clean tree too is flaky here, not the edit's.
            again, _ = failing(py, tree, name, sorted(failed))
            flaky |= again
            failed -= again
        named = {i.split("[")[0] for i in ids}
        edits.append((f"{path}:{fn}", failed, named, code, note, secs))
        print(f"{name} {path}:{fn}: {len(failed)} failed, {len(named)} named, exit {code}", file=sys.stderr)
    # A test found flaky at any edit is left out of every edit's failures.
    return {"corpus": name, "baseline_failures": len(base), "baseline_secs": round(base_s, 1),
            "flaky": sorted(flaky),
            "functions": len(funcs), "edits": [scored(e, flaky) for e in edits]}


def scored(edit, flaky):
    function, failed, named, code, note, secs = edit
    failed = failed - flaky
    files_failed = {f.split("::")[0] for f in failed}
    files_named = {i.split("::")[0] for i in named}
    return {
        "function": function, "tests_failed": len(failed), "files_failed": len(files_failed),
        "named": len(named), "exit": code, "lower_bound": note[0] if note else None,
        "missed_functions": sorted(failed - named), "missed_files": sorted(files_failed - files_named),
        "hit_functions": len(failed & named), "hit_files": len(files_failed & files_named),
        "files_named": len(files_named), "test_secs": round(secs, 1),
    }


def summary(res):
    e = [x for x in res["edits"] if x["tests_failed"]]
    f_fail = sum(x["files_failed"] for x in e)
    f_hit = sum(x["hit_files"] for x in e)
    f_named = sum(x["files_named"] for x in e)
    t_fail = sum(x["tests_failed"] for x in e)
    t_hit = sum(x["hit_functions"] for x in e)
    t_named = sum(x["named"] for x in e)
    exact = [x for x in e if x["exit"] == 0]
    return {
        "edits": len(res["edits"]), "edits_failing": len(e),
        "file_recall": pct(f_hit, f_fail), "file_precision": pct(f_hit, f_named),
        "test_recall": pct(t_hit, t_fail), "test_precision": pct(t_hit, t_named),
        "exact": len(exact), "exact_misses": sum(1 for x in exact if x["missed_files"] or x["missed_functions"]),
        "lower_bound": sum(1 for x in e if x["exit"] == 3),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cruxe")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--depth", type=int, default=10, help="cruxe impact --depth (the README recipe: 10)")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/cruxe-impact"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "impact-out"))
    args = ap.parse_args()
    args.cruxe = os.path.abspath(args.cruxe)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in CORPORA:
        res = run(args, name)
        res["summary"] = summary(res)
        json.dump(res, open(os.path.join(args.out, f"{name}.json"), "w"), indent=1)
        rows.append((name, res["summary"]))
    print("| corpus | edits (failing a test) | test files: recall % | precision % | test functions: recall % "
          "| precision % | answers exact | misses under exact | lower_bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, s in rows:
        print(f"| {name} | {s['edits']} ({s['edits_failing']}) | {s['file_recall']} | {s['file_precision']} | "
              f"{s['test_recall']} | {s['test_precision']} | {s['exact']} | {s['exact_misses']} | {s['lower_bound']} |")


if __name__ == "__main__":
    main()
