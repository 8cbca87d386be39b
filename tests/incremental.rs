//! Re-indexing: unchanged files are untouched, changed files replaced, deleted
//! files dropped, new files added, and the result equals a from-scratch index.

use std::path::Path;

use cruxe::index::{Silent, index_repo};
use cruxe::store::datadir::DataDir;

use crate::common::{copy_tree, fixture, opts, rows, s, small_graph};

/// Every file, symbol and import edge of the ref, with the properties that
/// matter, sorted.
fn snapshot(data: &DataDir) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let mut out: Vec<String> = rows(
        &store,
        "MATCH (:Ref)-[:HAS_FILE]->(f:File) RETURN f.path AS p, f.content_hash AS h, f.module AS m, \
         f.package AS pk, f.language AS l, f.line_count AS n, f.size AS z, f.error_lines AS i",
    )
    .iter()
    .map(|r| {
        let cols = ["p", "h", "m", "pk", "l", "n", "z", "i"];
        format!("file {}", cols.map(|c| s(&r[c])).join(" "))
    })
    .collect();
    out.extend(
        rows(
            &store,
            "MATCH (p)-[:CONTAINS]->(s:Symbol) RETURN s.id AS id, s.stable_id AS st, s.qualified_name AS q, \
             s.path AS path, s.line_start AS a, s.line_end AS b, \
             CASE WHEN label(p) = 'File' THEN p.id ELSE p.id END AS parent",
        )
        .iter()
        .map(|r| {
            format!(
                "sym {} {} {} {} {}-{} in {}",
                s(&r["id"]),
                s(&r["st"]),
                s(&r["q"]),
                s(&r["path"]),
                s(&r["a"]),
                s(&r["b"]),
                s(&r["parent"])
            )
        }),
    );
    out.extend(
        rows(
            &store,
            "MATCH (f:File)-[e:IMPORTS]->(t) RETURN f.path AS f, label(t) AS l, t.id AS t, \
             e.line AS n, e.to_name AS name",
        )
        .iter()
        .map(|r| {
            let cols = ["f", "l", "t", "n", "name"];
            format!("import {}", cols.map(|c| s(&r[c])).join(" "))
        }),
    );
    // Orphans would be a bug: every symbol has exactly one parent.
    let orphans = rows(
        &store,
        "MATCH (s:Symbol) WHERE NOT EXISTS { MATCH ()-[:CONTAINS]->(s) } RETURN count(*) AS n",
    );
    assert_eq!(s(&orphans[0]["n"]), "0", "orphan symbols");
    out.sort();
    out
}

fn load_catalog(data: &DataDir) -> cruxe::store::catalog::Catalog {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    cruxe::store::catalog::load(&store, "inc", "test").expect("catalog")
}

fn index(repo: &Path, data: &DataDir) -> cruxe::index::IndexReport {
    index_repo(repo, data, &opts("inc"), &Silent).expect("index")
}

#[test]
fn edits_deletes_and_additions_match_a_fresh_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    copy_tree(&fixture("python"), &repo);
    let data = DataDir::new(tmp.path().join("data"));

    let first = index(&repo, &data);
    assert_eq!((first.files, first.parsed, first.unchanged), (5, 5, 0));
    // The bulk-loaded build stores empty strings as empty strings, not NULL, so it
    // answers exactly like the transactional path.
    {
        let store = data.open_graph_read_only(&small_graph()).expect("open");
        let nulls = rows(
            &store,
            "MATCH (s:Symbol) WHERE s.doc IS NULL OR s.signature IS NULL OR s.visibility IS NULL \
             RETURN count(*) AS n",
        );
        assert_eq!(s(&nulls[0]["n"]), "0");
        let empty = rows(
            &store,
            "MATCH (s:Symbol) WHERE s.doc = '' RETURN count(*) AS n",
        );
        assert_ne!(s(&empty[0]["n"]), "0");
    }

    // Nothing changed: nothing parsed.
    let again = index(&repo, &data);
    assert_eq!((again.parsed, again.unchanged, again.removed), (0, 5, 0));

    let catalog_before = load_catalog(&data);

    // Edit one file, delete one, add one.
    std::fs::write(
        repo.join("auth/jwt.py"),
        "MAX_AGE = 60\n\n\ndef validate_token(token, key):\n    return token\n\n\ndef refresh(token):\n    return token\n",
    )
    .expect("edit");
    std::fs::remove_file(repo.join("main.py")).expect("delete");
    std::fs::create_dir_all(repo.join("billing")).expect("mkdir");
    std::fs::write(
        repo.join("billing/invoice.py"),
        "class Invoice:\n    def total(self):\n        return 0\n",
    )
    .expect("add");
    let r = index(&repo, &data);
    assert_eq!((r.files, r.parsed, r.unchanged, r.removed), (5, 2, 3, 1));

    // A server patches its catalog with the run's changes instead of reloading
    // the ref: the patched catalog equals a fresh load, import counts included,
    // and patching twice (a catalog loaded after the commit) changes nothing.
    let changes = r
        .changes
        .as_ref()
        .expect("an in-place run reports its changes");
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let patched = catalog_before.apply(changes, &store).expect("patch");
    let loaded = cruxe::store::catalog::load(&store, "inc", "test").expect("catalog");
    assert_eq!(patched.digest(), loaded.digest());
    assert_eq!(patched.observable(), loaded.observable());
    // Each keeps a symbol's enclosing symbol and a type's members (what
    // `observable` compares), the added file's too.
    for c in [&patched, &loaded] {
        let total = c.find("total", Some("billing/invoice.py"));
        assert_eq!(total.len(), 1);
        let invoice = c.parent(total[0]).expect("a method's parent is its class");
        assert_eq!(c.entry(invoice).name(), "Invoice");
        assert_eq!(c.members(invoice), total);
        assert_eq!(c.parent(invoice), None);
    }
    // The import counts came along: the patched one counts what the graph does.
    assert!(loaded.digest().iter().any(|(_, _, _, n)| *n > 0));
    assert_ne!(catalog_before.digest(), loaded.digest());
    assert_eq!(
        loaded.apply(changes, &store).expect("patch").digest(),
        loaded.digest()
    );
    drop(store);

    let incremental = snapshot(&data);
    assert!(incremental.iter().any(|l| l.contains("auth.jwt.refresh")));
    assert!(!incremental.iter().any(|l| l.contains("auth.jwt.Claims")));
    assert!(!incremental.iter().any(|l| l.contains("main.py")));
    assert!(
        incremental
            .iter()
            .any(|l| l.contains("billing.invoice.Invoice.total"))
    );

    let fresh_data = DataDir::new(tmp.path().join("fresh"));
    index(&repo, &fresh_data);
    assert_eq!(incremental, snapshot(&fresh_data));

    // Edits that keep a file's imports (only its hash and counts are rewritten)
    // and edits that change them: still equal to a fresh index.
    let service = repo.join("services/user_service.py");
    let mut text = std::fs::read_to_string(&service).expect("read");
    text.push_str("\n# trailing note\n");
    std::fs::write(&service, &text).expect("edit keeping imports");
    let r = index(&repo, &data);
    assert_eq!(r.parsed, 1);
    let kept = snapshot(&data);
    assert_ne!(kept, incremental);
    let fresh_data = DataDir::new(tmp.path().join("fresh-kept"));
    index(&repo, &fresh_data);
    assert_eq!(kept, snapshot(&fresh_data));
    std::fs::write(&service, format!("import os\n{text}")).expect("edit adding an import");
    let r = index(&repo, &data);
    assert_eq!(r.parsed, 1);
    let changed = snapshot(&data);
    let line_of = |snap: &[String]| {
        snap.iter()
            .find(|l| l.starts_with("file services/user_service.py "))
            .cloned()
            .expect("the file's line")
    };
    assert_ne!(line_of(&changed), line_of(&kept));
    let imports_os = |snap: &[String]| {
        snap.iter()
            .any(|l| l.starts_with("import services/user_service.py ") && l.ends_with(" os"))
    };
    assert!(imports_os(&changed) && !imports_os(&kept), "{changed:#?}");
    let fresh_data = DataDir::new(tmp.path().join("fresh-changed"));
    index(&repo, &fresh_data);
    assert_eq!(changed, snapshot(&fresh_data));
    std::fs::write(&service, &text).expect("restore");
    index(&repo, &data);
    assert_eq!(snapshot(&data), kept);

    // --force on the same data dir gives the same state again.
    let mut o = opts("inc");
    o.force = true;
    let forced = index_repo(&repo, &data, &o, &Silent).expect("force");
    assert_eq!(forced.parsed, 5);
    assert_eq!(kept, snapshot(&data));
}

#[test]
fn two_repos_and_refs_share_a_data_dir_without_mixing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    let mut a = opts("rust");
    a.ref_name = Some("main".into());
    index_repo(&fixture("rust"), &data, &a, &Silent).expect("rust");
    let mut b = opts("go");
    b.ref_name = Some("dev".into());
    index_repo(&fixture("go"), &data, &b, &Silent).expect("go");
    // Re-indexing one repo leaves the other alone.
    let mut a2 = a.clone();
    a2.force = true;
    index_repo(&fixture("rust"), &data, &a2, &Silent).expect("rust again");
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let st = store.status().expect("status");
    let summary: Vec<(String, String, i64)> = st
        .iter()
        .map(|s| (s.repo.clone(), s.ref_name.clone(), s.files))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("go".into(), "dev".into(), 4),
            ("rust".into(), "main".into(), 6)
        ]
    );
    let mixed = rows(
        &store,
        "MATCH (r:Ref)-[:HAS_FILE]->(f:File)-[:CONTAINS*1..10]->(s:Symbol) \
         WHERE s.repo <> r.repo OR s.ref <> r.name RETURN count(*) AS n",
    );
    assert_eq!(s(&mixed[0]["n"]), "0");
}

/// Module and package names come from the manifests: changing one renames every
/// file's package even though no source file changed; an edit that changes no
/// name re-indexes nothing.
#[test]
fn a_manifest_change_renames_unchanged_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    copy_tree(&fixture("rust"), &repo);
    let data = DataDir::new(tmp.path().join("data"));
    index(&repo, &data);
    let package = |data: &DataDir| {
        let store = data.open_graph_read_only(&small_graph()).expect("open");
        let r = rows(
            &store,
            "MATCH (f:File {path: 'src/user.rs'}) RETURN f.package AS p",
        );
        s(&r[0]["p"])
    };
    assert_eq!(package(&data), "authsvc");
    // An edit that names nothing differently (a version, a dependency):
    // nothing is re-indexed.
    let before = snapshot(&data);
    let toml = std::fs::read_to_string(repo.join("Cargo.toml")).expect("read");
    std::fs::write(
        repo.join("Cargo.toml"),
        format!("{toml}\n[dependencies]\nserde = \"1\"\n"),
    )
    .expect("w");
    let r = index(&repo, &data);
    assert_eq!(r.parsed, 0, "a manifest edit that changes no name");
    assert_eq!(snapshot(&data), before);
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"auth-service\"\nversion = \"0.2.0\"\nedition = \"2021\"\n",
    )
    .expect("w");
    let r = index(&repo, &data);
    assert_eq!(
        r.parsed, 6,
        "every file is re-indexed after a manifest change"
    );
    assert_eq!(package(&data), "auth_service");
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index(&repo, &fresh);
    assert_eq!(snapshot(&data), snapshot(&fresh));
}

/// A manifest that appears or goes in one directory (a Python import root)
/// renames that directory's modules: those files are re-indexed, no others, and
/// every import is resolved again; the graph equals a fresh index each time.
#[test]
fn an_import_root_that_comes_and_goes_re_indexes_only_its_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    copy_tree(&fixture("python"), &repo);
    let data = DataDir::new(tmp.path().join("data"));
    index(&repo, &data);
    let imports = |data: &DataDir| {
        let store = data.open_graph_read_only(&small_graph()).expect("open");
        let mut v: Vec<String> = rows(
            &store,
            "MATCH (f:File)-[e:IMPORTS]->(t) RETURN f.path AS f, label(t) AS l, t.id AS t, e.line AS n",
        )
        .iter()
        .map(|r| format!("{} {} {} {}", s(&r["f"]), s(&r["n"]), s(&r["l"]), s(&r["t"])))
        .collect();
        v.sort();
        v
    };
    let manifest = repo.join("auth/pyproject.toml");
    let auth_files = std::fs::read_dir(repo.join("auth"))
        .expect("ls")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "py"))
        })
        .count();
    for (i, step) in ["add", "again", "remove"].iter().enumerate() {
        match *step {
            "add" => std::fs::write(&manifest, "[project]\nname = \"auth\"\n").expect("write"),
            "remove" => std::fs::remove_file(&manifest).expect("rm"),
            _ => {}
        }
        let r = index(&repo, &data);
        let want = if *step == "again" { 0 } else { auth_files };
        assert_eq!(r.parsed, want, "files re-indexed after: {step}");
        let fresh = DataDir::new(tmp.path().join(format!("fresh-{i}")));
        index(&repo, &fresh);
        assert_eq!(snapshot(&data), snapshot(&fresh), "after: {step}");
        assert_eq!(imports(&data), imports(&fresh), "imports after: {step}");
    }
}

/// Nesting deeper than the graph's 30-level reach (generated code) is flattened
/// at level 30, so re-indexing the file still finds and replaces every symbol.
#[test]
fn deep_nesting_is_capped_and_replaced_cleanly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("deep");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let nested = |depth: usize, tail: &str| -> String {
        let mut text = String::new();
        for d in 0..depth {
            text.push_str(&"    ".repeat(d));
            text.push_str(&format!("def level{d}():\n"));
        }
        text.push_str(&"    ".repeat(depth));
        text.push_str(tail);
        text.push('\n');
        text
    };
    std::fs::write(repo.join("deep.py"), nested(40, "return 1")).expect("w");
    let data = DataDir::new(tmp.path().join("data"));
    index(&repo, &data);
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let max_depth = rows(
        &store,
        "MATCH p = (:File)-[:CONTAINS*1..30]->(s:Symbol) RETURN max(length(p)) AS d, count(DISTINCT s) AS n",
    );
    assert_eq!(s(&max_depth[0]["d"]), "30");
    assert_eq!(s(&max_depth[0]["n"]), "40", "every level is reachable");
    drop(store);
    std::fs::write(repo.join("deep.py"), nested(40, "return 2")).expect("w");
    let r = index(&repo, &data);
    assert_eq!(r.parsed, 1);
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index(&repo, &fresh);
    assert_eq!(snapshot(&data), snapshot(&fresh));
    // Without its resolution state a run cannot diff the file's symbols: all 40
    // are deleted and created again, with the same ids, in one transaction.
    std::fs::remove_dir_all(data.root().join("state")).expect("rm state");
    std::fs::write(repo.join("deep.py"), nested(40, "return 3")).expect("w");
    assert_eq!(index(&repo, &data).parsed, 1);
    let fresh = DataDir::new(tmp.path().join("fresh3"));
    index(&repo, &fresh);
    assert_eq!(snapshot(&data), snapshot(&fresh));
}

/// Asks for a stop when the run reaches `phase` (as a server's shutdown would
/// while the run is there).
struct StopAt<'a> {
    phase: &'static str,
    stop: &'a cruxe::index::Stop,
}

impl cruxe::index::Progress for StopAt<'_> {
    fn phase(&self, name: &str, _total: u64) {
        if name == self.phase {
            self.stop.request();
        }
    }
}

/// Asks for a stop once `files` files are parsed.
struct StopAfterFiles<'a> {
    files: std::sync::atomic::AtomicI64,
    stop: &'a cruxe::index::Stop,
}

impl cruxe::index::Progress for StopAfterFiles<'_> {
    fn advance(&self, n: u64) {
        let left = self
            .files
            .fetch_sub(n as i64, std::sync::atomic::Ordering::SeqCst);
        if left <= n as i64 {
            self.stop.request();
        }
    }
}

/// A search index's tag and the symbols it holds (sorted).
fn search_state(dir: &Path) -> (Option<String>, Vec<String>) {
    let index = cruxe::store::search::SearchIndex::open_dir(dir).expect("search index");
    let mut ids = index.symbol_ids().expect("ids");
    ids.sort();
    (cruxe::store::search::read_tag(dir), ids)
}

/// A run asked to stop gives up: while parsing, or with its transaction
/// written but not committed (rolled back), or while building a new database
/// (never published). The index keeps its previous state, and the next run
/// does the work.
#[test]
fn a_stopped_run_leaves_the_previous_state() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    copy_tree(&fixture("python"), &repo);
    std::fs::create_dir_all(repo.join("gen")).expect("mkdir");
    for i in 0..30 {
        let src = format!("def generated_{i}(x):\n    return x + {i}\n");
        std::fs::write(repo.join(format!("gen/g{i}.py")), src).expect("write");
    }
    let data = DataDir::new(tmp.path().join("data"));

    // A first index stopped while its new database is loaded (its files and
    // symbols while resolution waits for them, then the edges): nothing
    // published.
    let stopped = |phase: &'static str| {
        let o = cruxe::index::IndexOptions {
            stop: cruxe::index::Stop::default(),
            ..opts("inc")
        };
        let progress = StopAt {
            phase,
            stop: &o.stop,
        };
        index_repo(&repo, &data, &o, &progress)
    };
    for phase in ["parsing", "resolving imports", "writing"] {
        assert!(
            matches!(stopped(phase), Err(cruxe::index::IndexError::Stopped)),
            "a first index stopped at {phase}"
        );
        assert!(
            !data.exists(),
            "a first index stopped at {phase} published a graph"
        );
    }

    index_repo(&repo, &data, &opts("inc"), &Silent).expect("index");
    let before = snapshot(&data);
    // A rebuild stopped partway through its parse (of 36 files), its first
    // files already handed to the new search index: the search index is left
    // as it was.
    let search_dir = data.search_dir("inc", "test");
    let search_before = search_state(&search_dir);
    let rebuild = cruxe::index::IndexOptions {
        force: true,
        ..opts("inc")
    };
    let progress = StopAfterFiles {
        files: 3.into(),
        stop: &rebuild.stop,
    };
    assert!(matches!(
        index_repo(&repo, &data, &rebuild, &progress),
        Err(cruxe::index::IndexError::Stopped)
    ));
    assert_eq!(snapshot(&data), before, "a rebuild stopped while parsing");
    assert_eq!(search_state(&search_dir), search_before);
    std::fs::write(
        repo.join("auth/late.py"),
        "def arrived_late(x):\n    return x\n",
    )
    .expect("write");
    std::fs::remove_file(repo.join("services/user_service.py")).expect("rm");
    for phase in ["parsing", "resolving imports", "writing"] {
        assert!(
            matches!(stopped(phase), Err(cruxe::index::IndexError::Stopped)),
            "stopped at {phase}"
        );
        assert_eq!(snapshot(&data), before, "stopped at {phase}");
    }
    index_repo(&repo, &data, &opts("inc"), &Silent).expect("index");
    let after = snapshot(&data);
    assert_ne!(after, before);
    assert!(after.iter().any(|l| l.contains("arrived_late")));
    assert!(
        !after
            .iter()
            .any(|l| l.starts_with("file services/user_service.py "))
    );
}

/// A run reads only files whose stat (size, times, inode) changed since they
/// were last read; a rewrite that keeps the size and even the modification
/// time is still seen (the change time moves), and so is one made right after
/// a run (its times are too close to the run's to be trusted).
#[test]
fn a_file_changed_without_a_new_size_or_mtime_is_still_read() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let file = repo.join("a.py");
    let other = repo.join("b.py");
    std::fs::write(&file, "def alpha():\n    return 1\n").expect("write");
    std::fs::write(&other, "def other():\n    return 1\n").expect("write");
    // Times well before the first run, so their stats are trusted.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for f in [&file, &other] {
        std::fs::File::options()
            .write(true)
            .open(f)
            .and_then(|h| h.set_modified(old))
            .expect("set mtime");
    }
    let data = DataDir::new(tmp.path().join("data"));
    assert_eq!(index(&repo, &data).parsed, 2);
    let names = |data: &DataDir| -> Vec<String> {
        let store = data.open_graph_read_only(&small_graph()).expect("open");
        let mut v: Vec<String> = rows(&store, "MATCH (s:Symbol) RETURN s.name AS n")
            .iter()
            .map(|r| s(&r["n"]))
            .collect();
        v.sort();
        v
    };
    // Nothing changed: nothing read, nothing written.
    let again = index(&repo, &data);
    assert_eq!((again.parsed, again.unchanged), (0, 2));

    // Same size, modification time put back: the change time gives it away.
    std::fs::write(&file, "def gamma():\n    return 1\n").expect("rewrite");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|h| h.set_modified(old))
        .expect("set mtime");
    let report = index(&repo, &data);
    assert_eq!(report.parsed, 1, "the rewritten file is read");
    assert_eq!(names(&data), ["gamma", "other"]);

    // Rewritten again at once, same size: its stat (taken within the same
    // moment as the run) was not trusted, so it is read again.
    std::fs::write(&file, "def delta():\n    return 1\n").expect("rewrite");
    let report = index(&repo, &data);
    assert_eq!(report.parsed, 1);
    std::fs::write(&file, "def omega():\n    return 1\n").expect("rewrite");
    index(&repo, &data);
    assert_eq!(names(&data), ["omega", "other"]);
}

/// What a walk found, comparable: sources (path, language), manifests,
/// problems, whether there is a `src/`, and the directories entered.
fn walk_view(w: &cruxe::source::walk::WalkResult) -> Vec<String> {
    let mut out: Vec<String> = w
        .sources
        .iter()
        .map(|f| {
            format!(
                "source {} {:?} {:?}",
                f.path,
                f.language,
                f.stat.map(|s| s.size)
            )
        })
        .collect();
    out.extend(
        w.manifests
            .iter()
            .map(|(rel, abs)| format!("manifest {rel} {}", abs.display())),
    );
    out.extend(
        w.diagnostics
            .iter()
            .map(|d| format!("problem {} {}", d.path, d.problem)),
    );
    out.extend(
        w.dirs
            .iter()
            .map(|d| format!("dir {} {:?}", d.rel, d.times)),
    );
    out.push(format!("src {}", w.has_src_dir));
    out
}

/// A CLI run lists again only the directories whose times changed since the
/// last run's walk (`source::rewalk`): after every kind of change to a tree,
/// what it finds is what a full walk finds, or it declines.
#[test]
fn a_walk_from_the_memo_of_the_last_equals_a_full_walk() {
    use cruxe::source::rewalk::{DirMemo, rewalk};
    use cruxe::source::walk::{WalkOptions, walk};
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("tree");
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    for d in 0..6 {
        for f in 0..5 {
            w(&format!("pkg{d}/sub/m{f}.py"), "def f():\n    pass\n");
            w(&format!("pkg{d}/n{f}.go"), "package p\n");
        }
    }
    w("src/lib.rs", "pub fn a() {}\n");
    w("Cargo.toml", "[package]\nname = \"t\"\n");
    w(".gitignore", "build/\n*.tmp.py\n");
    w("pkg1/.gitignore", "skip.py\n");
    let opts = WalkOptions {
        max_file_size: 200,
        ..WalkOptions::default()
    };
    let settle = || std::thread::sleep(std::time::Duration::from_millis(120));
    type Change<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let mut changes: Vec<Change> = vec![
        (
            "edit",
            Box::new(|| w("pkg0/n1.go", "package p\n\nfunc F() {}\n")),
        ),
        ("add", Box::new(|| w("pkg2/sub/new.py", "x = 1\n"))),
        (
            "delete",
            Box::new(|| std::fs::remove_file(root.join("pkg3/n0.go")).expect("rm")),
        ),
        (
            "rename",
            Box::new(|| {
                std::fs::rename(root.join("pkg4/n2.go"), root.join("pkg4/n9.go")).expect("mv")
            }),
        ),
        (
            "move across",
            Box::new(|| {
                std::fs::rename(root.join("pkg5/sub/m1.py"), root.join("pkg0/sub/m1.py"))
                    .expect("mv")
            }),
        ),
        (
            "ignored by name",
            Box::new(|| w("pkg2/x.tmp.py", "y = 2\n")),
        ),
        ("ignored dir", Box::new(|| w("build/out.py", "z = 3\n"))),
        ("ignored below", Box::new(|| w("pkg1/skip.py", "z = 3\n"))),
        ("too large", Box::new(|| w("pkg3/big.py", &"#".repeat(500)))),
        ("shrunk", Box::new(|| w("pkg3/big.py", "small = 1\n"))),
        ("manifest", Box::new(|| w("pkg2/go.mod", "module x\n"))),
        (
            "edit an ignore file",
            Box::new(|| w("pkg1/.gitignore", "other.py\n")),
        ),
        ("new dir", Box::new(|| w("pkg6/a.py", "a = 1\n"))),
        (
            "new ignore file",
            Box::new(|| w("pkg2/sub/.gitignore", "new.py\n")),
        ),
        (
            "dir removed",
            Box::new(|| std::fs::remove_dir_all(root.join("pkg6")).expect("rm")),
        ),
        ("edit again", Box::new(|| w("pkg0/n1.go", "package q\n"))),
    ];
    // Rounds without a change: every directory is kept.
    changes.extend(
        ["nothing", "nothing again", "still nothing"]
            .into_iter()
            .map(|k| (k, Box::new(|| ()) as Box<dyn Fn()>) as Change),
    );
    // Every other change lands right after the walk that recorded its
    // directory (which is then read again anyway), the others once the
    // directories' times have settled.
    settle();
    let started = std::time::SystemTime::now();
    let first = walk(&root, &opts);
    let mut memo = DirMemo::of(&root, &opts, &first, started, None);
    let mut from_memo = 0;
    for (round, (kind, change)) in changes.iter().enumerate() {
        if round % 2 == 0 {
            settle();
        }
        change();
        let started = std::time::SystemTime::now();
        let again = rewalk(&root, &opts, &memo);
        let full = walk(&root, &opts);
        if let Some(again) = &again {
            from_memo += 1;
            assert_eq!(
                walk_view(again),
                walk_view(&full),
                "after '{kind}' (round {round}) the walk from the memo differs from a full walk"
            );
        }
        let used = again.unwrap_or(full);
        memo = DirMemo::of(&root, &opts, &used, started, Some(&memo));
    }
    assert!(
        from_memo >= changes.len() / 2,
        "the memo was used in only {from_memo} of {} walks: the test did not test",
        changes.len()
    );
}

/// Files, symbols with their parents and import edges of one repo/ref, sorted.
fn ref_dump(data: &DataDir, repo: &str, ref_name: &str) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let at = format!("{{repo: '{repo}', ref: '{ref_name}'}}");
    let mut out: Vec<String> = Vec::new();
    for (kind, query) in [
        (
            "file",
            format!(
                "MATCH (f:File {at}) RETURN f.path AS a, f.content_hash AS b, f.module AS c, f.package AS d"
            ),
        ),
        (
            "symbol",
            format!(
                "MATCH (p)-[:CONTAINS]->(s:Symbol {at}) RETURN s.id AS a, s.qualified_name AS b, \
                 s.line_start AS c, p.id AS d"
            ),
        ),
        (
            "import",
            format!(
                "MATCH (f:File {at})-[e:IMPORTS]->(t) RETURN f.path AS a, t.id AS b, e.to_name AS c, \
                 e.line AS d"
            ),
        ),
    ] {
        out.extend(rows(&store, &query).iter().map(|r| {
            let cols = ["a", "b", "c", "d"].map(|c| s(&r[c]));
            format!("{kind} {}", cols.join(" "))
        }));
    }
    out.sort();
    out
}

/// A whole ref written into a graph that holds another goes in with bulk COPY,
/// not one transaction (`GraphStore::load_beside`): it equals the same ref
/// indexed alone, a load cut short leaves the ref marked unfinished, and the
/// next run indexes it again in full.
#[test]
fn a_ref_loaded_beside_another_equals_it_alone_and_a_cut_load_is_redone() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alone = DataDir::new(tmp.path().join("alone"));
    index_repo(&fixture("python"), &alone, &opts("inc"), &Silent).expect("alone");
    let expected = ref_dump(&alone, "inc", "test");
    for kind in ["file ", "symbol ", "import "] {
        assert!(
            expected.iter().any(|l| l.starts_with(kind)),
            "no {kind}rows"
        );
    }

    let shared = DataDir::new(tmp.path().join("shared"));
    index_repo(&fixture("go"), &shared, &opts("other"), &Silent).expect("other");
    let other = ref_dump(&shared, "other", "test");

    // Stopped once its files are in: the ref is left marked, half written.
    let o = cruxe::index::IndexOptions {
        stop: cruxe::index::Stop::default(),
        ..opts("inc")
    };
    let progress = StopAt {
        phase: "writing",
        stop: &o.stop,
    };
    assert!(index_repo(&fixture("python"), &shared, &o, &progress).is_err());
    {
        let store = shared.open_graph_read_only(&small_graph()).expect("open");
        assert!(store.ref_unfinished("inc", "test").expect("tag"));
        let partial = ref_dump(&shared, "inc", "test");
        assert!(
            !partial.is_empty() && partial.len() < expected.len(),
            "{partial:?}"
        );
    }

    // The next run starts it over; then a run with nothing changed writes nothing.
    let report = index_repo(&fixture("python"), &shared, &opts("inc"), &Silent).expect("again");
    assert_eq!(report.parsed, report.files);
    assert_eq!(ref_dump(&shared, "inc", "test"), expected);
    let store = shared.open_graph_read_only(&small_graph()).expect("open");
    assert!(!store.ref_unfinished("inc", "test").expect("tag"));
    drop(store);
    let report = index_repo(&fixture("python"), &shared, &opts("inc"), &Silent).expect("unchanged");
    assert_eq!(report.parsed, 0);
    assert_eq!(ref_dump(&shared, "inc", "test"), expected);
    assert_eq!(ref_dump(&shared, "other", "test"), other);

    // Without imports too (nothing to resolve, the same load).
    let no_imports = cruxe::index::IndexOptions {
        skip_imports: true,
        ..opts("bare")
    };
    let report = index_repo(&fixture("python"), &shared, &no_imports, &Silent).expect("bare");
    assert_eq!(report.parsed, report.files);
    let bare = ref_dump(&shared, "bare", "test");
    let without_imports = |d: &[String]| -> Vec<String> {
        d.iter()
            .filter(|l| l.starts_with("file "))
            .map(|l| {
                l.rsplit_once(' ')
                    .map_or(l.clone(), |(head, _)| head.to_string())
            })
            .collect()
    };
    assert_eq!(without_imports(&bare), without_imports(&expected));
    assert!(bare.iter().any(|l| l.starts_with("symbol ")));
    assert!(!bare.iter().any(|l| l.starts_with("import ")));
}

/// A full build by the CLI (`exits_after`) writes its resolution state before
/// the edges' COPY and lets go of it: its report's totals are the state's,
/// and the state it leaves is one the next run trusts (only the changed file
/// is parsed again; without a trusted state every file is), with a result
/// equal to a fresh index.
#[test]
fn a_cli_full_build_leaves_a_state_the_next_run_trusts() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("inc");
    copy_tree(&fixture("python"), &repo);
    let cli = cruxe::index::IndexOptions {
        exits_after: true,
        ..opts("inc")
    };
    let data = DataDir::new(tmp.path().join("data"));
    let first = index_repo(&repo, &data, &cli, &Silent).expect("first");
    let plain = DataDir::new(tmp.path().join("plain"));
    let kept = index_repo(&repo, &plain, &opts("inc"), &Silent).expect("plain");
    assert!(first.symbols > 0 && first.import_edges > 0);
    assert_eq!(
        (first.symbols, first.import_edges, first.unresolved_imports),
        (kept.symbols, kept.import_edges, kept.unresolved_imports)
    );
    assert!(data.state_path("inc", "test").exists());

    std::fs::write(
        repo.join("auth/late.py"),
        "def arrived_late(x):\n    return x\n",
    )
    .expect("write");
    let next = index_repo(&repo, &data, &cli, &Silent).expect("next");
    assert_eq!(next.parsed, 1, "the state was not trusted");
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index_repo(&repo, &fresh, &opts("inc"), &Silent).expect("fresh");
    assert_eq!(snapshot(&data), snapshot(&fresh));
}
