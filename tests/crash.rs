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
/// checkpoint, taken from real runs: while `cruxe index` writes, it is stopped
/// (SIGSTOP) the moment its log has grown (a run committed), a checkpoint is
/// under way, or the checkpoint is recorded in the log, and the data dir's
/// files are copied while it stands still: what a kill at that instant leaves
/// (the kernel keeps what it wrote). Each copy must open, for readers and
/// writers, with exactly the old or the new state, never by replaying the
/// log's transactions, and a run must then write to it: a checkpoint stopped
/// before its record may have written the primary-key index in place (see
/// `graph::checkpoint_marker`).
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
    let beside = |ext: &str| graph.with_file_name(format!("{name}.{ext}"));
    let (wal, shadow, marker) = (beside("wal"), beside("shadow"), beside("checkpointing"));
    // (sample dir, the moment it was taken)
    let mut samples: Vec<(std::path::PathBuf, Moment)> = Vec::new();
    let mut b = None;
    // Three of each moment at most, over at most six runs.
    let taken = |m: Moment, samples: &[(std::path::PathBuf, Moment)]| {
        samples.iter().filter(|(_, s)| *s == m).count() >= 3
    };
    for round in 0..6 {
        if [Moment::Committed, Moment::InCheckpoint, Moment::Recorded]
            .iter()
            .all(|m| taken(*m, &samples))
        {
            break;
        }
        let tag = if round % 2 == 0 { "_b" } else { "_a" };
        write_repo(&repo, FILES, DEFS, tag);
        let mut child = run_index(&repo, &data);
        let pid = child.id() as i32;
        let moment = || {
            let log_len = std::fs::metadata(&wal).map_or(0, |m| m.len());
            match (log_len > 0, marker.exists() || shadow.exists()) {
                (true, _) if last_byte(&wal) == Some(0xFE) => Some(Moment::Recorded),
                (true, true) => Some(Moment::InCheckpoint),
                (true, false) => Some(Moment::Committed),
                _ => None,
            }
        };
        let mut took = Vec::new();
        while child.try_wait().expect("try_wait").is_none() {
            let Some(now) = moment().filter(|m| !took.contains(m) && !taken(*m, &samples)) else {
                continue;
            };
            if now == Moment::InCheckpoint {
                // Later into the checkpoint each time: its writes into the
                // file come after it starts (a stop there, with only the old
                // log settle, made the next run crash in 2 of 21 tries).
                let into = samples.iter().filter(|(_, m)| *m == now).count() as u64;
                std::thread::sleep(std::time::Duration::from_millis(into * 25));
            }
            // SAFETY: a signal to our own child, which has not been waited for.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            // Stopped now (SIGSTOP is delivered before kill returns for a
            // running process; one in a syscall stops when it returns).
            std::thread::sleep(std::time::Duration::from_millis(5));
            if let Some(m) = moment().filter(|m| !took.contains(m)) {
                let dir = tmp.path().join(format!("sample{}", samples.len()));
                std::fs::create_dir_all(&dir).expect("mkdir");
                for entry in std::fs::read_dir(&data).expect("data dir").flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_file()) {
                        std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
                    }
                }
                samples.push((dir, m));
                took.push(m);
            }
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
        assert!(child.wait().expect("wait").success());
        if round == 0 {
            b = Some(state(&data));
        }
    }
    let b = b.expect("state B");
    assert_ne!(a, b);
    let count = |m: Moment| samples.iter().filter(|(_, s)| *s == m).count();
    for m in [Moment::Committed, Moment::InCheckpoint, Moment::Recorded] {
        assert!(
            count(m) > 0,
            "no writer was caught at {m:?}: the test did not test"
        );
    }
    let mut written = 0;
    for (dir, moment) in &samples {
        // A writer opens it too (a server's start), and so does a reader.
        let dd = DataDir::new(dir);
        let settled = {
            let _lock = dd.lock_writer().expect("lock");
            dd.settle_log(&small_graph()).expect("settle")
        };
        let now = state(dir);
        assert!(
            now == a || now == b,
            "{}: {now:?} is neither state (taken {moment:?}; settled: {settled:?})",
            dir.display()
        );
        let writer = dd.open_graph(&small_graph()).expect("opens for writing");
        drop(writer);
        assert!(state(dir) == now, "reopening changed nothing");
        // A run writes every file again (the tree holds the last round's
        // tag, `_a`, or a state A copy gets `_b`). Inserts are what a
        // primary-key index written over would refuse.
        if *moment == Moment::InCheckpoint && written < 2 {
            let other = if now == a { "_b" } else { "_a" };
            write_repo(&repo, FILES, DEFS, other);
            let out = Command::new(cruxe_bin())
                .args(["index", repo.to_str().expect("utf8"), "--data"])
                .arg(dir)
                .args(["--repo", "crash", "--ref", "main"])
                .output()
                .expect("run cruxe index");
            assert!(
                out.status.success(),
                "{}: a run after a stop {moment:?} (settled: {settled:?}) failed: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                state(dir).2,
                vec![other.to_string()],
                "the run after the stop wrote its state"
            );
            written += 1;
        }
    }
    eprintln!(
        "stopped writes caught: {} committed, {} in a checkpoint, {} recorded; {written} written to after",
        count(Moment::Committed),
        count(Moment::InCheckpoint),
        count(Moment::Recorded)
    );
}

/// Where a writer was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    /// Its log holds committed runs; no checkpoint yet.
    Committed,
    /// A checkpoint is under way, not yet recorded in the log.
    InCheckpoint,
    /// The checkpoint's record is in the log.
    Recorded,
}

fn last_byte(path: &Path) -> Option<u8> {
    use std::io::{Read, Seek};
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(std::io::SeekFrom::End(-1)).ok()?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b).ok()?;
    Some(b[0])
}
