//! Call-graph edges: the trap fixtures (`fixtures/calls/*/expected.json`)
//! indexed for real, and incremental runs against a fresh index of the same
//! tree.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::common::{Indexed, copy_tree, index_path, opts, s};

fn calls_fixture(lang: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/calls")
        .join(lang)
}

/// Every call-graph edge of the graph as `(rel, from, to, line, confidence,
/// kind, at)`: `from` a qualified name or `file:PATH`, `to` a qualified name
/// or, for UNRESOLVED, `?name`, `at` the target's `path:line`.
type Dump = BTreeSet<(String, String, String, i64, String, String, String)>;

fn dump(ix: &Indexed) -> Dump {
    let mut out = BTreeSet::new();
    for rel in ["CALLS", "REFERENCES", "IMPLEMENTS", "EXTENDS"] {
        let props = match rel {
            "CALLS" => "e.line AS line, e.confidence AS conf, '' AS kind",
            "REFERENCES" => "e.line AS line, e.confidence AS conf, e.kind AS kind",
            _ => "e.line AS line, e.confidence AS conf, '' AS kind",
        };
        for (from_label, from_expr) in [
            ("Symbol", "a.qualified_name + '#' + a.kind"),
            ("File", "'file:' + a.path"),
        ] {
            if from_label == "File" && matches!(rel, "IMPLEMENTS" | "EXTENDS") {
                continue;
            }
            let q = format!(
                "MATCH (a:{from_label})-[e:{rel}]->(b:Symbol) RETURN {from_expr} AS f, b.qualified_name + '#' + b.kind AS t, b.path + ':' + cast(b.line_start, 'STRING') AS at, {props}"
            );
            for r in ix.rows(&q) {
                out.insert((
                    rel.to_string(),
                    s(&r["f"]),
                    s(&r["t"]),
                    r["line"].as_i64().unwrap_or(0),
                    s(&r["conf"]),
                    s(&r["kind"]),
                    // Where the target is: `#[cfg]` or build-tag twins share
                    // a qualified name and each gets an edge.
                    s(&r["at"]),
                ));
            }
        }
    }
    // Counts by relationship and by node table, ends unbound: an edge whose
    // end was deleted shows here and in no listing above.
    for (what, q) in [
        ("CALLS", "MATCH ()-[c:CALLS]->() RETURN count(c) AS n"),
        (
            "REFERENCES",
            "MATCH ()-[c:REFERENCES]->() RETURN count(c) AS n",
        ),
        (
            "IMPLEMENTS",
            "MATCH ()-[c:IMPLEMENTS]->() RETURN count(c) AS n",
        ),
        ("EXTENDS", "MATCH ()-[c:EXTENDS]->() RETURN count(c) AS n"),
        (
            "UNRESOLVED",
            "MATCH ()-[c:UNRESOLVED]->() RETURN count(c) AS n",
        ),
        ("IMPORTS", "MATCH ()-[c:IMPORTS]->() RETURN count(c) AS n"),
        ("CONTAINS", "MATCH ()-[c:CONTAINS]->() RETURN count(c) AS n"),
        ("Name", "MATCH (n:Name) RETURN count(n) AS n"),
        ("Symbol", "MATCH (n:Symbol) RETURN count(n) AS n"),
        ("File", "MATCH (n:File) RETURN count(n) AS n"),
    ] {
        let n = ix.rows(q)[0]["n"].as_i64().unwrap_or(-1);
        out.insert((
            "COUNT".into(),
            what.into(),
            String::new(),
            n,
            String::new(),
            String::new(),
            String::new(),
        ));
    }
    for (from_label, from_expr) in [
        ("Symbol", "a.qualified_name + '#' + a.kind"),
        ("File", "'file:' + a.path"),
    ] {
        let q = format!(
            "MATCH (a:{from_label})-[e:UNRESOLVED]->(n:Name) RETURN {from_expr} AS f, n.name AS t, e.line AS line"
        );
        for r in ix.rows(&q) {
            out.insert((
                "UNRESOLVED".into(),
                s(&r["f"]),
                format!("?{}", s(&r["t"])),
                r["line"].as_i64().unwrap_or(0),
                String::new(),
                String::new(),
                String::new(),
            ));
        }
    }
    out
}

/// The expected edges of relationship `rel` of a trap fixture against the
/// graph's: (missing, unexpected), each `line from -> to`. REFERENCES of
/// kind `type` are a sample (only missing ones count); the rest is
/// exhaustive. IMPLEMENTS and EXTENDS are matched without their line.
fn compare(lang: &str, ix: &Indexed, rel: &str) -> (Vec<String>, Vec<String>) {
    let text =
        std::fs::read_to_string(calls_fixture(lang).join("expected.json")).expect("expected");
    let expected: Value = serde_json::from_str(&text).expect("json");
    let got: Vec<_> = dump(ix).into_iter().filter(|e| e.0 == rel).collect();
    let strip = |x: &str| x.split('#').next().unwrap_or("").to_string();
    let with_line = !matches!(rel, "IMPLEMENTS" | "EXTENDS");
    let mut matched = vec![false; got.len()];
    let mut missing = Vec::new();
    for e in expected["edges"].as_array().expect("edges") {
        // Calls inside macro arguments (`in_macro`) count like any other:
        // the arguments are parsed again as expressions.
        if e["rel"] != rel {
            continue;
        }
        let line = e["line"].as_i64().unwrap_or(0);
        let mut froms = vec![s(&e["from"])];
        froms.extend(e["from_alt"].as_array().into_iter().flatten().map(s));
        let mut tos = vec![s(&e["to"])];
        tos.extend(e["to_alt"].as_array().into_iter().flatten().map(s));
        let kind = s(&e["kind"]);
        // The tier, where the fixture names one (`confidence_alt`: also right).
        let mut tiers = vec![s(&e["confidence"])];
        tiers.extend(e["confidence_alt"].as_array().into_iter().flatten().map(s));
        let tier_ok = |t: &str| tiers[0].is_empty() || tiers.iter().any(|x| x == t);
        let hit = got.iter().enumerate().position(|(i, g)| {
            !matched[i]
                && tier_ok(&g.4)
                && (!with_line || g.3 == line)
                && froms.contains(&strip(&g.1))
                && tos.contains(&strip(&g.2))
                && (rel != "REFERENCES" || g.5 == kind)
        });
        match hit {
            Some(i) => matched[i] = true,
            None => missing.push(format!(
                "{} {line} {} -> {} ({}{})",
                s(&e["path"]),
                froms[0],
                tos[0],
                s(&e["callee"]),
                s(&e["site"])
            )),
        }
    }
    let extra = got
        .iter()
        .zip(&matched)
        // `type` references are a sample: only missing ones count.
        .filter(|(g, m)| !(**m || (rel == "REFERENCES" && g.5 == "type")))
        .map(|(g, _)| {
            format!(
                "{} {} -> {} [{} {}]",
                g.3,
                strip(&g.1),
                strip(&g.2),
                g.4,
                g.5
            )
        })
        .collect();
    (missing, extra)
}

fn trap_fixture(lang: &str) {
    let ix = index_path(&calls_fixture(lang), lang);
    let mut report = String::new();
    for rel in ["CALLS", "REFERENCES", "IMPLEMENTS", "EXTENDS"] {
        let (missing, extra) = compare(lang, &ix, rel);
        if !missing.is_empty() || !extra.is_empty() {
            report.push_str(&format!(
                "{rel}: {} missing:\n  {}\n{} unexpected:\n  {}\n",
                missing.len(),
                missing.join("\n  "),
                extra.len(),
                extra.join("\n  ")
            ));
        }
    }
    assert!(report.is_empty(), "{lang}:\n{report}");
}

#[test]
fn rust_trap_fixture_edges_are_exactly_the_expected_ones() {
    trap_fixture("rust");
}

/// `Heap::from(x)` in `fixtures/calls/rust/src/owned.rs`: three `From` impls
/// share the qualified name `owned::Heap::from` (which the trap rows compare),
/// so which one the argument's type picked is checked by line: `From<Vec<u8>>`
/// at 125, `From<&'a [u8]>` at 131, `impl<C: Chunk> From<C>` at 137.
#[test]
fn rust_from_impl_is_the_one_the_arguments_type_picks() {
    let ix = index_path(&calls_fixture("rust"), "rust");
    let rows = ix.rows(
        "MATCH (a:Symbol {qualified_name: 'owned::heaps'})-[c:CALLS]->(s:Symbol {name: 'from'}) \
         RETURN c.line AS line, s.line_start AS at ORDER BY line",
    );
    let got: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["line"].as_i64().unwrap_or(0),
                r["at"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(got, vec![(146, 125), (147, 125), (149, 131), (152, 137)]);
}

/// A call on `self` in the one of a type's impl blocks told apart by a type
/// argument that defines the method is that block's (`impl Pair<1>`'s `one`,
/// line 122), not another block's.
#[test]
fn rust_self_call_in_a_block_told_apart_by_its_argument_is_that_blocks() {
    let ix = index_path(&calls_fixture("rust"), "rust");
    let rows = ix.rows(
        "MATCH (a:Symbol {qualified_name: 'variants::Pair::again'})-[c:CALLS]->(s:Symbol) \
         RETURN s.line_start AS at, c.confidence AS conf",
    );
    let got: Vec<(i64, String)> = rows
        .iter()
        .map(|r| (r["at"].as_i64().unwrap_or(0), s(&r["conf"])))
        .collect();
    assert_eq!(got, vec![(122, "self".to_string())]);
}

/// A call by path with a turbofish among a type's impl blocks told apart by
/// a type argument is the block it names: `Pair::<2>::made()` in `made_two`
/// is `impl Pair<2>`'s `made` (line 147), `Pair::<1>::made()` in `split`
/// `impl Pair<1>`'s (line 141), never both.
#[test]
fn rust_turbofish_call_is_the_block_its_type_arguments_name() {
    let ix = index_path(&calls_fixture("rust"), "rust");
    let rows = ix.rows(
        "MATCH (a:Symbol)-[c:CALLS]->(s:Symbol {name: 'made'}) \
         RETURN a.name AS from, s.line_start AS at, c.confidence AS conf ORDER BY from",
    );
    let got: Vec<(String, i64, String)> = rows
        .iter()
        .map(|r| (s(&r["from"]), r["at"].as_i64().unwrap_or(0), s(&r["conf"])))
        .collect();
    let qualified = |from: &str, at| (from.to_string(), at, "qualified".to_string());
    assert_eq!(
        got,
        vec![qualified("made_two", 147), qualified("split", 141)]
    );
}

#[test]
fn python_trap_fixture_edges_are_exactly_the_expected_ones() {
    trap_fixture("python");
}

#[test]
fn typescript_trap_fixture_edges_are_exactly_the_expected_ones() {
    trap_fixture("typescript");
}

#[test]
fn go_trap_fixture_edges_are_exactly_the_expected_ones() {
    trap_fixture("go");
}

/// Go builtins and conversions (`append`, `len(s)`, `uintptr(n)`) are the
/// universe's whatever package `builtin` declares: no edge of any kind, not
/// even UNRESOLVED (the trap test does not look at those).
#[test]
fn go_builtins_and_conversions_make_no_edge_not_even_unresolved() {
    let ix = index_path(&calls_fixture("go"), "go");
    let all = dump(&ix);
    let from_words: Vec<_> = all
        .iter()
        .filter(|e| e.1 == "example.com/geo/util.Words#fn")
        .collect();
    assert!(from_words.is_empty(), "{from_words:?}");
    // A call no tier proves elsewhere is still counted as unresolved
    // (`c.Area()` on a value of unknown type).
    assert!(
        all.iter().any(|e| e.0 == "UNRESOLVED" && e.2 == "?Area"),
        "{all:?}"
    );
}

/// Writes files under `tree`, making their directories.
fn writer(tree: &Path) -> impl Fn(&str, &str) + '_ {
    move |path, text| {
        let p = tree.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

/// A small deterministic generator (the sequence is the same on every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Source files of a tree, sorted.
fn sources(root: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                if !p.ends_with(".cruxe") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One random change to the tree: a callee renamed in its file (its callers
/// lose their edges), a file deleted, a file's calls swapped for another
/// file's, a new file calling into the others, every line moved down by one,
/// an edit that changes nothing, a file renamed, a deleted file restored.
fn random_change(
    rng: &mut Lcg,
    root: &Path,
    ext: &str,
    step: usize,
    deleted: &mut Vec<(std::path::PathBuf, String)>,
) {
    let files = sources(root, ext);
    if files.is_empty() {
        return;
    }
    let f = &files[rng.next(files.len())];
    let text = std::fs::read_to_string(f).unwrap_or_default();
    match rng.next(8) {
        0 => {
            // Rename one defined name everywhere in the file.
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| w.len() > 3 && w.chars().next().is_some_and(char::is_alphabetic))
                .collect();
            if let Some(w) = words.get(rng.next(words.len().max(1))) {
                let renamed = text.replace(w, &format!("{w}{step}"));
                std::fs::write(f, renamed).expect("write");
            }
        }
        1 if files.len() > 2 => {
            std::fs::remove_file(f).expect("remove");
            deleted.push((f.clone(), text));
        }
        2 => {
            let other = &files[rng.next(files.len())];
            let body = std::fs::read_to_string(other).unwrap_or_default();
            std::fs::write(f, body).expect("write");
        }
        3 => {
            let dir = f.parent().expect("parent");
            let new = dir.join(format!("added{step}.{ext}"));
            std::fs::write(new, text.clone()).expect("write");
        }
        // A line above everything: the symbols stay (moved), every site of
        // the file moves, so each of its edges is replaced in place.
        4 => std::fs::write(f, format!("\n{text}")).expect("write"),
        // Renamed: its symbols go with the old path, new ones come.
        5 if files.len() > 2 => {
            let to = f.with_file_name(format!("moved{step}.{ext}"));
            std::fs::rename(f, &to).expect("rename");
            deleted.push((f.clone(), text));
        }
        // A deleted (or renamed-away) file back at its path, same content:
        // its symbols get their old ids again.
        6 if !deleted.is_empty() => {
            let (path, body) = deleted.remove(rng.next(deleted.len()));
            if !path.exists() {
                std::fs::write(&path, body).expect("restore");
            }
        }
        _ => std::fs::write(f, format!("{text}\n")).expect("write"),
    }
}

fn incremental_equals_fresh(lang: &str, ext: &str) {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    copy_tree(&calls_fixture(lang), &tree);
    let data = cruxe::store::datadir::DataDir::new(work.path().join("data"));
    let o = opts(lang);
    cruxe::index::index_repo(&tree, &data, &o, &cruxe::index::Silent).expect("index");
    let mut rng = Lcg(0x5eed + lang.len() as u64);
    let mut deleted = Vec::new();
    for step in 0..14 {
        random_change(&mut rng, &tree, ext, step, &mut deleted);
        let report =
            cruxe::index::index_repo(&tree, &data, &o, &cruxe::index::Silent).expect("reindex");
        let incremental = Indexed {
            tmp: tempfile::tempdir().expect("tmp"),
            data: cruxe::store::datadir::DataDir::new(work.path().join("data")),
            report,
        };
        let fresh = index_path(&tree, lang);
        let (a, b) = (dump(&incremental), dump(&fresh));
        assert_eq!(
            a.symmetric_difference(&b).collect::<Vec<_>>(),
            Vec::<&(String, String, String, i64, String, String, String)>::new(),
            "{lang} step {step}: incremental and fresh call graphs differ"
        );
    }
    // Two full runs of the same tree give the same dump.
    assert_eq!(
        dump(&index_path(&tree, lang)),
        dump(&index_path(&tree, lang))
    );
}

#[test]
fn rust_random_edits_keep_the_call_graph_equal_to_a_fresh_index() {
    incremental_equals_fresh("rust", "rs");
}

#[test]
fn python_random_edits_keep_the_call_graph_equal_to_a_fresh_index() {
    incremental_equals_fresh("python", "py");
}

#[test]
fn typescript_random_edits_keep_the_call_graph_equal_to_a_fresh_index() {
    incremental_equals_fresh("typescript", "ts");
}

#[test]
fn go_random_edits_keep_the_call_graph_equal_to_a_fresh_index() {
    incremental_equals_fresh("go", "go");
}

/// Indexes `tree` again into the data dir under `work`, checks the call graph
/// against a fresh index of the same tree, and returns it.
fn reindex_equals_fresh(work: &Path, tree: &Path, lang: &str, what: &str) -> Dump {
    reindex_counted(work, tree, lang, what).1
}

/// `reindex_equals_fresh` with the number of files the run resolved.
fn reindex_counted(work: &Path, tree: &Path, lang: &str, what: &str) -> (usize, Dump) {
    let data = cruxe::store::datadir::DataDir::new(work.join("data"));
    let report =
        cruxe::index::index_repo(tree, &data, &opts(lang), &cruxe::index::Silent).expect("index");
    let resolved = report.imports_resolved;
    let incremental = dump(&Indexed {
        tmp: tempfile::tempdir().expect("tmp"),
        data,
        report,
    });
    assert_eq!(
        incremental,
        dump(&index_path(tree, lang)),
        "{lang} {what}: incremental and fresh call graphs differ"
    );
    (resolved, incremental)
}

/// The `name` tier's edge of a fixture (`from` → `to`, both qualified names)
/// goes when a second callable of that name appears in another file, and
/// comes back when it goes; each incremental graph equals a fresh index.
fn name_edge_follows_definitions(lang: &str, added: &str, body: &str, from: &str, to: &str) {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    copy_tree(&calls_fixture(lang), &tree);
    let has_edge = |d: &Dump| {
        d.iter().any(|e| {
            e.0 == "CALLS"
                && e.1.split('#').next() == Some(from)
                && e.2.split('#').next() == Some(to)
                && e.4 == "name"
        })
    };
    let step = |what: &str| reindex_equals_fresh(work.path(), &tree, lang, what);
    assert!(
        has_edge(&step("first index")),
        "{lang}: no name edge {from} -> {to}"
    );
    std::fs::write(tree.join(added), body).expect("write");
    assert!(
        !has_edge(&step("second definition")),
        "{lang}: the name edge outlived a second definition"
    );
    std::fs::remove_file(tree.join(added)).expect("remove");
    assert!(
        has_edge(&step("second definition removed")),
        "{lang}: the name edge did not come back"
    );
}

#[test]
fn python_name_edge_follows_a_second_definition_and_its_removal() {
    name_edge_follows_definitions(
        "python",
        "geo/other.py",
        "class Other:\n    def summary(self):\n        return 1\n",
        "geo.report.summarize",
        "geo.report.Report.summary",
    );
}

#[test]
fn go_name_edge_follows_a_second_definition_and_its_removal() {
    name_edge_follows_definitions(
        "go",
        "util/ring.go",
        "package util\n\ntype Ring struct{}\n\nfunc (Ring) Perimeter() float64 { return 0 }\n",
        "example.com/geo/shapes.PerimeterOf",
        "example.com/geo/shapes.Circle.Perimeter",
    );
}

/// A run that cannot trust the resolution state (deleted, damaged, or written
/// by another cruxe) re-reads every file and replaces the call graph as a
/// whole: it equals a fresh index's, and is not emptied.
#[test]
fn a_lost_resolution_state_keeps_the_call_graph() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    copy_tree(&calls_fixture("rust"), &tree);
    let data = cruxe::store::datadir::DataDir::new(work.path().join("data"));
    let o = opts("rust");
    let index = || cruxe::index::index_repo(&tree, &data, &o, &cruxe::index::Silent);
    index().expect("first index");
    let fresh = dump(&index_path(&tree, "rust"));
    assert!(
        fresh.iter().filter(|e| e.0 == "CALLS").count() > 10,
        "the fixture has calls: {fresh:?}"
    );
    let mut removed = 0;
    for entry in std::fs::read_dir(data.root().join("state")).expect("state dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "bin") {
            std::fs::remove_file(&path).expect("remove");
            removed += 1;
        }
    }
    assert!(removed > 0, "the run left a state file");
    let report = index().expect("the run without a state");
    let again = dump(&Indexed {
        tmp: tempfile::tempdir().expect("tmp"),
        data: cruxe::store::datadir::DataDir::new(work.path().join("data")),
        report,
    });
    assert_eq!(again, fresh, "the call graph after the state was lost");
}

/// Same-named definitions in one Rust file are `#[cfg]` alternatives (an edge
/// to each: the trap fixture's `variants.rs`), but the same names in two
/// copies of one crate (two versions side by side, as in a vendor folder or
/// the cargo registry) are no build alternatives: a call in one copy gets no
/// edge into the other, and stays unproven. Nor are a type's inherent methods
/// in the two copies impls told apart by a type argument (`dispatch` to each).
#[test]
fn copies_of_a_crate_are_no_build_alternatives() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    for v in ["v1", "v2"] {
        write(
            &format!("{v}/Cargo.toml"),
            "[package]\nname = \"twice\"\nversion = \"0.1.0\"\n",
        );
        write(
            &format!("{v}/src/lib.rs"),
            "pub fn caller() {\n    os();\n}\n\n\
             #[cfg(unix)]\nfn os() {}\n\n#[cfg(not(unix))]\nfn os() {}\n\n\
             pub struct P;\n\nimpl P {\n    pub fn new() -> P {\n        P\n    }\n\n    \
             pub fn get(&self) -> u8 {\n        0\n    }\n}\n\n\
             pub fn make(p: P) -> P {\n    let _ = p.get();\n    P::new()\n}\n",
        );
    }
    let all = dump(&index_path(&tree, "twice"));
    let calls: Vec<_> = all.iter().filter(|e| e.0 == "CALLS").collect();
    assert!(calls.is_empty(), "{calls:?}");
    assert!(
        all.iter()
            .any(|e| e.0 == "UNRESOLVED" && e.1 == "caller#fn" && e.2 == "?os"),
        "{all:?}"
    );
}

/// The call graph of a one-crate repository named `name` whose `src/lib.rs`
/// is `lib`.
fn dump_of_crate(name: &str, lib: &str) -> Dump {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
    );
    write("src/lib.rs", lib);
    dump(&index_path(&tree, name))
}

/// A Rust path from the language's own crates (`core::mem::ManuallyDrop::new`,
/// `std::mem::take`) is the language's: no unproven row that answers about the
/// repo's `new`s would count. A path from a module nothing binds stays unproven.
#[test]
fn rust_paths_from_std_core_and_alloc_are_the_languages() {
    let all = dump_of_crate(
        "paths",
        "pub struct Cell;\n\nimpl Cell {\n    pub fn new() -> Cell {\n        Cell\n    }\n}\n\n\
         pub fn wrap(mut v: Vec<u8>) {\n    let _ = core::mem::ManuallyDrop::new(1u8);\n    \
         let _ = std::mem::take(&mut v);\n    let _ = alloc::vec::Vec::<u8>::new();\n    \
         let _ = mystery::Thing::new();\n}\n",
    );
    let unproven: Vec<_> = all
        .iter()
        .filter(|e| e.0 == "UNRESOLVED" && e.1 == "wrap#fn")
        .map(|e| (e.2.as_str(), e.3))
        .collect();
    assert_eq!(unproven, vec![("?new", 13)], "{all:?}");
}

/// `let f = f.debug_struct("A")` rebinds a library value: the `f` it is called
/// on is the binding before (a `fmt::Formatter`), so the calls on either are
/// the library's, not unproven calls of the repo's `field`/`finish`. The same
/// rebinding of a repo value still resolves.
#[test]
fn a_rebound_library_value_is_the_librarys() {
    let all = dump_of_crate(
        "rebind",
        "use core::fmt::{self, Debug};\n\npub struct Builder;\n\nimpl Builder {\n    \
         pub fn debug_struct(&self) -> Builder {\n        Builder\n    }\n    \
         pub fn finish(&self) {}\n}\n\npub struct A;\n\nimpl Debug for A {\n    \
         fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        \
         let mut f = f.debug_struct(\"A\");\n        f.finish()\n    }\n}\n\n\
         pub fn mine(b: Builder) {\n    let b = b.debug_struct();\n    b.finish();\n}\n",
    );
    let in_fmt: Vec<_> = all.iter().filter(|e| e.1 == "A::fmt#method").collect();
    assert!(in_fmt.is_empty(), "{in_fmt:?}");
    let mine: Vec<_> = all
        .iter()
        .filter(|e| e.0 == "CALLS" && e.1 == "mine#fn")
        .map(|e| (e.2.as_str(), e.3))
        .collect();
    assert_eq!(
        mine,
        vec![
            ("Builder::debug_struct#method", 22),
            ("Builder::finish#method", 23)
        ],
        "{all:?}"
    );
}

/// A callee's return type is looked up through its own file's import
/// (`use crate::c::Widget` in `b.rs`), which a run resolves only when asked.
/// When what that import names changes without `b.rs` changing (`c.rs` comes
/// to re-export `d`'s `Widget`, then defines its own), the caller in a third
/// file is resolved again: the keys of the import's lookups are the caller's
/// too.
#[test]
fn a_callees_import_moving_re_resolves_its_callers() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n",
    );
    write(
        "src/lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
    );
    write(
        "src/a.rs",
        "pub fn go() {\n    crate::b::make().run();\n}\n",
    );
    write(
        "src/b.rs",
        "use crate::c::Widget;\n\npub fn make() -> Widget {\n    Widget\n}\n",
    );
    let widget = "pub struct Widget;\n\nimpl Widget {\n    pub fn run(&self) {}\n}\n";
    write("src/c.rs", "pub struct Gadget;\n");
    write("src/d.rs", widget);
    let step = |what: &str| reindex_equals_fresh(work.path(), &tree, "shop", what);
    let run_of = |d: &Dump| {
        d.iter()
            .filter(|e| {
                e.0 == "CALLS" && e.1.starts_with("a::go#") && e.2.ends_with("Widget::run#method")
            })
            .map(|e| (e.2.clone(), e.4.clone()))
            .collect::<Vec<_>>()
    };
    let typed = |to: &str| vec![(format!("{to}::Widget::run#method"), "typed".to_string())];
    let first = step("first index");
    assert_ne!(run_of(&first), typed("d"), "b's import names nothing yet");
    write("src/c.rs", "pub use crate::d::Widget;\n");
    let moved = step("c re-exports d's Widget");
    assert_eq!(run_of(&moved), typed("d"), "{moved:?}");
    write("src/c.rs", widget);
    let own = step("c defines its own Widget");
    assert_eq!(run_of(&own), typed("c"), "{own:?}");
}

/// A file whose methods call each other (and that alone names an unproven
/// callee) deleted, then restored: each time the graph equals a fresh index,
/// counted with both ends unbound (`dump`'s counts). Before the Kuzu patch 7
/// edges into the deleted methods stayed (`patches/README.md`), and the
/// `Name` only the file used stayed too.
#[test]
fn deleting_and_restoring_a_file_whose_methods_call_each_other_equals_a_fresh_index() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    std::fs::create_dir_all(&tree).expect("mkdir");
    std::fs::write(tree.join("go.mod"), "module example.com/m\n\ngo 1.21\n").expect("go.mod");
    let a = "package m\n\ntype T struct{}\n\nfunc (t *T) A() { t.B(); t.C(); t.D() }\nfunc (t *T) B() { t.C(); t.D(); t.E() }\nfunc (t *T) C() { t.D(); t.E(); t.A() }\nfunc (t *T) D() { t.E(); t.A(); t.B() }\nfunc (t *T) E() { t.A(); t.B(); t.C(); x.Zork() }\n";
    std::fs::write(tree.join("a.go"), a).expect("a.go");
    std::fs::write(
        tree.join("b.go"),
        "package m\n\nfunc Use(t *T) {\n\tt.A()\n\tt.B()\n\tt.C()\n\tt.D()\n\tt.E()\n}\n",
    )
    .expect("b.go");
    let first = reindex_equals_fresh(work.path(), &tree, "go", "first index");
    std::fs::remove_file(tree.join("a.go")).expect("delete");
    let gone = reindex_equals_fresh(work.path(), &tree, "go", "a.go deleted");
    let calls = |d: &Dump| {
        d.iter()
            .find(|e| e.0 == "COUNT" && e.1 == "CALLS")
            .map(|e| e.3)
    };
    assert_eq!(calls(&gone), Some(0), "{gone:?}");
    std::fs::write(tree.join("a.go"), a).expect("restore");
    let back = reindex_equals_fresh(work.path(), &tree, "go", "a.go restored");
    assert_eq!(back, first);
}

/// A name a glob import brings in (`use super::*;` in a module file, Python's
/// `from .util import *`) follows the definitions: a function added to the
/// glob's module later is called through it (tier `import`) once the module's
/// file alone is indexed again, and the call goes when it goes; each
/// incremental graph equals a fresh index.
#[test]
fn names_a_glob_import_brings_in_follow_their_definitions() {
    for (lang, caller, call, home, def, to) in [
        (
            "rust",
            "src/globbed.rs",
            "\npub fn late(x: f64) -> f64 {\n    added_later(x)\n}\n",
            "src/lib.rs",
            "\npub fn added_later(x: f64) -> f64 {\n    x\n}\n",
            "added_later",
        ),
        (
            "python",
            "geo/starred.py",
            "\n\ndef late(x):\n    return added_later(x)  # noqa: F405\n",
            "geo/util.py",
            "\n\ndef added_later(x):\n    return x\n",
            "geo.util.added_later",
        ),
    ] {
        let work = tempfile::tempdir().expect("tmp");
        let tree = work.path().join("repo");
        copy_tree(&calls_fixture(lang), &tree);
        let append = |path: &str, text: &str| {
            let old = std::fs::read_to_string(tree.join(path)).expect("read");
            std::fs::write(tree.join(path), format!("{old}{text}")).expect("write");
        };
        let step = |what: &str| reindex_equals_fresh(work.path(), &tree, lang, what);
        let through_glob = |d: &Dump| {
            d.iter()
                .any(|e| e.0 == "CALLS" && e.2.split('#').next() == Some(to) && e.4 == "import")
        };
        step("first index");
        append(caller, call);
        assert!(!through_glob(&step("a call of a name not defined yet")));
        let before = std::fs::read_to_string(tree.join(home)).expect("read");
        append(home, def);
        assert!(
            through_glob(&step("the name defined in the glob's module")),
            "{lang}: no import edge to {to} through the glob"
        );
        std::fs::write(tree.join(home), before).expect("restore");
        assert!(!through_glob(&step("the definition removed")));
    }
}

/// Rust macros follow their definitions: an invocation of a macro no file
/// defines yet calls nothing; once another module defines it (`#[macro_use]`
/// is not needed to find it: the crate's only macro of the name), the
/// invocation calls it (tier `import`) and its template calls what it writes,
/// after an incremental run that indexed the defining file alone; both go
/// when the definition goes. Each incremental graph equals a fresh index.
#[test]
fn macro_invocations_follow_their_definitions() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    copy_tree(&calls_fixture("rust"), &tree);
    let append = |path: &str, text: &str| {
        let old = std::fs::read_to_string(tree.join(path)).expect("read");
        std::fs::write(tree.join(path), format!("{old}{text}")).expect("write");
    };
    let step = |what: &str| reindex_equals_fresh(work.path(), &tree, "rust", what);
    let edge = |d: &Dump, to: &str, tier: &str| {
        d.iter()
            .any(|e| e.0 == "CALLS" && e.2.split('#').next() == Some(to) && e.4 == tier)
    };
    step("first index");
    append(
        "src/globbed.rs",
        "
pub fn loud() -> u64 {
    shout!(3)
}
",
    );
    let d = step("an invocation of a macro not defined yet");
    assert!(!edge(&d, "util::shout", "import"), "no macro yet");
    let before = std::fs::read_to_string(tree.join("src/util.rs")).expect("read");
    append(
        "src/util.rs",
        "
macro_rules! shout {
    ($n:expr) => {
        $crate::util::fact($n)
    };
}
",
    );
    let d = step("the macro defined in another module");
    assert!(
        edge(&d, "util::shout", "import"),
        "no import edge to the macro"
    );
    assert!(
        d.iter().any(|e| e.0 == "CALLS"
            && e.1.starts_with("util::shout")
            && e.2.split('#').next() == Some("util::fact")),
        "the template's call of fact"
    );
    std::fs::write(tree.join("src/util.rs"), before).expect("restore");
    let d = step("the macro removed");
    assert!(!edge(&d, "util::shout", "import"), "the edge stays");
}

/// Callers through a crate re-exported under another name, in a workspace
/// (issue 52's grep): `pub extern crate grep_searcher as searcher;` and
/// `pub use grep_searcher::Searcher as Engine;` in `grep`, used from `app` as
/// `grep::searcher::Searcher` and `grep::Engine`; the methods called on values
/// of those types are the searcher's.
#[test]
fn callers_through_crates_re_exported_under_other_names() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("ws");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/searcher\", \"crates/grep\", \"crates/app\"]\n",
    );
    write(
        "crates/searcher/Cargo.toml",
        "[package]\nname = \"grep-searcher\"\nversion = \"0.1.0\"\n",
    );
    write(
        "crates/searcher/src/lib.rs",
        "pub struct Searcher;\n\nimpl Searcher {\n    pub fn new() -> Searcher {\n        Searcher\n    }\n\n    pub fn search_path(&self) -> usize {\n        0\n    }\n}\n",
    );
    write(
        "crates/grep/Cargo.toml",
        "[package]\nname = \"grep\"\nversion = \"0.1.0\"\n\n[dependencies]\ngrep-searcher = { path = \"../searcher\" }\n",
    );
    write(
        "crates/grep/src/lib.rs",
        "pub extern crate grep_searcher as searcher;\n\npub use grep_searcher::Searcher as Engine;\n",
    );
    write(
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\ngrep = { path = \"../grep\" }\n",
    );
    write(
        "crates/app/src/main.rs",
        "use grep::searcher::Searcher;\nuse grep::Engine;\n\nfn main() {\n    let s = Searcher::new();\n    s.search_path();\n    other();\n}\n\nfn other() -> usize {\n    Engine::new().search_path()\n}\n",
    );
    let ix = index_path(&tree, "ws");
    let into_search: Vec<(String, i64, String)> = dump(&ix)
        .into_iter()
        .filter(|e| e.0 == "CALLS" && e.2.ends_with("Searcher::search_path#method"))
        .map(|e| (e.1, e.3, e.4))
        .collect();
    assert_eq!(
        into_search,
        [
            ("main#fn".to_string(), 6, "typed".to_string()),
            ("other#fn".to_string(), 11, "typed".to_string()),
        ],
        "{into_search:?}"
    );
}

/// A local rebound from itself (`let input = input.clone().span(1)`, where
/// `input: &Input` is a parameter) has the type the chain gives from the
/// binding before; it used to name itself, and the calls on it had no edge.
#[test]
fn a_local_rebound_from_itself_keeps_a_type() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"rebind\"\nversion = \"0.1.0\"\n",
    );
    write(
        "src/lib.rs",
        "#[derive(Clone)]\npub struct Input {\n    at: usize,\n}\n\nimpl Input {\n    pub fn span(self, at: usize) -> Input {\n        Input { at }\n    }\n\n    pub fn end(&self) -> usize {\n        self.at\n    }\n}\n\npub struct Other;\n\nimpl Other {\n    pub fn end(&self) -> usize {\n        0\n    }\n}\n\npub fn search(input: &Input) -> usize {\n    let input = input.clone().span(1);\n    input.end()\n}\n",
    );
    let ix = index_path(&tree, "rebind");
    let ends: Vec<(String, String, i64, String)> = dump(&ix)
        .into_iter()
        .filter(|e| e.0 == "CALLS" && e.1.starts_with("search#"))
        .map(|e| (e.1, e.2, e.3, e.4))
        .collect();
    assert!(
        ends.contains(&(
            "search#fn".to_string(),
            "Input::end#method".to_string(),
            26,
            "typed".to_string()
        )),
        "{ends:?}"
    );
}

/// A bulk load whose edge tables go in many small COPY parts (as a big ref's
/// do, `GraphConfig::copy_part`) holds exactly what a load in one part does.
#[test]
fn a_load_in_many_copy_parts_equals_one_in_a_single_part() {
    let part = cruxe::store::graph::CopyPart {
        rows: 5,
        bytes: 400,
    };
    for lang in ["rust", "python", "typescript", "go"] {
        let whole = index_path(&calls_fixture(lang), lang);
        let tmp = tempfile::tempdir().expect("tmp");
        let data = cruxe::store::datadir::DataDir::new(tmp.path().join("data"));
        let mut o = opts(lang);
        o.graph.copy_part = part;
        let report =
            cruxe::index::index_repo(&calls_fixture(lang), &data, &o, &cruxe::index::Silent)
                .expect("index in parts");
        let parts = Indexed { tmp, data, report };
        let calls = parts.rows("MATCH ()-[c:CALLS]->() RETURN count(c) AS n")[0]["n"]
            .as_i64()
            .unwrap_or(0);
        // Enough rows that the CALLS table alone went in several parts.
        assert!(calls > 3 * part.rows as i64, "{lang}: {calls} CALLS edges");
        let (a, b) = (dump(&whole), dump(&parts));
        assert_eq!(
            a.symmetric_difference(&b).collect::<Vec<_>>(),
            Vec::<&(String, String, String, i64, String, String, String)>::new(),
            "{lang}: a load in parts differs from one in a single part"
        );
    }
}

/// A call on a library type's value (`v.push(1)` on a `Vec`) asks whether an
/// impl of the repo for a primitive type defines the method, and depends on
/// those methods only: a file that changes another `push` does not re-resolve
/// it (it did: one file deleted from the crates corpus re-resolved 3,077 files
/// that called `len`, `push` or `new` on library types). A method added to such
/// an impl re-resolves its callers. Every graph equals a fresh index.
#[test]
fn a_primitive_extension_method_re_resolves_only_its_callers() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"prim\"\nversion = \"0.1.0\"\n",
    );
    write(
        "src/lib.rs",
        "pub mod ext;\npub mod fill;\npub mod stack;\n",
    );
    write(
        "src/fill.rs",
        "pub fn fill(v: &mut Vec<u32>) {\n    v.push(1);\n}\n\npub fn wide(x: u32) -> u64 {\n    x.widen()\n}\n",
    );
    let stack = |method: &str| {
        format!("pub struct Stack;\n\nimpl Stack {{\n    pub fn {method}(&mut self) {{}}\n}}\n")
    };
    write("src/stack.rs", &stack("push"));
    write(
        "src/ext.rs",
        "pub trait Widen {\n    fn widen(self) -> u64;\n}\n",
    );
    let step = |what: &str| reindex_counted(work.path(), &tree, "prim", what);
    let widened = |g: &Dump| {
        g.iter()
            .any(|e| e.0 == "CALLS" && e.1 == "fill::wide#fn" && e.2 == "ext::u32::widen#method")
    };
    let (_, first) = step("first index");
    assert!(!widened(&first), "{first:?}");

    // A method of a repo type named `push` comes and goes: only its file.
    write("src/stack.rs", &stack("pop"));
    assert_eq!(
        step("push renamed").0,
        1,
        "files re-resolved for a renamed `push`"
    );
    write("src/stack.rs", &stack("push"));
    assert_eq!(step("push back").0, 1, "files re-resolved for `push` back");

    // `widen` for `u32`: `x.widen()` in fill.rs is the repo's now.
    write(
        "src/ext.rs",
        "pub trait Widen {\n    fn widen(self) -> u64;\n}\n\nimpl Widen for u32 {\n    fn widen(self) -> u64 {\n        self as u64\n    }\n}\n",
    );
    let (resolved, graph) = step("widen for u32 added");
    assert!(widened(&graph), "{graph:?}");
    assert!(
        resolved >= 2,
        "fill.rs was not re-resolved ({resolved} files)"
    );
}

/// Only callables are in the `name` tier, functions and methods apart, so only
/// they change a name's key, and only for calls of their kind: an associated
/// type named `Some`, or a method `drop` of an `impl Drop`, appearing does not
/// re-resolve the files that call `Some(…)` or `drop(…)` (deleting such a file
/// from the crates corpus re-resolved 3,265 and 486 files); nor does a
/// function `Some` (a bare `Some(…)` is the prelude's). A function `drop`
/// still does. Every graph equals a fresh index.
#[test]
fn a_name_calls_cannot_reach_re_resolves_only_its_file() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"named\"\nversion = \"0.1.0\"\n",
    );
    write("src/lib.rs", "pub mod ext;\npub mod make;\n");
    write(
        "src/make.rs",
        "pub fn make() -> Option<u32> {\n    Some(1)\n}\n\npub fn release(v: Vec<u32>) {\n    drop(v);\n}\n",
    );
    write("src/ext.rs", "pub trait OptionExt {}\n");
    let step = |what: &str| reindex_counted(work.path(), &tree, "named", what).0;
    step("first index");
    write("src/ext.rs", "pub trait OptionExt {\n    type Some;\n}\n");
    assert_eq!(step("type Some added"), 1, "files re-resolved");
    write("src/ext.rs", "pub trait OptionExt {}\n");
    assert_eq!(step("type Some gone"), 1, "files re-resolved");
    write(
        "src/ext.rs",
        "pub trait OptionExt {}\n\npub struct Guard;\n\nimpl Drop for Guard {\n    fn drop(&mut self) {}\n}\n",
    );
    assert_eq!(step("method drop added"), 1, "files re-resolved");
    // A bare `Some(…)` is the prelude's variant whatever the repo defines
    // (nothing imports ext's `Some`): no name-tier guess, nothing to redo.
    write(
        "src/ext.rs",
        "pub trait OptionExt {}\n\npub fn Some(x: u32) -> u32 {\n    x\n}\n",
    );
    assert_eq!(step("fn Some added"), 1, "files re-resolved");
    write(
        "src/ext.rs",
        "pub trait OptionExt {}\n\npub fn drop(x: Vec<u32>) {\n    let _ = x;\n}\n",
    );
    let resolved = step("fn drop added");
    assert!(
        resolved >= 2,
        "make.rs was not re-resolved ({resolved} files)"
    );
}

/// A method call of unknown receiver goes to the only method of its name in
/// the repo, so a method coming or going re-resolves its callers only when the
/// count was or is one: from three `kind` methods to two, the caller stays (a
/// file deleted from the crates corpus re-resolved the 257 files calling
/// `.kind()`); from two to one it gets its edge, and loses it again at two.
/// Every graph equals a fresh index.
#[test]
fn a_method_re_resolves_its_callers_only_when_it_may_be_the_only_one() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"kinds\"\nversion = \"0.1.0\"\n",
    );
    write(
        "src/lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod usage;\n",
    );
    let kind =
        |t: &str| format!("pub struct {t};\n\nimpl {t} {{\n    pub fn kind(&self) {{}}\n}}\n");
    for (file, t) in [("src/a.rs", "A"), ("src/b.rs", "B"), ("src/c.rs", "C")] {
        write(file, &kind(t));
    }
    write(
        "src/usage.rs",
        "pub fn run() {\n    let w = make();\n    w.kind();\n}\n",
    );
    let step = |what: &str| reindex_counted(work.path(), &tree, "kinds", what);
    let called = |g: &Dump| {
        g.iter()
            .any(|e| e.0 == "CALLS" && e.1 == "usage::run#fn" && e.2.ends_with("::kind#method"))
    };
    assert!(!called(&step("first index").1));
    std::fs::remove_file(tree.join("src/c.rs")).expect("rm");
    let (resolved, graph) = step("three to two");
    assert!(!called(&graph), "{graph:?}");
    assert!(
        resolved <= 1,
        "{resolved} files re-resolved (lib.rs at most)"
    );
    std::fs::remove_file(tree.join("src/b.rs")).expect("rm");
    let (resolved, graph) = step("two to one");
    assert!(called(&graph), "{graph:?}");
    assert!(
        resolved >= 2,
        "usage.rs was not re-resolved ({resolved} files)"
    );
    write("src/c.rs", &kind("C"));
    let (_, graph) = step("one to two");
    assert!(!called(&graph), "{graph:?}");
}

/// Other files read a file's own facts and its types' (fields, returns), not
/// the locals of its functions: adding a function, above the others or below,
/// re-resolves only its file (appending one to `serde_core`'s `de/mod.rs`
/// re-resolved the 38 files that read its facts). A field's type changed
/// still re-resolves the file calling through it. Every graph equals a fresh
/// index.
#[test]
fn a_function_added_leaves_the_users_of_its_files_facts_alone() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let write = writer(&tree);
    write(
        "Cargo.toml",
        "[package]\nname = \"facts\"\nversion = \"0.1.0\"\n",
    );
    write("src/lib.rs", "pub mod model;\npub mod usage;\n");
    let model = |above: &str, field: &str, below: &str| {
        format!(
            "{above}pub struct Inner;\n\nimpl Inner {{\n    pub fn go(&self) {{}}\n}}\n\n\
             pub struct Other;\n\nimpl Other {{\n    pub fn go(&self) {{}}\n}}\n\n\
             pub struct Wrap {{\n    pub inner: {field},\n}}\n\n\
             pub fn make() -> Wrap {{\n    Wrap {{ inner: {field} }}\n}}\n{below}"
        )
    };
    write("src/model.rs", &model("", "Inner", ""));
    write(
        "src/usage.rs",
        "use crate::model::make;\n\npub fn run() {\n    let w = make();\n    w.inner.go();\n}\n",
    );
    let step = |what: &str| reindex_counted(work.path(), &tree, "facts", what);
    let calls = |g: &Dump, to: &str| {
        g.iter()
            .any(|e| e.0 == "CALLS" && e.1 == "usage::run#fn" && e.2.ends_with(to))
    };
    let (_, graph) = step("first index");
    assert!(calls(&graph, "Inner::go#method"), "{graph:?}");
    let below = "\npub fn extra(x: u32) -> u32 {\n    let y = x;\n    y\n}\n";
    write("src/model.rs", &model("", "Inner", below));
    assert_eq!(step("a function appended").0, 1, "files re-resolved");
    let above = "pub fn first(v: Vec<u8>) -> usize {\n    v.len()\n}\n\n";
    write("src/model.rs", &model(above, "Inner", below));
    assert_eq!(
        step("a function above the others").0,
        1,
        "files re-resolved"
    );
    write("src/model.rs", &model(above, "Other", below));
    let (resolved, graph) = step("the field's type changed");
    assert!(calls(&graph, "Other::go#method"), "{graph:?}");
    assert!(
        resolved >= 2,
        "usage.rs was not re-resolved ({resolved} files)"
    );
}

/// A Python local bound again and again from itself (`line = line.strip()`,
/// forty times): each call on it weighs every binding's type, and a binding
/// that names the local weighed them all again, at each depth: exponential
/// in the bindings (a real tree with such a function took minutes; forty
/// bindings, days). Each local's bindings are weighed once per call now.
#[test]
fn python_a_local_rebound_many_times_from_itself_is_weighed_once() {
    let work = tempfile::tempdir().expect("tmp");
    let tree = work.path().join("repo");
    let mut text = String::from(
        "class Text:\n    def strip(self) -> \"Text\":\n        return self\n\n    \
         def shout(self) -> \"Text\":\n        return self\n\n\n\
         def clean(line: Text) -> Text:\n    line = line.strip()\n    return line.shout()\n\n\n\
         def scrub(line: Text) -> Text:\n",
    );
    for _ in 0..40 {
        text.push_str("    line = line.strip()\n");
    }
    text.push_str("    return line.shout()\n");
    std::fs::create_dir_all(tree.join("pkg")).expect("mkdir");
    std::fs::write(tree.join("pkg/text.py"), text).expect("write");
    let calls: Vec<_> = dump(&index_path(&tree, "python"))
        .into_iter()
        .filter(|e| e.0 == "CALLS" && e.1.starts_with("pkg.text.clean"))
        .map(|e| (e.2.split('#').next().unwrap_or("").to_string(), e.3))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("pkg.text.Text.shout".to_string(), 11),
            ("pkg.text.Text.strip".to_string(), 10)
        ],
        "a local bound twice still resolves"
    );
    // Bound 40 times from itself: each call is on a `Text` still (typed from
    // the left, `folded_type`, not 40 levels deep).
    let scrub: Vec<_> = dump(&index_path(&tree, "python"))
        .into_iter()
        .filter(|e| e.0 == "CALLS" && e.1.starts_with("pkg.text.scrub"))
        .map(|e| e.2.split('#').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(scrub.len(), 41, "{scrub:?}");
    assert_eq!(
        scrub.iter().filter(|t| *t == "pkg.text.Text.strip").count(),
        40,
        "{scrub:?}"
    );
}
