//! One completeness rule for every graph answer (issue 52): `exact` only when
//! no site that could reach a node of the answer was left unproven, else
//! `lower_bound` with the count and the first sites, each with its reason.
//! Through a real `cruxe serve` (the tools) and the real CLI (`cruxe impact`
//! exits 3 on a lower bound, and says so on stdout).

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{cruxe_bin, s};
use crate::mcp::{call, serve_paths, wait_ready};

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

/// `analyze_impact` of `symbol` (depth 10) on a repo `name` of `files`,
/// served: the answer and the tests it names to run.
fn impact_on(name: &str, files: &[(&str, &str)], symbol: &str) -> (Value, Vec<String>) {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join(name);
    write(&root, files);
    let server = serve_paths(tmp, std::slice::from_ref(&root), &[], &[]);
    wait_ready(&server);
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": symbol, "depth": 10}),
    );
    let tests = (i["tests"].as_array().expect("tests").iter())
        .map(|t| s(&t["run"]))
        .collect();
    (i, tests)
}

/// A Python package where each way a caller hides appears once.
fn python(root: &Path) {
    write(
        root,
        &[
            (
                "app/core.py",
                "def leaf():\n    return 1\n\n\ndef direct():\n    return leaf()\n\n\ndef only_direct():\n    return 2\n\n\nclass Engine:\n    def run(self):\n        return direct()\n\n\nclass Other:\n    def run(self):\n        return 0\n\n\ndef handler(request):\n    return only_direct()\n",
            ),
            (
                "app/use.py",
                "from app.core import only_direct, handler\nfrom lib import register\n\n\ndef calls_plainly():\n    return only_direct()\n\n\ndef drives(thing):\n    return thing.run()\n\n\nregister(handler)\n",
            ),
            (
                "app/web.py",
                "from http.server import BaseHTTPRequestHandler\n\n\nclass Page(BaseHTTPRequestHandler):\n    def do_GET(self):\n        return render()\n\n    def __str__(self):\n        return render()\n\n\ndef render():\n    return 'page'\n",
            ),
            (
                "app/flow.py",
                "class Flow:\n    def run(self):\n        return self.step()\n\n    def step(self):\n        return 0\n\n\nclass Custom(Flow):\n    def step(self):\n        return work()\n\n\ndef work():\n    return 1\n\n\ndef solo():\n    return 3\n\n\ndef top():\n    return solo()\n",
            ),
            (
                "app/wrap.py",
                "import textwrap\n\n\nclass TextWrapper(textwrap.TextWrapper):\n    def _handle_long_word(self, chunks, line, length, width):\n        return trim()\n\n\ndef trim():\n    return ''\n",
            ),
            (
                "app/tasks.py",
                "import pickle\nimport subprocess\nimport threading\n\n\ndef clean():\n    return 0\n\n\ndef restore():\n    return 1\n\n\ndef sweep():\n    subprocess.clean()\n    items = []\n    items.clean()\n    threading.Thread(target=None).clean()\n    pickle.loads(b'').restore()\n    return clean() + restore()\n",
            ),
            (
                "app/shapes.py",
                "import vendor\n\n\nclass Base:\n    def area(self):\n        return 0\n\n\nclass Known(Base):\n    def area(self):\n        return 1\n\n\nclass Hidden(vendor.Base):\n    def area(self):\n        return 2\n",
            ),
            (
                "app/props.py",
                "def size():\n    return 4\n\n\nclass Box:\n    @property\n    def volume(self):\n        return size()\n\n\ndef measure(box):\n    return box.volume\n",
            ),
            (
                "app/props.ts",
                "export function weigh(): number {\n  return 1;\n}\n\nexport class Crate {\n  get weight(): number {\n    return weigh();\n  }\n}\n",
            ),
            // A method called through a computed member (a table of names
            // drives `target[name]`, bound and then called), and one that
            // no key or string of the file names.
            (
                "app/detach.ts",
                "export class Schema {\n  squeeze(): Schema {\n    return this;\n  }\n\n  widen(): Schema {\n    return this;\n  }\n}\n\nconst probes: Record<string, number[]> = { squeeze: [] };\n\nexport function probeAll(s: Schema): void {\n  for (const name of Object.keys(probes)) {\n    const target: any = s;\n    const m = target[name] as Function;\n    m();\n  }\n}\n\nexport function widenOnce(s: Schema): Schema {\n  return s.widen();\n}\n",
            ),
            // A module namespace indexed by a name and called: what it
            // re-exports is proven, a function it defines itself is not.
            (
                "app/handlers/index.ts",
                "export { default as greet } from \"./greet\";\n\nexport function shout(): number {\n  return 2;\n}\n",
            ),
            (
                "app/handlers/greet.ts",
                "export default function () {\n  return 1;\n}\n",
            ),
            (
                "app/dispatch.ts",
                "import * as handlers from \"./handlers/index\";\n\nexport function handle(name: string): number {\n  return (handlers as any)[name]();\n}\n",
            ),
        ],
    );
}

/// Asserts `cruxe calls` output `out` lists each of `sites` (its source text)
/// among the unproven sites, as `[unresolved]`.
fn assert_unproven(out: &str, sites: &[&str]) {
    for unproven in sites {
        assert!(
            out.lines()
                .any(|l| l.contains("[unresolved]") && l.contains(unproven)),
            "{unproven}: {out}"
        );
    }
}

fn reasons(v: &Value) -> Vec<String> {
    v["unproven_sites"]
        .as_array()
        .expect("unproven_sites")
        .iter()
        .map(|u| s(&u["reason"]))
        .collect()
}

#[test]
fn graph_answers_are_exact_only_when_nothing_could_reach_them_unproven() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("py");
    python(&root);
    // The command line reads its own index (`PATH/.cruxe`); the server its.
    let o = std::process::Command::new(cruxe_bin())
        .arg("index")
        .arg(&root)
        .output()
        .expect("index");
    assert!(o.status.success(), "{o:?}");
    let server = serve_paths(tmp, std::slice::from_ref(&root), &[], &[]);
    wait_ready(&server);

    // Called plainly, and nothing else names it: exact.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "only_direct", "depth": 1}),
    );
    assert_eq!(g["completeness"], "exact", "{g}");
    assert_eq!(g["unproven"], 0, "{g}");

    // Calls on a library module, a literal and a library value of the same
    // name (`subprocess.clean()`, `items.clean()`) are theirs: exact.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "clean", "depth": 1}),
    );
    assert_eq!(g["completeness"], "exact", "{g}");
    assert_eq!(g["nodes"][1]["name"], "sweep", "{g}");
    // What a library function returns may be of the repo's types.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "restore", "depth": 1}),
    );
    assert_eq!(g["completeness"], "lower_bound", "{g}");
    assert!(
        s(&g["unproven_sites"][0]["text"]).contains("pickle.loads"),
        "{g}"
    );

    // A property's getter runs where the property is read (`box.volume`),
    // which no call site names: what reaches it is a lower bound.
    for (name, getter) in [("size", "volume"), ("weigh", "weight")] {
        let g = call(
            &server,
            "get_call_graph",
            json!({"symbol_name": name, "depth": 2}),
        );
        assert_eq!(g["completeness"], "lower_bound", "{g}");
        let site = g["unproven_sites"]
            .as_array()
            .expect("sites")
            .iter()
            .find(|u| u["reason"] == "accessor")
            .unwrap_or_else(|| panic!("no accessor site: {g}"));
        assert_eq!(site["name"], getter, "{g}");
    }

    // `thing.run()` on a receiver of unknown type could be Engine.run.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "Engine.run", "depth": 1}),
    );
    assert_eq!(g["completeness"], "lower_bound", "{g}");
    assert!(reasons(&g).contains(&"unresolved".to_string()), "{g}");
    let site = &g["unproven_sites"][0];
    assert_eq!(site["path"], "app/use.py", "{g}");
    assert_eq!(site["from"]["name"], "drives", "{g}");
    assert!(s(&site["text"]).contains("thing.run()"), "{g}");

    // A function passed to a library: what calls it is not seen.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "handler", "depth": 1}),
    );
    assert_eq!(g["completeness"], "lower_bound", "{g}");
    assert!(reasons(&g).contains(&"function_value".to_string()), "{g}");

    // A method of a class with a library base, and a dunder the runtime calls.
    for name in ["Page.do_GET", "Page.__str__"] {
        let g = call(
            &server,
            "get_call_graph",
            json!({"symbol_name": name, "depth": 1}),
        );
        assert_eq!(g["completeness"], "lower_bound", "{name}: {g}");
        assert!(
            reasons(&g).contains(&"outside_override".to_string()),
            "{name}: {g}"
        );
    }

    // Callees: `drives` calls something no tier proved.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "drives", "direction": "callees", "depth": 1}),
    );
    assert_eq!(g["completeness"], "lower_bound", "{g}");

    // find_references says the same as get_call_graph.
    let r = call(
        &server,
        "find_references",
        json!({"symbol_name": "Engine.run"}),
    );
    assert_eq!(r["completeness"], "lower_bound", "{r}");
    assert!(r["unproven"].as_u64().expect("unproven") >= 1, "{r}");
    let r = call(
        &server,
        "find_references",
        json!({"symbol_name": "only_direct"}),
    );
    assert_eq!(r["completeness"], "exact", "{r}");

    // Impact: `leaf` itself is called plainly, but what calls it is reached
    // by `Engine.run`, which an unproven site may call: every affected
    // symbol counts, not only the changed one.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "leaf", "depth": 3}),
    );
    assert_eq!(i["completeness"], "lower_bound", "{i}");
    assert!(
        i["unproven_sites"]
            .as_array()
            .expect("sites")
            .iter()
            .any(|u| u["name"] == "run"),
        "{i}"
    );
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "only_direct", "depth": 2}),
    );
    // `handler` calls it, and `handler` is passed to a library.
    assert_eq!(i["completeness"], "lower_bound", "{i}");
    // One step only: nothing unproven reaches `only_direct` itself, but
    // `handler`, at the last step, is pointed at from further away.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "only_direct", "depth": 1}),
    );
    assert_eq!(i["completeness"], "lower_bound", "{i}");
    assert!(s(&i["notes"][0]).contains("from further away"), "{i}");
    // `top` calls `solo`, and nothing calls `top`: the whole reach, exact.
    for depth in [1, 3] {
        let i = call(
            &server,
            "analyze_impact",
            json!({"symbol_name": "solo", "depth": depth}),
        );
        assert_eq!(i["completeness"], "exact", "{i}");
        assert_eq!(i["affected"][0]["name"], "top", "{i}");
    }
    // Dispatch upward: `Custom.step` overrides `Flow.step`, which `Flow.run`
    // calls on `self`: a change to `work` reaches `run`.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "work", "depth": 3}),
    );
    let reached: Vec<(String, u64, String)> = i["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| {
            (
                s(&a["qualified_name"]),
                a["distance"].as_u64().unwrap_or(0),
                s(&a["via"]["relation"]),
            )
        })
        .collect();
    assert!(
        reached.contains(&("app.flow.Flow.step".into(), 2, "dispatch".into())),
        "{i}"
    );
    assert!(
        reached.contains(&("app.flow.Flow.run".into(), 3, "calls".into())),
        "{i}"
    );
    assert_eq!(i["completeness"], "exact", "{i}");
    // A class named like its library base overrides the library's method.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "trim", "depth": 3}),
    );
    assert_eq!(i["completeness"], "lower_bound", "{i}");
    assert!(reasons(&i).contains(&"outside_override".to_string()), "{i}");

    // Implementations: a subclass whose base no tier tied to `Base`.
    let im = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "Base"}),
    );
    assert_eq!(im["completeness"], "lower_bound", "{im}");
    let types: Vec<String> = im["types"]
        .as_array()
        .expect("types")
        .iter()
        .map(|t| s(&t["name"]))
        .collect();
    assert_eq!(types, ["Known"], "{im}");
    let sup = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "Page", "direction": "supertypes"}),
    );
    assert_eq!(sup["completeness"], "lower_bound", "{sup}");
    assert_eq!(reasons(&sup), ["outside_type"], "{sup}");
    let sup = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "Known", "direction": "supertypes"}),
    );
    assert_eq!(sup["completeness"], "exact", "{sup}");

    // The command line: stdout says so, and `impact` exits 3.
    let cli = |args: &[&str]| {
        std::process::Command::new(cruxe_bin())
            .args(args)
            .arg("-C")
            .arg(&root)
            .output()
            .expect("run")
    };
    let o = cli(&["calls", "Engine.run"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("lower_bound: "), "{out}");
    assert!(out.contains("thing.run()"), "{out}");
    let o = cli(&["calls", "only_direct", "--depth", "1"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("complete: exact"),
        "{o:?}"
    );
    let o = cli(&["impact", "--symbol", "leaf"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("# lower_bound"),
        "{o:?}"
    );
    let o = cli(&["impact", "--symbol", "render", "--depth", "2", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let o = cli(&["impact", "--symbol", "solo", "--depth", "1"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // `target[name]` may be `squeeze` (a key of `probes`), never `widen`.
    let o = cli(&["calls", "Schema.squeeze", "--depth", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("lower_bound: "), "{out}");
    assert!(out.contains("const m = target[name]"), "{out}");
    let o = cli(&["calls", "Schema.widen", "--depth", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("complete: exact"), "{out}");
    assert!(out.contains("widenOnce"), "{out}");
    // `handlers[name]()`: the re-exported default function is a callee
    // (`dispatch`); `shout`, defined by the namespace's module, may be one.
    let o = cli(&["calls", "app/handlers/greet:default", "--depth", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("app/dispatch:handle") && out.contains("[dispatch]"),
        "{out}"
    );
    let o = cli(&["calls", "shout", "--depth", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("lower_bound: ") && out.contains("(handlers as any)[name]()"),
        "{out}"
    );
    let o = cli(&["calls", "handle", "--callees", "--depth", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("app/handlers/greet:default") && out.contains("lower_bound: "),
        "{out}"
    );
}

/// A module-level value computed from a function (`stdout = cached(get)`)
/// depends on it, and so does whatever uses the value:
/// impact reaches the value one step past its file, then its users and their
/// tests (click's `echo` reaches its stream functions so). Values whose line
/// does not touch the change stay out.
#[test]
fn impact_goes_through_module_values_built_from_the_change() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("streams");
    write(
        &root,
        &[
            (
                "lib/streams.py",
                "def get_stdout():\n    return 1\n\n\ndef get_stderr():\n    return 2\n\n\ndef cached(f):\n    def again():\n        return f()\n    return again\n\n\ndefault_stdout = cached(get_stdout)\ndefault_stderr = cached(get_stderr)\n",
            ),
            (
                "lib/echo.py",
                "from lib.streams import default_stdout, default_stderr\n\n\ndef echo():\n    return default_stdout()\n\n\ndef warn():\n    return default_stderr()\n",
            ),
            (
                "tests/test_echo.py",
                "from lib.echo import echo, warn\n\n\ndef test_echo():\n    assert echo() == 1\n\n\ndef test_warn():\n    assert warn() == 2\n",
            ),
        ],
    );
    let server = serve_paths(tmp, &[root], &[], &[]);
    wait_ready(&server);
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "get_stdout", "depth": 5}),
    );
    let affected: Vec<(String, i64)> = i["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| (s(&a["qualified_name"]), a["distance"].as_i64().unwrap_or(0)))
        .collect();
    for want in [
        "lib.streams.default_stdout",
        "lib.echo.echo",
        "tests.test_echo.test_echo",
    ] {
        assert!(affected.iter().any(|(q, _)| q == want), "{want}: {i}");
    }
    for not in [
        "lib.streams.default_stderr",
        "lib.echo.warn",
        "tests.test_echo.test_warn",
    ] {
        assert!(!affected.iter().any(|(q, _)| q == not), "{not}: {i}");
    }
    let tests: Vec<String> = i["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| s(&t["run"]))
        .collect();
    assert!(
        tests.contains(&"tests/test_echo.py::test_echo".to_string()),
        "{tests:?}"
    );
    assert!(
        !tests.contains(&"tests/test_echo.py::test_warn".to_string()),
        "{tests:?}"
    );
}

/// `find_references` of a type says `exact` only when it lists every place
/// the code names it: `fixtures/type-uses/<language>` writes types in every
/// position the language has (Rust: impl targets, path qualifiers, turbofish,
/// casts, patterns, tuple fields, aliases, `where` clauses, macro arguments and
/// templates; Python and TypeScript: classes passed, returned, read from,
/// listed; Go: `new`, `make`, slice and map literals, type switches, type
/// arguments, method expressions). Every word naming one, but its definition,
/// must be in the answer; anything else there must be `Self` or a generic
/// parameter bound by it.
#[test]
fn a_type_is_found_wherever_the_code_names_it() {
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (
            "rust",
            &["src/lib.rs", "src/uses.rs"],
            &["Chain", "Show", "E"],
        ),
        ("python", &["pkg/core.py"], &["Chain"]),
        ("typescript", &["src/a.ts"], &["Chain"]),
        ("go", &["a.go"], &["Chain"]),
    ];
    let tmp = tempfile::tempdir().expect("tmp");
    for (language, files, names) in cases {
        let root = tmp.path().join(language);
        crate::common::copy_tree(
            &crate::common::fixture(&format!("type-uses/{language}")),
            &root,
        );
        let cli = |args: &[&str]| crate::common::cruxe_in(&root, args);
        let o = cli(&["index", "."]);
        assert!(o.status.success(), "{o:?}");
        let sources: Vec<(String, String)> = files
            .iter()
            .map(|p| {
                (
                    p.to_string(),
                    std::fs::read_to_string(root.join(p)).expect("read"),
                )
            })
            .collect();
        for name in names {
            let o = cli(&["refs", name, "--json"]);
            assert!(o.status.success(), "{o:?}");
            let answer: Value = serde_json::from_slice(&o.stdout).expect("json");
            assert_eq!(
                s(&answer["completeness"]),
                "exact",
                "{language} {name}: {answer}"
            );
            let got: Vec<(String, usize, usize)> = answer["references"]
                .as_array()
                .expect("references")
                .iter()
                .map(|r| {
                    let n = |k: &str| r[k].as_u64().expect("number") as usize;
                    (s(&r["path"]), n("line"), n("col"))
                })
                .collect();
            let want = words(&sources, name);
            assert!(want.len() >= 5, "{language} {name}: {want:?}");
            let missing: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
            assert!(
                missing.is_empty(),
                "{language} {name}: missing {missing:?} in {answer}"
            );
            for (path, line, col) in got.iter().filter(|g| !want.contains(g)) {
                let text = &sources.iter().find(|(p, _)| p == path).expect("file").1;
                let rest = &text.lines().nth(line - 1).expect("line")[col - 1..];
                assert!(
                    rest.starts_with("Self") || rest.starts_with("T>") || rest.starts_with("cls("),
                    "{language} {name} at {path}:{line}:{col}: {rest}"
                );
            }
        }
    }
}

/// Where the sources name `name` as a word, outside comments and its own
/// definition: (path, line, column), 1-based.
fn words(sources: &[(String, String)], name: &str) -> Vec<(String, usize, usize)> {
    let defines = |line: &str| {
        [
            "pub struct",
            "pub trait",
            "pub enum",
            "class",
            "export class",
            "type",
        ]
        .iter()
        .any(|k| {
            line.starts_with(&format!("{k} {name} ")) || line.starts_with(&format!("{k} {name}:"))
        })
    };
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = Vec::new();
    for (path, text) in sources {
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") || code.starts_with('#') || defines(line) {
                continue;
            }
            for (at, _) in line.match_indices(name) {
                if !word(line[..at].chars().last()) && !word(line[at + name.len()..].chars().next())
                {
                    // A forward reference (`-> "Chain"`) is the string's.
                    let quoted = line[..at].ends_with('"');
                    out.push((path.clone(), i + 1, at + 1 - usize::from(quoted)));
                }
            }
        }
    }
    out
}

/// Rust macros: a `macro_rules!` template's calls are the macro's, and an
/// invocation calls the macro; tests a macro of a test module writes (no
/// symbol of their own) are run through the module (`cargo test -- tests::`).
/// aho-corasick writes its tests so (`testcombo!` → `testconfig!` → `#[test] fn`).
#[test]
fn impact_reaches_the_tests_a_macro_writes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("mt");
    write(
        &root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"mt\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "#[macro_use]\nmod macros;\npub mod util;\n\npub struct Builder {\n    n: u32,\n}\n\nimpl Builder {\n    pub fn new() -> Builder {\n        Builder { n: 0 }\n    }\n\n    pub fn build(&self) -> u32 {\n        util::check(self.n)\n    }\n}\n\nmake_getter!(answer, 42);\n\n#[cfg(test)]\nmod tests;\n",
            ),
            (
                "src/macros.rs",
                "macro_rules! make_getter {\n    ($name:ident, $v:expr) => {\n        pub fn $name() -> u32 {\n            $crate::util::check($v)\n        }\n    };\n}\n",
            ),
            (
                "src/util.rs",
                "pub fn check(x: u32) -> u32 {\n    x + 1\n}\n",
            ),
            (
                "src/tests.rs",
                "use super::*;\n\nfn run_all(f: impl Fn() -> u32) -> u32 {\n    f()\n}\n\nmacro_rules! testconfig {\n    ($name:ident, $with:expr) => {\n        #[test]\n        fn $name() {\n            run_all(|| {\n                let builder = Builder::new();\n                $with(&builder);\n                builder.build()\n            });\n        }\n    };\n}\n\nmacro_rules! testcombo {\n    ($name:ident) => {\n        mod $name {\n            use super::*;\n            testconfig!(default, |_| ());\n        }\n    };\n}\n\ntestcombo!(standard);\n",
            ),
        ],
    );
    let server = serve_paths(tmp, std::slice::from_ref(&root), &[], &[]);
    wait_ready(&server);
    // The template of another module's macro calls `check` through `$crate::`;
    // the crate root invokes that macro.
    let g = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "check", "direction": "callers", "depth": 2}),
    );
    let text = g.to_string();
    for want in ["macros::make_getter", "Builder::build"] {
        assert!(text.contains(want), "{want}: {g}");
    }
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "Builder::build", "depth": 5}),
    );
    let affected: Vec<String> = i["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| s(&a["qualified_name"]))
        .collect();
    for want in ["tests::testconfig", "tests::testcombo"] {
        assert!(affected.contains(&want.to_string()), "{want}: {i}");
    }
    let runs: Vec<String> = i["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| s(&t["run"]))
        .collect();
    assert!(
        runs.contains(&"cargo test -p mt -- tests::".to_string()),
        "{runs:?}"
    );
    // A library macro reaches the file that invokes it, and no test.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "make_getter", "depth": 5}),
    );
    assert!(i["files"].to_string().contains("src/lib.rs"), "{i}");
    assert!(i["tests"].as_array().is_none_or(|t| t.is_empty()), "{i}");
}

/// Library code calls the repo back: a test's `client.get("/")` runs
/// werkzeug's `Client.get`, which calls the application its `AppClient`
/// holds (`application: App`), whose `__call__` reaches the change. The test
/// is listed, one step past the library (`via: library`), and the answer
/// stays a lower bound; a test that makes no such call is not listed. Its
/// `client` comes from the fixture it requests, and `with client:` runs the
/// class's own `__enter__`.
#[test]
fn impact_reaches_tests_through_a_library_base_that_calls_back() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("wsgi");
    write(
        &root,
        &[
            (
                "app/wsgi.py",
                "from werkzeug.test import Client\n\n\ndef handle(environ):\n    return [b\"ok\"]\n\n\ndef opened():\n    return 1\n\n\nclass App:\n    def __call__(self, environ, start_response):\n        return handle(environ)\n\n\nclass AppClient(Client):\n    application: App\n\n    def __enter__(self):\n        return opened()\n",
            ),
            (
                "tests/conftest.py",
                "import pytest\n\nfrom app.wsgi import App, AppClient\n\n\n@pytest.fixture\ndef client():\n    return AppClient(App())\n",
            ),
            (
                "tests/test_wsgi.py",
                "def test_get(client):\n    assert client.get(\"/\") == [b\"ok\"]\n\n\ndef test_entered(client):\n    with client:\n        pass\n\n\ndef test_nothing():\n    assert True\n",
            ),
        ],
    );
    let server = serve_paths(tmp, std::slice::from_ref(&root), &[], &[]);
    wait_ready(&server);
    let runs = |i: &Value| -> Vec<String> {
        i["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .map(|t| s(&t["run"]))
            .collect()
    };
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "handle", "depth": 10}),
    );
    let tests = runs(&i);
    assert!(
        tests.contains(&"tests/test_wsgi.py::test_get".to_string()),
        "{i}"
    );
    assert!(
        !tests.contains(&"tests/test_wsgi.py::test_nothing".to_string()),
        "{i}"
    );
    let get = i["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .find(|a| s(&a["qualified_name"]) == "tests.test_wsgi.test_get")
        .expect("test_get affected");
    assert_eq!(s(&get["via"]["relation"]), "library", "{i}");
    assert_eq!(s(&i["completeness"]), "lower_bound", "{i}");
    // `with client:` calls the class's own `__enter__`, and the fixture the
    // test requests leads to it.
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "opened", "depth": 10}),
    );
    let tests = runs(&i);
    assert!(
        tests.contains(&"tests/test_wsgi.py::test_entered".to_string()),
        "{i}"
    );
    assert!(
        !tests.contains(&"tests/test_wsgi.py::test_nothing".to_string()),
        "{i}"
    );
}

/// A repo object handed to a library's call (`Signer(key, serializer=…)`, as
/// Flask hands its session serializer to itsdangerous) may be called back from
/// there: an edit to its `dumps` reaches the tests that sign, through the
/// function that hands it over, as a lower bound. A test that only writes a
/// property reaches the property's setter; one whose nested function uses the
/// test's fixture reaches what that function calls.
#[test]
fn impact_reaches_tests_through_an_object_handed_to_a_library() {
    let (i, tests) = impact_on(
        "signing",
        &[
            (
                "app/sessions.py",
                "import json\n\nfrom itsdangerous import Signer\n\n\nclass Tagged:\n    def dumps(self, value):\n        return json.dumps(value)\n\n\nclass Interface:\n    serializer = Tagged()\n\n    def signer(self, key):\n        return Signer(key, serializer=self.serializer)\n\n    def save(self, key, value):\n        return self.signer(key).sign(value)\n\n\nclass Settings:\n    @property\n    def debug(self):\n        return False\n\n    @debug.setter\n    def debug(self, value):\n        Tagged().dumps(value)\n",
            ),
            (
                "tests/conftest.py",
                "import pytest\n\nfrom app.sessions import Interface, Settings\n\n\n@pytest.fixture\ndef iface():\n    return Interface()\n\n\n@pytest.fixture\ndef settings():\n    return Settings()\n",
            ),
            (
                "tests/test_sessions.py",
                "def test_save(iface):\n    def save():\n        return iface.save(\"k\", \"v\")\n\n    assert save()\n\n\ndef test_debug(settings):\n    settings.debug = True\n\n\ndef test_nothing():\n    assert True\n",
            ),
        ],
        "dumps",
    );
    for want in [
        "tests/test_sessions.py::test_save",
        "tests/test_sessions.py::test_debug",
    ] {
        assert!(tests.contains(&want.to_string()), "{want}: {i}");
    }
    assert!(
        !tests.contains(&"tests/test_sessions.py::test_nothing".to_string()),
        "{i}"
    );
    let signer = (i["affected"].as_array().expect("affected").iter())
        .find(|a| s(&a["qualified_name"]) == "app.sessions.Interface.signer")
        .expect("signer affected");
    assert_eq!(s(&signer["via"]["relation"]), "library", "{i}");
    assert_eq!(s(&i["completeness"]), "lower_bound", "{i}");
}

/// Flask's templates: the app makes its environment through a class attribute
/// (`jinja_environment = Environment`), whose constructor stores a loader it
/// makes in `**options` for jinja's base class, which calls the loader back.
/// An edit the loader reaches reaches the tests that render.
#[test]
fn impact_reaches_tests_through_a_loader_stored_for_a_library_base() {
    let (i, tests) = impact_on(
        "templates",
        &[
            (
                "app/templating.py",
                "from __future__ import annotations\n\nfrom jinja2 import Environment as BaseEnvironment\n\n\nclass Loader:\n    def __init__(self, app: App):\n        self.app = app\n\n    def get_source(self, environment, name):\n        for bp in self.app.iter_blueprints():\n            return bp\n\n\nclass Environment(BaseEnvironment):\n    def __init__(self, app: App, **options):\n        if \"loader\" not in options:\n            options[\"loader\"] = app.create_loader()\n        BaseEnvironment.__init__(self, **options)\n\n\nclass App:\n    jinja_environment = Environment\n\n    def iter_blueprints(self):\n        return []\n\n    def create_loader(self) -> Loader:\n        return Loader(self)\n\n    def render(self, name):\n        return self.jinja_environment(self).get_template(name)\n",
            ),
            (
                "tests/test_render.py",
                "from app.templating import App\n\n\ndef test_render():\n    assert App().render(\"index.html\")\n\n\ndef test_nothing():\n    assert True\n",
            ),
        ],
        "iter_blueprints",
    );
    assert!(
        tests.contains(&"tests/test_render.py::test_render".to_string()),
        "{i}"
    );
    assert!(
        !tests.contains(&"tests/test_render.py::test_nothing".to_string()),
        "{i}"
    );
    let init = (i["affected"].as_array().expect("affected").iter())
        .find(|a| s(&a["qualified_name"]) == "app.templating.Environment.__init__")
        .expect("the constructor that hands the loader over is affected");
    assert_eq!(s(&init["via"]["relation"]), "library", "{i}");
    assert_eq!(s(&i["completeness"]), "lower_bound", "{i}");
}

/// A subclass overrides a class attribute that holds a class (`response_class
/// = MyResponse`): the base's methods call the override on its instances, so
/// an edit to it reaches the tests that use the subclass, through the class
/// body's reference (the base's call resolves to the base's class).
#[test]
fn impact_reaches_tests_through_a_class_attribute_a_subclass_overrides() {
    let (i, tests) = impact_on(
        "custom",
        &[
            (
                "app/core.py",
                "class Response:\n    def __init__(self, body):\n        self.body = body\n\n\nclass App:\n    response_class = Response\n\n    def respond(self, body):\n        return self.response_class(body)\n",
            ),
            (
                "app/custom.py",
                "from app.core import App, Response\n\n\nclass MyResponse(Response):\n    def __init__(self, body):\n        super().__init__(body.upper())\n\n\nclass MyApp(App):\n    response_class = MyResponse\n",
            ),
            (
                "tests/test_custom.py",
                "from app.custom import MyApp\n\n\ndef test_respond():\n    assert MyApp().respond(\"x\").body == \"X\"\n",
            ),
        ],
        "MyResponse.__init__",
    );
    assert!(
        tests.contains(&"tests/test_custom.py::test_respond".to_string()),
        "{i}"
    );
}

/// `impl IntoIterator for Bag` beside `impl IntoIterator for &'a Bag` (as
/// smallvec's): a call on a receiver proven to hold a `Bag` is the first's;
/// on a reference (`&self`, a `&Bag` parameter, `(&b)`) no rule proves the
/// second, so the answer lists those calls as unproven, never as the first's.
#[test]
fn a_call_picks_the_impl_for_a_value_and_leaves_a_reference_unproven() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("bags");
    let lib = "pub struct Bag(Vec<u8>);\npub struct Iter(usize);\npub struct RefIter(usize);\n\n\
        impl Iterator for Iter {\n    type Item = u8;\n    fn next(&mut self) -> Option<u8> {\n        None\n    }\n}\n\n\
        impl Iterator for RefIter {\n    type Item = u8;\n    fn next(&mut self) -> Option<u8> {\n        None\n    }\n}\n\n\
        impl IntoIterator for Bag {\n    type Item = u8;\n    type IntoIter = Iter;\n    fn into_iter(self) -> Iter {\n        Iter(self.0.len())\n    }\n}\n\n\
        impl<'a> IntoIterator for &'a Bag {\n    type Item = u8;\n    type IntoIter = RefIter;\n    fn into_iter(self) -> RefIter {\n        RefIter(0)\n    }\n}\n\n\
        impl Bag {\n    pub fn new() -> Bag {\n        Bag(Vec::new())\n    }\n    pub fn consume(self) -> usize {\n        self.into_iter().count()\n    }\n    pub fn peek(&self) -> usize {\n        self.into_iter().count()\n    }\n}\n\n\
        pub fn both(shared: &Bag) {\n    let held: Bag = Bag::new();\n    held.into_iter();\n    let made = Bag::new();\n    (&made).into_iter();\n    shared.into_iter();\n}\n";
    write(
        &root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"bags\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", lib),
        ],
    );
    let cli = |args: &[&str]| crate::common::cruxe_in(&root, args);
    assert!(cli(&["index", "."]).status.success());
    // The first `into_iter` is the impl for `Bag`.
    let o = cli(&["calls", "Bag::into_iter", "--depth", "1"]);
    let out = crate::common::stdout(&o);
    let sites: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("call sites:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(sites.len(), 2, "{out}");
    let has = |from: &str, at: &str, tier: &str| {
        sites
            .iter()
            .any(|l| l.contains(from) && l.contains(at) && l.contains(tier))
    };
    assert!(has("Bag::consume", "src/lib.rs:40", "[self]"), "{out}");
    assert!(has("both", "src/lib.rs:49", "[typed]"), "{out}");
    assert!(out.contains("lower_bound: "), "{out}");
    assert_unproven(
        &out,
        &[
            "self.into_iter().count()",
            "(&made).into_iter();",
            "shared.into_iter();",
        ],
    );
    // Kept by what is written, the reference left out.
    let o = cli(&[
        "cypher",
        "MATCH ()-[c:UNRESOLVED]->() WHERE c.line = 51 RETURN c.to_name AS t",
    ]);
    let out = crate::common::stdout(&o);
    assert!(
        out.contains("made.into_iter") && !out.contains('#'),
        "{out}"
    );
}

/// A method called on what no chain names (`(a + b).reading()`, an `if`'s
/// value, an element of an array literal) was left out of the graph: the
/// answer about the method said `exact` with no caller. Now each such call is
/// an unproven site of its name, in every language.
#[test]
fn a_call_on_a_receiver_no_chain_names_leaves_the_answer_a_lower_bound() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("meters");
    let lib = "pub struct Meter(pub u32);\n\n\
        impl Meter {\n    pub fn reading(&self) -> u32 {\n        self.0\n    }\n}\n\n\
        impl std::ops::Add for Meter {\n    type Output = Meter;\n    fn add(self, o: Meter) -> Meter {\n        Meter(self.0 + o.0)\n    }\n}\n\n\
        pub fn total(a: Meter, b: Meter) -> u32 {\n    (a + b).reading()\n}\n\n\
        pub fn pick(flag: bool, a: Meter, b: Meter) -> u32 {\n    (if flag { a } else { b }).reading()\n}\n\n\
        pub fn first() -> u32 {\n    [Meter(1)][0].reading() + \"x\".len() as u32\n}\n";
    write(
        &root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"meters\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", lib),
        ],
    );
    let cli = |args: &[&str]| crate::common::cruxe_in(&root, args);
    assert!(cli(&["index", "."]).status.success());
    let o = cli(&["calls", "Meter::reading", "--depth", "1"]);
    let out = crate::common::stdout(&o);
    assert!(out.contains("lower_bound: 3 site(s)"), "{out}");
    assert_unproven(
        &out,
        &[
            "(a + b).reading()",
            "(if flag { a } else { b }).reading()",
            "[Meter(1)][0].reading()",
        ],
    );
    // A name no method of the repo has makes no row (`"x".len()`, and `len`
    // on the unknown receivers of a big tree).
    let o = cli(&[
        "cypher",
        "MATCH ()-[c:UNRESOLVED]->(n) WHERE n.name = 'len' RETURN count(*) AS n",
    ]);
    let out = crate::common::stdout(&o);
    assert!(out.lines().any(|l| l.trim() == "0"), "{out}");
}

/// A Python builtin called bare that nothing in its file binds is the
/// language's: the callers of a repo function of that name (a test's nested
/// `def set()`) are exact. One the file binds (a local holding a function) stays
/// unproven.
#[test]
fn a_python_builtin_nothing_binds_leaves_a_same_named_function_exact() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("views");
    write(
        &root,
        &[
            ("pkg/__init__.py", ""),
            (
                "pkg/util.py",
                "def distinct(values):\n    return set(values)\n\n\ndef via(make):\n    set = make()\n    return set()\n",
            ),
            (
                "tests/test_views.py",
                "def test_nested():\n    def set():\n        return 1\n\n    assert set() == 1\n",
            ),
        ],
    );
    let cli = |args: &[&str]| crate::common::cruxe_in(&root, args);
    assert!(cli(&["index", "."]).status.success());
    let o = cli(&[
        "cypher",
        "MATCH (a)-[:UNRESOLVED]->(n) WHERE n.name = 'set' RETURN a.name ORDER BY a.name",
    ]);
    let out = crate::common::stdout(&o);
    assert!(
        out.contains("via"),
        "a call through a local stays unproven: {out}"
    );
    assert!(
        !out.contains("distinct"),
        "the builtin `set` is no unproven site: {out}"
    );
}

/// Integration tests in both of cargo's layouts: `tests/alone.rs`, a target
/// of its own, and `tests/it.rs`, a module of the one binary `tests/tests.rs`
/// declares (its `mod it;` is the file, not an outside name). Each test's
/// `run` is the cargo command that runs it: its target, and its path within
/// that target.
#[test]
fn impact_runs_integration_tests_by_their_target() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("pk");
    write(
        &root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"pk\"\nversion = \"0.1.0\"\nedition = \"2021\"\nautotests = false\n\n[[test]]\nname = \"tests\"\npath = \"tests/tests.rs\"\n\n[[test]]\nname = \"alone\"\npath = \"tests/alone.rs\"\n",
            ),
            (
                "src/lib.rs",
                "pub fn check(x: u32) -> u32 {\n    x + 1\n}\n",
            ),
            ("tests/tests.rs", "mod it;\n"),
            (
                "tests/it.rs",
                "#[test]\nfn checks() {\n    assert_eq!(pk::check(1), 2);\n}\n",
            ),
            (
                "tests/alone.rs",
                "#[test]\nfn direct() {\n    assert_eq!(pk::check(2), 3);\n}\n",
            ),
        ],
    );
    let server = serve_paths(tmp, std::slice::from_ref(&root), &[], &[]);
    wait_ready(&server);
    let i = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "check", "depth": 10}),
    );
    let runs: Vec<String> = (i["tests"].as_array().expect("tests").iter())
        .map(|t| s(&t["run"]))
        .collect();
    for want in [
        "cargo test -p pk --test tests -- it::checks --exact",
        "cargo test -p pk --test alone -- direct --exact",
    ] {
        assert!(runs.contains(&want.to_string()), "{want}: {runs:?} {i}");
    }
    let imports = call(
        &server,
        "run_cypher",
        json!({"query": "MATCH (f:File {path: 'tests/tests.rs'})-[:IMPORTS]->(t:File) RETURN t.path AS p"}),
    );
    assert_eq!(imports["rows"], json!([["tests/it.rs"]]), "{imports}");
}
