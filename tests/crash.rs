//! A `kill -9` of a real `cruxe index` at any moment leaves a data dir that opens
//! and answers with the last completed state: all of the old run or all of the new.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use cruxe::store::catalog;
use cruxe::store::datadir::DataDir;
use cruxe::store::search::{self, Filters, SearchIndex};

use crate::common::{cruxe_bin, rows, s, small_graph};

/// Writes `files` Python files, each with `defs` functions carrying `tag` in their
/// names, so the state a data dir holds can be told from its symbols.
fn write_repo(root: &Path, files: usize, defs: usize, tag: &str) {
    for i in 0..files {
        let dir = root.join(format!("pkg{}", i % 20));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut text = String::new();
        for d in 0..defs {
            text.push_str(&format!(
                "class C{d}_{tag}:\n    def m{d}(self, x):\n        return x + {d}\n\n"
            ));
        }
        std::fs::write(dir.join(format!("mod{i}.py")), text).expect("write");
    }
}

fn run_index(repo: &Path, data: &Path) -> std::process::Child {
    run_index_with(repo, data, false)
}

/// `force` rebuilds aside and swaps (the bulk path); otherwise the run is an
/// in-place transaction (the incremental path). Both are killed below.
fn run_index_with(repo: &Path, data: &Path, force: bool) -> std::process::Child {
    let mut cmd = Command::new(cruxe_bin());
    cmd.args(["index", repo.to_str().expect("utf8"), "--data"])
        .arg(data)
        .args(["--repo", "crash", "--ref", "main"]);
    if force {
        cmd.arg("--force");
    }
    cmd.env("CRUXE_BUFFER_POOL_MB", "256")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn cruxe index")
}

/// (files, symbols, tags seen) of the data dir, opened as a reader would.
fn state(data: &Path) -> (i64, i64, Vec<String>) {
    let dd = DataDir::new(data);
    let store = dd.open_graph_read_only(&small_graph()).unwrap_or_else(|e| {
        panic!(
            "data dir must open after a crash: {e}\ndata dir: {}",
            listing(data)
        )
    });
    let files = rows(&store, "MATCH (f:File) RETURN count(*) AS n");
    let syms = rows(&store, "MATCH (s:Symbol) RETURN count(*) AS n");
    let tags = rows(
        &store,
        "MATCH (s:Symbol {kind: 'class'}) RETURN DISTINCT CASE WHEN s.name ENDS WITH '_a' THEN '_a' WHEN s.name ENDS WITH '_b' THEN '_b' ELSE '?' END AS tag ORDER BY tag",
    );
    let n = |r: &[serde_json::Map<String, serde_json::Value>]| r[0]["n"].as_i64().expect("count");
    (
        n(&files),
        n(&syms),
        tags.iter().map(|r| s(&r["tag"])).collect(),
    )
}

/// The data dir's files with their sizes (for a failure's message).
fn listing(data: &Path) -> String {
    let mut out = Vec::new();
    let mut stack = vec![data.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.starts_with(data.join("search")) {
                stack.push(path);
            } else if let Ok(meta) = entry.metadata() {
                let name = path
                    .strip_prefix(data)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                out.push(format!("{name} ({} bytes)", meta.len()));
            }
        }
    }
    out.sort();
    out.join(", ")
}

/// Whether the search index beside the graph answers for the same state as the
/// graph. A search index that lags behind (a kill between the graph's commit and
/// the search index's) must be detectable by its tag, and is then rebuilt the way
/// the server rebuilds it; after that it must agree. Returns whether it lagged.
fn search_agrees(data: &Path, repo: &Path, tags: &[String]) -> bool {
    let dd = DataDir::new(data);
    let store = dd.open_graph_read_only(&small_graph()).expect("open");
    let cat = catalog::load(&store, "crash", "main").expect("catalog");
    let dir = dd.search_dir("crash", "main");
    let index = SearchIndex::open_dir(&dir)
        .unwrap_or_else(|e| panic!("the search index must open after a crash: {e}"));
    let indexed_at = store.ref_indexed_at("crash", "main").expect("query");
    let lagged = indexed_at.is_none() || search::read_tag(&dir) != indexed_at;
    if lagged {
        let symbols = store.symbol_rows("crash", "main").expect("rows");
        index.rebuild(&symbols, Some(repo)).expect("rebuild");
    }
    let filters = Filters {
        kind: Some("class"),
        ..Filters::default()
    };
    let hits = index.search(&cat, "C3", &filters, 50).expect("search");
    assert!(!hits.is_empty(), "search finds the classes");
    for h in &hits {
        let name = cat.entry(h.entry).name();
        assert!(
            tags.iter().any(|t| name.ends_with(t.as_str())),
            "search answered {name} while the graph holds {tags:?} (lagged: {lagged})"
        );
    }
    lagged
}

#[test]
fn kill_during_indexing_leaves_the_last_completed_state() {
    const FILES: usize = 1500;
    const DEFS: usize = 8;
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("crash");
    let data = tmp.path().join("data");

    // State A, completed. The time of an in-place run over every file sets the
    // kill points (a forced rebuild is faster, so late kills may find it done).
    write_repo(&repo, FILES, DEFS, "_a");
    assert!(run_index(&repo, &data).wait().expect("wait").success());
    let a = state(&data);
    write_repo(&repo, FILES, DEFS, "_b");
    let started = Instant::now();
    assert!(run_index(&repo, &data).wait().expect("wait").success());
    let full = started.elapsed();
    write_repo(&repo, FILES, DEFS, "_a");
    assert!(run_index(&repo, &data).wait().expect("wait").success());
    assert_eq!(state(&data), a);
    assert_eq!(
        a,
        (
            FILES as i64,
            (FILES * DEFS * 2) as i64,
            vec!["_a".to_string()]
        )
    );

    // State B on disk; every run below is killed somewhere between start and end.
    write_repo(&repo, FILES, DEFS, "_b");
    let b = (
        FILES as i64,
        (FILES * DEFS * 2) as i64,
        vec!["_b".to_string()],
    );
    let mut saw_old = 0;
    let mut saw_old_forced = 0;
    let mut search_lagged = 0;
    let fractions = [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95];
    for (round, fraction) in fractions.iter().chain(fractions.iter()).enumerate() {
        let force = round >= fractions.len();
        let mut child = run_index_with(&repo, &data, force);
        std::thread::sleep(full.mul_f64(*fraction));
        let finished = child.try_wait().expect("try_wait").is_some();
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = state(&data);
        assert!(
            now == a || now == b,
            "after kill at {fraction}: {now:?} is neither the old nor the new state"
        );
        if search_agrees(&data, &repo, &now.2) {
            search_lagged += 1;
        }
        if now == a {
            if force {
                saw_old_forced += 1;
            } else {
                saw_old += 1;
            }
            assert!(!finished, "a finished run must have committed");
        } else {
            // Once B committed, later kills leave B.
            write_repo(&repo, FILES, DEFS, "_a");
            // Start over from A for the next round so every kill point is tested
            // against a pending change.
            assert!(run_index(&repo, &data).wait().expect("wait").success());
            assert_eq!(state(&data), a);
            write_repo(&repo, FILES, DEFS, "_b");
        }
    }
    assert!(
        saw_old > 0,
        "no kill landed before the commit: the test did not test"
    );
    assert!(
        saw_old_forced > 0,
        "no kill landed inside a --force rebuild: the test did not test"
    );

    eprintln!(
        "kills: {saw_old} + {saw_old_forced} (forced) left the old state; the search index lagged the graph {search_lagged} times"
    );

    // A final complete run reaches B.
    assert!(run_index(&repo, &data).wait().expect("wait").success());
    assert_eq!(state(&data), b);
    assert!(
        !search_agrees(&data, &repo, &b.2),
        "a completed run leaves the search index in step"
    );
}

/// What a kill leaves when a writer is stopped after its commit or inside its
/// checkpoint, taken from real runs: while `cruxe index` writes, the data dir's
/// files are copied the moment its log has grown (a run committed) or a shadow
/// file appears (a checkpoint is under way), in the order that keeps the copy
/// what a kill at one instant could leave: the database, then its log, then the
/// shadow file (a checkpoint writes the database only after its record is in the
/// log, and the shadow file is complete before that). Each copy must open, for
/// readers and writers, with exactly the old or the new state, and never by
/// replaying the log's transactions.
#[test]
fn a_writer_stopped_after_its_commit_or_in_its_checkpoint_leaves_a_checkpoint() {
    const FILES: usize = 1500;
    const DEFS: usize = 8;
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("crash");
    let data = tmp.path().join("data");
    write_repo(&repo, FILES, DEFS, "_a");
    assert!(run_index(&repo, &data).wait().expect("wait").success());
    let a = state(&data);
    let graph = DataDir::new(&data)
        .graph_path()
        .expect("manifest")
        .expect("a graph");
    let name = graph
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let (wal, shadow) = (
        graph.with_file_name(format!("{name}.wal")),
        graph.with_file_name(format!("{name}.shadow")),
    );
    // (sample dir, whether the log was copied with a checkpoint record)
    let mut samples: Vec<(std::path::PathBuf, bool)> = Vec::new();
    let mut b = None;
    for round in 0..8 {
        let tag = if round % 2 == 0 { "_b" } else { "_a" };
        write_repo(&repo, FILES, DEFS, tag);
        let mut child = run_index(&repo, &data);
        // One copy each: runs committed, a checkpoint under way, a checkpoint
        // recorded in the log.
        let mut took = [false; 3];
        while child.try_wait().expect("try_wait").is_none() {
            let in_checkpoint = shadow.exists();
            let log_len = std::fs::metadata(&wal).map_or(0, |m| m.len());
            let recorded = log_len > 0 && last_byte(&wal) == Some(0xFE);
            let moment = match (log_len > 0, in_checkpoint, recorded) {
                (_, _, true) => Some(2),
                (_, true, false) => Some(1),
                (true, false, false) => Some(0),
                _ => None,
            };
            if let Some(m) = moment.filter(|&m| !took[m]) {
                let dir = tmp.path().join(format!("sample{}", samples.len()));
                std::fs::create_dir_all(&dir).expect("mkdir");
                std::fs::copy(data.join("manifest.json"), dir.join("manifest.json"))
                    .expect("manifest");
                let copied = std::fs::copy(&graph, dir.join(&name)).is_ok()
                    && std::fs::copy(&wal, dir.join(format!("{name}.wal"))).is_ok();
                let _ = std::fs::copy(&shadow, dir.join(format!("{name}.shadow")));
                if copied {
                    let log = std::fs::read(dir.join(format!("{name}.wal"))).expect("log");
                    samples.push((dir, log.last() == Some(&0xFE)));
                    took[m] = true;
                }
            }
        }
        assert!(child.wait().expect("wait").success());
        if round == 0 {
            b = Some(state(&data));
        }
    }
    let b = b.expect("state B");
    assert_ne!(a, b);
    assert!(
        samples.len() >= 3,
        "too few stopped writes were caught ({}): the test did not test",
        samples.len()
    );
    let mut dropped = 0;
    for (dir, recorded) in &samples {
        // A writer opens it too (a server's start), and so does a reader.
        let dd = DataDir::new(dir);
        let settled = {
            let _lock = dd.lock_writer().expect("lock");
            dd.settle_log().expect("settle")
        };
        let now = state(dir);
        assert!(
            now == a || now == b,
            "{}: {now:?} is neither state (log had a checkpoint record: {recorded}; settled: {settled:?})",
            dir.display()
        );
        if !recorded {
            dropped += 1;
        }
        let writer = dd.open_graph(&small_graph()).expect("opens for writing");
        drop(writer);
        assert!(state(dir) == now, "reopening changed nothing");
    }
    assert!(
        dropped > 0,
        "no sample had uncheckpointed runs: the test did not test"
    );
    eprintln!(
        "{} stopped writes caught ({} with a checkpoint record)",
        samples.len(),
        samples.len() - dropped
    );
}

fn last_byte(path: &Path) -> Option<u8> {
    use std::io::{Read, Seek};
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(std::io::SeekFrom::End(-1)).ok()?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b).ok()?;
    Some(b[0])
}
