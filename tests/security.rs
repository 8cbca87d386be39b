//! What a hostile user of a team server must never achieve: reading or writing
//! files or settings through Cypher, exhausting memory or the async threads,
//! corrupting a data dir by writing it from two processes, reaching files
//! outside the repository through a symlink, or slipping past Host, Origin and
//! token checks. Everything runs against a real `cruxe serve` and the real CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};
use serde_json::{Value, json};

use crate::common::{copy_tree, cruxe, cruxe_bin, fixture, stderr, stdout};
use crate::mcp::{
    Server, call, call_all, client, http, results, serve, serve_paths, serve_paths_with_data,
    session_id, wait_ready,
};

/// A directory of files a query must never open, watched with inotify for the
/// whole test: any open, read or write of anything in it is recorded.
struct Canary {
    dir: tempfile::TempDir,
    seen: Arc<Mutex<Vec<String>>>,
    _watcher: notify::RecommendedWatcher,
}

const SECRET: &str = "CANARY-SECRET-7f3a";

impl Canary {
    fn new() -> Canary {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("secret.csv"),
            format!("{SECRET}:x:0:0\nroot:{SECRET}:1:1\n"),
        )
        .expect("write");
        std::fs::write(dir.path().join("secret.kuzu"), SECRET).expect("write");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let root = dir.path().to_path_buf();
        let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            // Anyone on the machine may list /tmp's directories (a cleaner, a
            // scan, another test); inotify cannot say who. Listing the
            // directory reads no secret: only what touches its files, or
            // creates or changes anything, counts.
            let listing = |e: &notify::Event| {
                matches!(e.kind, EventKind::Access(_)) && e.paths.iter().all(|p| *p == root)
            };
            if let Ok(e) = e
                && !matches!(e.kind, EventKind::Other)
                && !listing(&e)
                && let Ok(mut l) = log.lock()
            {
                l.push(format!("{:?} {:?}", e.kind, e.paths));
            }
        })
        .expect("watcher");
        watcher
            .watch(dir.path(), RecursiveMode::Recursive)
            .expect("watch");
        Canary {
            dir,
            seen,
            _watcher: watcher,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// Everything that touched the directory so far (waits for late events).
    fn touched(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(200));
        self.seen.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// The graph's shape, the worker's settings and the file tables, to compare
/// before and after hostile queries.
const INVARIANTS: &[&str] = &[
    "MATCH (n) RETURN count(*) AS nodes",
    "MATCH ()-[r]->() RETURN count(*) AS edges",
    "CALL show_tables() RETURN name ORDER BY name",
    "CALL current_setting('threads') RETURN *",
    "CALL current_setting('timeout') RETURN *",
    "CALL current_setting('file_search_path') RETURN *",
    "CALL current_setting('auto_checkpoint') RETURN *",
    "CALL current_setting('var_length_extend_max_depth') RETURN *",
];

fn invariants(server: &Server) -> Vec<Value> {
    let calls: Vec<(&str, Value)> = INVARIANTS
        .iter()
        .map(|q| ("run_cypher", json!({"query": q})))
        .collect();
    call_all(server, &calls)
        .into_iter()
        .map(|(v, err)| {
            assert!(!err, "an invariant query failed: {v}");
            v["rows"].clone()
        })
        .collect()
}

/// The statements that must be refused, with `{file}` a canary file, `{dir}` the
/// canary directory and `{out}` a path that must never be created.
const FORMS: &[&str] = &[
    "CREATE (:Repo {name: 'x', root: 'y'})",
    "MERGE (r:Repo {name: 'y'}) RETURN r",
    "MATCH (s:Symbol) SET s.name = 'x'",
    "MATCH (s:Symbol) REMOVE s.doc",
    "MATCH (s:Symbol) DELETE s",
    "MATCH (s:Symbol) DETACH DELETE s",
    "CREATE NODE TABLE Evil(id INT64, PRIMARY KEY (id))",
    "DROP TABLE Symbol",
    "ALTER TABLE Symbol ADD evil INT64",
    "COPY Symbol FROM '{file}'",
    "COPY (MATCH (s:Symbol) RETURN s.name) TO '{out}.csv'",
    "LOAD FROM '{file}' (file_format='csv', header=false, delim=':') RETURN *",
    "LOAD WITH HEADERS (a STRING, b STRING) FROM '{file}' (file_format='csv', delim=':') RETURN *",
    "LOAD FROM '{file}' RETURN *",
    "EXPORT DATABASE '{out}'",
    "IMPORT DATABASE '{dir}'",
    "ATTACH '{dir}/secret.kuzu' AS evil (dbtype kuzu)",
    "ATTACH '{dir}/secret.kuzu' AS evil (dbtype duckdb)",
    "ATTACH '{dir}/secret.kuzu' AS evil (dbtype sqlite)",
    "ATTACH 'dbname=x host=127.0.0.1' AS evil (dbtype postgres)",
    "USE evil",
    "DETACH evil",
    "INSTALL json",
    "LOAD EXTENSION json",
    "LOAD json",
    "UNINSTALL json",
    "CALL threads = 1",
    "CALL auto_checkpoint = true",
    "CALL file_search_path = '{dir}'",
    "CALL timeout = 1",
    "CALL var_length_extend_max_depth = 1",
    "CALL checkpoint_threshold = 1",
    "CHECKPOINT",
    "BEGIN TRANSACTION",
    "BEGIN TRANSACTION READ ONLY",
    "COMMIT",
    "ROLLBACK",
    "CREATE MACRO evil(x) AS x",
    "CREATE SEQUENCE evil",
    "MATCH (s:Symbol) RETURN s.name LIMIT 1; CALL threads = 1",
    "RETURN 1; LOAD FROM '{file}' (file_format='csv', header=false, delim=':') RETURN *",
];

/// Ways of writing a statement that a lexical scan gets wrong. Each yields a
/// query that Kuzu either refuses to parse or parses as the same statement.
fn variants(form: &str) -> Vec<String> {
    let first = form.split_whitespace().next().unwrap_or("");
    let rest = form[first.len()..].to_string();
    let mut out = vec![
        form.to_string(),
        form.to_lowercase(),
        // The backslash-in-backticks trick of the original bypass.
        format!("UNWIND [1] AS `\\` {form}"),
        format!("UNWIND [1] AS `\\`\n{form}"),
        // Keywords split and hidden by comments.
        format!("/* */{first}/* hidden */{rest}"),
        format!("// a comment\n{form}"),
        format!("{first} // LOAD\n{rest}"),
        // Strings and identifiers that contain the keyword elsewhere.
        format!("WITH 'LOAD' AS `COPY` {form}"),
        // Unicode: a non-breaking space, and look-alike letters.
        form.replacen(' ', "\u{a0}", 1),
        form.replacen('O', "\u{41e}", 1),
        form.replacen('A', "\u{ff21}", 1),
    ];
    out.dedup();
    out
}

fn fill(q: &str, canary: &Canary, out: &Path) -> String {
    q.replace("{file}", &canary.path("secret.csv"))
        .replace("{dir}", &canary.dir.path().to_string_lossy())
        .replace("{out}", &out.to_string_lossy())
}

fn err_code(v: &Value) -> String {
    v["error"]["code"].as_str().unwrap_or("").to_string()
}

/// A server under attack through run_cypher: a canary to read, a directory to
/// write into, and the graph's shape and settings before the attack.
struct Attack {
    canary: Canary,
    outdir: tempfile::TempDir,
    out: PathBuf,
    server: Server,
    before: Vec<Value>,
}

impl Attack {
    fn new() -> Attack {
        let canary = Canary::new();
        let outdir = tempfile::tempdir().expect("tmp");
        let out = outdir.path().join("leak");
        // One worker: a setting a query managed to change would show in the
        // next query.
        let server = serve(&["python"], &["--cypher-workers", "1"], &[]);
        wait_ready(&server);
        let before = invariants(&server);
        Attack {
            canary,
            outdir,
            out,
            server,
            before,
        }
    }

    /// Sends every query; each answer must be a refusal or, with `reads_ok`, a
    /// harmless read. Returns the answers; nothing may leak.
    fn send(&self, queries: &[String], reads_ok: bool) -> Vec<(Value, bool)> {
        let calls: Vec<(&str, Value)> = queries
            .iter()
            .map(|q| ("run_cypher", json!({"query": q})))
            .collect();
        let answers = call_all(&self.server, &calls);
        for (q, (v, err)) in queries.iter().zip(&answers) {
            assert!(!v.to_string().contains(SECRET), "{q} leaked: {v}");
            assert!(*err || reads_ok, "not refused: {q}\n{v}");
            let code = err_code(v);
            assert!(
                !*err || code == "query_not_read_only" || code == "query_invalid",
                "{q}: {v}"
            );
        }
        answers
    }

    /// Nothing changed: the graph, the worker's settings, the canary, the
    /// output directory.
    fn check_untouched(&self, context: &str) {
        assert_eq!(invariants(&self.server), self.before, "{context}");
        assert_eq!(self.canary.touched(), Vec::<String>::new(), "{context}");
        let written: Vec<_> = std::fs::read_dir(self.outdir.path()).expect("ls").collect();
        assert!(written.is_empty(), "{context}: files written");
    }
}

#[test]
fn run_cypher_and_the_cli_refuse_every_form_that_reaches_past_the_graph() {
    let attack = Attack::new();
    let (canary, out) = (&attack.canary, &attack.out);
    let queries: Vec<String> = FORMS
        .iter()
        .flat_map(|form| variants(form))
        .map(|v| fill(&v, canary, out))
        .collect();
    let answers = attack.send(&queries, false);
    // The plain forms are named for what they are (Kuzu cannot parse REMOVE at
    // all, and takes one statement at a time).
    for form in FORMS
        .iter()
        .filter(|f| !f.contains(';') && !f.contains("REMOVE"))
    {
        let q = fill(form, canary, out);
        let i = queries.iter().position(|x| *x == q).expect("plain form");
        assert_eq!(err_code(&answers[i].0), "query_not_read_only", "{q}");
    }
    // The CLI runs the same worker: every plain form.
    let data = server_data_copy(&attack.server);
    for form in FORMS {
        let q = fill(form, canary, out);
        let o = cruxe(&["cypher", "--data", &data, &q]);
        assert!(!o.status.success(), "the CLI ran {q}");
        assert!(
            stderr(&o).contains("refused") || stderr(&o).contains("invalid query"),
            "{q}: {}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains(SECRET) && !stderr(&o).contains(SECRET));
    }
    attack.check_untouched("after the forms");
    eprintln!(
        "refused {}/{} run_cypher queries and {} CLI queries",
        answers.iter().filter(|(_, err)| *err).count(),
        queries.len(),
        FORMS.len()
    );
}

/// A copy of the served fixture indexed by the CLI into its own data dir (the
/// server holds its own).
fn server_data_copy(_server: &Server) -> String {
    let tmp = tempfile::tempdir().expect("tmp").keep();
    let repo = tmp.join("python");
    copy_tree(&fixture("python"), &repo);
    let data = tmp.join("data");
    let o = cruxe(&[
        "index",
        repo.to_str().expect("utf8"),
        "--data",
        data.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    data.to_string_lossy().into_owned()
}

/// A small deterministic generator (xorshift): the same queries on every run,
/// another seed with `CRUXE_PROPERTY_SEED`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A query hiding a forbidden statement: keywords in random case, split by
/// comments and unusual whitespace, behind prefixes and inside strings and
/// identifiers that confuse a scanner.
fn hostile_query(rng: &mut Rng, canary: &Canary, out: &Path) -> String {
    const PREFIXES: &[&str] = &[
        "",
        "UNWIND [1] AS `\\` ",
        "UNWIND [1] AS `\\`` ",
        "WITH '\\' AS x ",
        "WITH \"\\\"\" AS x ",
        "MATCH (s:Symbol) WHERE s.name = 'LOAD' WITH s ",
        "MATCH (`LOAD FROM`:Symbol) WITH `LOAD FROM` ",
        "/* LOAD FROM */ ",
        "// COPY\n",
        "RETURN 1 AS `;`; ",
        "WITH 1 AS `CALL` ",
    ];
    const BODIES: &[&str] = &[
        "LOAD FROM '{file}' (file_format='csv', header=false, delim=':') RETURN *",
        "LOAD FROM '{file}' RETURN *",
        "COPY (RETURN 1) TO '{out}.csv'",
        "CALL threads = 1",
        "CALL auto_checkpoint = true",
        "CALL file_search_path = '{dir}'",
        "CREATE (:Repo {name: 'x', root: 'y'})",
        "MATCH (s:Symbol) DETACH DELETE s",
        "MATCH (s:Symbol) SET s.doc = 'x'",
        "ATTACH '{dir}/secret.kuzu' AS evil (dbtype kuzu)",
        "EXPORT DATABASE '{out}'",
        "INSTALL httpfs",
        "CHECKPOINT",
        "BEGIN TRANSACTION",
    ];
    const SPACES: &[&str] = &[
        " ",
        "  ",
        "\n",
        "\t",
        "/**/",
        " /* x */ ",
        "\u{a0}",
        "\u{2028}",
    ];
    let body = fill(rng.pick(BODIES), canary, out);
    let mut q = String::from(rng.pick(PREFIXES));
    for (i, word) in body.split(' ').enumerate() {
        if i > 0 {
            q.push_str(rng.pick(SPACES));
        }
        let quoted = word.starts_with('\'');
        for c in word.chars() {
            if !quoted && rng.chance(30) {
                q.extend(c.to_lowercase());
            } else {
                q.push(c);
            }
        }
    }
    if rng.chance(20) {
        q.push_str(" // trailing");
    }
    q
}

#[test]
fn hidden_keywords_never_read_a_file_or_change_a_setting() {
    let attack = Attack::new();
    let seed = std::env::var("CRUXE_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de_u64);
    let mut rng = Rng(seed);
    let queries: Vec<String> = (0..400)
        .map(|_| hostile_query(&mut rng, &attack.canary, &attack.out))
        .collect();
    // Only reads may run (a prefix that made the rest a comment, say).
    let answers = attack.send(&queries, true);
    attack.check_untouched(&format!("seed {seed}"));
    eprintln!(
        "{} hostile queries, {} ran as harmless reads",
        queries.len(),
        answers.iter().filter(|(_, err)| !*err).count()
    );
}

/// Resident memory of a process in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn a_runaway_query_is_stopped_at_its_memory_bound_and_the_server_stays_small() {
    let server = serve(
        &["python"],
        &["--cypher-memory-mb", "300", "--query-timeout-ms", "20000"],
        &[],
    );
    wait_ready(&server);
    let pid = server.pid();
    let before = rss(pid);
    let started = Instant::now();
    let r = call_all(
        &server,
        &[
            (
                "run_cypher",
                json!({"query": "UNWIND range(1, 100000000) AS x RETURN sum(x)"}),
            ),
            (
                "run_cypher",
                json!({"query": "MATCH (s:Symbol) RETURN count(*) AS n"}),
            ),
        ],
    );
    let took = started.elapsed();
    assert!(r[0].1, "{}", r[0].0);
    assert_eq!(err_code(&r[0].0), "query_too_large", "{}", r[0].0);
    assert_eq!(r[0].0["error"]["data"]["memory_limit_mb"], 300);
    assert!(!r[1].1, "the next query runs on a new worker: {}", r[1].0);
    assert!(r[1].0["rows"][0][0].as_i64().expect("n") > 0);
    let after = rss(pid);
    assert!(
        after < before + (64 << 20),
        "the server grew from {before} to {after} bytes"
    );
    eprintln!(
        "memory bound hit after {took:?}; server RSS {} -> {} MiB",
        before >> 20,
        after >> 20
    );
    // The CLI has the same bound.
    let data = server_data_copy(&server);
    let o = cruxe(&[
        "cypher",
        "--data",
        &data,
        "--memory-mb",
        "300",
        "UNWIND range(1, 100000000) AS x RETURN sum(x)",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("more than 300 MiB"), "{}", stderr(&o));
}

/// `/health` polled while `load` runs: how many answers came back while the
/// load was still running, and p50/p95/max in ms (figures, not bounds).
fn health_while(server: &Server, load: impl FnOnce() + Send) -> (usize, f64, f64, f64) {
    let addr = server.addr.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (during, times) = std::thread::scope(|s| {
        let stop2 = stop.clone();
        let poller = s.spawn(move || {
            let (mut during, mut times) = (0, Vec::new());
            loop {
                let t = Instant::now();
                let (status, _, _) = http(&addr, "GET", "/health", &[], b"");
                assert_eq!(status, 200);
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                // Answered before the load was over.
                if stop2.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                during += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            (during, times)
        });
        load();
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        poller.join().expect("poller")
    });
    let mut t = times;
    t.sort_by(f64::total_cmp);
    let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    (during, at(0.5), at(0.95), t[t.len() - 1])
}

#[test]
fn hostile_arguments_to_any_tool_cannot_stall_health() {
    let server = serve(&["python"], &["--query-timeout-ms", "3000"], &[]);
    wait_ready(&server);
    let words: String = (0..20_000)
        .map(|i| if i % 2 == 0 { "a " } else { "b " })
        .collect();
    let many_terms: String = (0..200).map(|i| format!("w{i} ")).collect();
    let repeated: String = "a ".repeat(990);
    let long = "x".repeat(8 * 1024 + 1);
    let deep = "a/".repeat(4000);
    let hostile: Vec<(&str, Value)> = vec![
        ("search_code", json!({"query": words})),
        ("search_code", json!({"query": many_terms})),
        ("search_code", json!({"query": repeated, "limit": 200})),
        (
            "get_code_context",
            json!({"query": words, "max_tokens": 1_000_000}),
        ),
        (
            "get_code_context",
            json!({"query": repeated, "max_tokens": 100_000}),
        ),
        ("locate_symbol", json!({"name": long, "limit": 1_000_000})),
        ("get_symbol_hierarchy", json!({"symbol_name": long})),
        (
            "find_related_symbols",
            json!({"symbol_name": "UserService", "limit": 1_000_000_000}),
        ),
        ("get_file_outline", json!({"path": deep})),
        (
            "explore_tree",
            json!({"pattern": ".", "max_depth": 1_000_000, "detail": "max", "limit": 1_000_000_000}),
        ),
        ("explore_tree", json!({"pattern": long})),
        ("get_node", json!({"node_id": format!("file:{deep}")})),
        (
            "run_cypher",
            json!({"query": "UNWIND range(1, 100000000) AS x RETURN sum(x)"}),
        ),
        (
            "run_cypher",
            json!({"query": "MATCH (a), (b), (c), (d), (e), (f) RETURN count(*)"}),
        ),
        (
            "run_cypher",
            json!({"query": format!("RETURN '{}'", "y".repeat(70_000))}),
        ),
        ("index_status", json!({})),
    ];
    for (tool, args) in &hostile {
        let url = server.url();
        let script = json!({"transport": "http", "url": url, "clients": 2, "rounds": 2,
                            "calls": [[tool, args]]});
        let started = Instant::now();
        let mut report = Value::Null;
        let (during, p50, p95, max) = health_while(&server, || report = client(script));
        let took = started.elapsed();
        for (v, _) in results(&report) {
            // Answered (an error or a bounded result), never hung.
            assert!(v.is_object(), "{tool}: {v}");
        }
        eprintln!(
            "{tool}: 4 hostile calls in {took:?}; /health answered {during} times meanwhile, p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms"
        );
        // Not stalled: while calls that run for seconds (a slow machine
        // only makes them longer) were in flight, /health kept answering.
        // How fast is a benchmark's question (`make bench-hostile`).
        if took > Duration::from_secs(2) {
            assert!(
                during >= 2,
                "{tool} stalled /health: {during} answers in {took:?}"
            );
        }
    }
    // Oversized or repetitive queries are refused for what they are.
    let r = call_all(&server, &hostile[..3]);
    assert_eq!(err_code(&r[0].0), "invalid_input", "{}", r[0].0);
    assert_eq!(err_code(&r[1].0), "invalid_input", "{}", r[1].0);
    assert!(
        !r[2].1,
        "a long query of few distinct words runs: {}",
        r[2].0
    );
}

/// Runs `cruxe index` and returns its output.
fn index(repo: &Path, data: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "index",
        repo.to_str().expect("utf8"),
        "--data",
        data.to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    cruxe(&args)
}

/// `cruxe status --json` rows as (repo, ref, files, symbols).
fn status(data: &Path) -> Vec<(String, String, i64, i64)> {
    let o = cruxe(&["status", "--data", data.to_str().expect("utf8"), "--json"]);
    assert!(o.status.success(), "status failed: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("status json");
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().expect("repo").to_string(),
                r["ref"].as_str().expect("ref").to_string(),
                r["files"].as_i64().expect("files"),
                r["symbols"].as_i64().expect("symbols"),
            )
        })
        .collect()
}

/// A repo big enough that a kill can land mid-index.
fn sized_repo(root: &Path) {
    copy_tree(&fixture("python"), root);
    for i in 0..300 {
        let dir = root.join(format!("gen/pkg{}", i % 10));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut text = String::new();
        for d in 0..20 {
            text.push_str(&format!(
                "class C{i}_{d}:\n    def m(self):\n        return {d}\n\n"
            ));
        }
        std::fs::write(dir.join(format!("m{i}.py")), text).expect("write");
    }
}

#[test]
fn one_writer_per_data_dir_and_a_kill_at_any_step_leaves_it_usable() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("repo");
    sized_repo(&repo);
    let data = tmp.path().join("data");
    let files = 5 + 300;
    // Each round kills the server at a different step of the sequence.
    for (round, kill_at) in ["indexing", "idle", "refused", "reindexing"]
        .iter()
        .enumerate()
    {
        let mut server = serve_paths_with_data(
            tempfile::tempdir().expect("tmp"),
            std::slice::from_ref(&repo),
            &data,
        );
        if *kill_at == "indexing" && round == 0 {
            // The first index of an empty data dir is under way.
            std::thread::sleep(Duration::from_millis(300));
            server.kill9();
        } else {
            wait_ready(&server);
            if *kill_at == "idle" {
                server.kill9();
            } else {
                // A second writer is refused, and says who holds the data dir.
                for extra in [&[][..], &["--force"][..]] {
                    let o = index(&repo, &data, extra);
                    assert!(!o.status.success(), "a second writer was let in");
                    let e = stderr(&o);
                    assert!(
                        e.contains("in use") && e.contains(&format!("pid {}", server.pid())),
                        "{e}"
                    );
                }
                // A second server too.
                let o = Command::new(cruxe_bin())
                    .args([
                        "serve",
                        repo.to_str().expect("utf8"),
                        "--listen",
                        "127.0.0.1:0",
                        "--data",
                    ])
                    .arg(&data)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .output()
                    .expect("second server");
                assert!(!o.status.success());
                assert!(String::from_utf8_lossy(&o.stderr).contains("in use"));
                // The server still serves, fresh.
                let v = call(&server, "locate_symbol", json!({"name": "UserService"}));
                assert_eq!(v["results"][0]["path"], "services/user_service.py");
                assert_eq!(v["metadata"]["indexing_status"], "ready");
                if *kill_at == "reindexing" {
                    let f = repo.join(format!("gen/pkg{round}/m{round}.py"));
                    std::fs::write(&f, format!("class Edited{round}:\n    pass\n")).expect("write");
                    std::thread::sleep(Duration::from_millis(40));
                }
                server.kill9();
            }
        }
        // Whatever the step, the CLI can take over, and the data dir is sane.
        let o = index(&repo, &data, &[]);
        assert!(
            o.status.success(),
            "round {round} ({kill_at}): {}",
            stderr(&o)
        );
        let rows = status(&data);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].0, "repo");
        assert_eq!(rows[0].2, files as i64, "{rows:?}");
        assert!(rows[0].3 > 6000, "{rows:?}");
        // And --force always rebuilds.
        let o = index(&repo, &data, &["--force"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(status(&data), rows);
    }
    // A server on the same data dir afterwards finds everything.
    let server = serve_paths_with_data(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &data,
    );
    wait_ready(&server);
    let v = call(&server, "locate_symbol", json!({"name": "Edited3"}));
    assert_eq!(v["results"][0]["path"], "gen/pkg3/m3.py");
}

#[test]
fn force_rebuilds_a_data_dir_whose_graph_is_damaged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("repo");
    copy_tree(&fixture("python"), &repo);
    let data = tmp.path().join("data");
    assert!(index(&repo, &data, &[]).status.success());
    let graph: PathBuf = std::fs::read_dir(&data)
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "kuzu"))
        .expect("graph file");
    std::fs::write(&graph, b"this is not a database").expect("damage");
    let o = index(&repo, &data, &[]);
    assert!(!o.status.success(), "a damaged graph must not be updated");
    let o = index(&repo, &data, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(status(&data)[0].2, 5);
}

#[test]
fn a_symlinked_directory_out_of_the_repo_is_not_indexed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(
        outside.join("leak.py"),
        "def leaked_secret():\n    return 1\n",
    )
    .expect("write");
    let repo = tmp.path().join("repo");
    copy_tree(&fixture("python"), &repo);
    std::os::unix::fs::symlink(&outside, repo.join("auth/etcdir")).expect("symlink");
    // One that stays inside the repository is followed as before.
    std::os::unix::fs::symlink(repo.join("services"), repo.join("svc")).expect("symlink");
    let data = tmp.path().join("data");
    let o = index(&repo, &data, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("auth/etcdir: symlinked directory points outside the repository"),
        "{}",
        stdout(&o)
    );
    let o = cruxe(&[
        "cypher",
        "--data",
        data.to_str().expect("utf8"),
        "--json",
        "MATCH (f:File) RETURN f.path AS path ORDER BY path",
    ]);
    let paths: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("json");
    let paths: Vec<&str> = paths
        .iter()
        .map(|p| p["path"].as_str().expect("p"))
        .collect();
    assert!(!paths.iter().any(|p| p.contains("etcdir")), "{paths:?}");
    assert!(paths.contains(&"svc/user_service.py"), "{paths:?}");

    // Made while a server watches: still not indexed, and not served.
    std::fs::remove_file(repo.join("auth/etcdir")).expect("rm");
    let server = serve_paths_with_data(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &data,
    );
    wait_ready(&server);
    std::os::unix::fs::symlink(&outside, repo.join("auth/etcdir")).expect("symlink");
    std::fs::write(
        repo.join("auth/marker.py"),
        "def marker_after_link():\n    pass\n",
    )
    .expect("write");
    let wait = client(json!({"transport": "http", "url": server.url(),
        "calls": [["locate_symbol", {"name": "marker_after_link"}, {"until": "ok", "timeout_s": 30}]]}));
    assert!(!results(&wait)[0].1);
    let r = call_all(
        &server,
        &[
            ("locate_symbol", json!({"name": "leaked_secret"})),
            ("get_file_outline", json!({"path": "auth/etcdir/leak.py"})),
            ("explore_tree", json!({"pattern": "auth", "max_depth": 3})),
        ],
    );
    assert!(
        r[0].1 || r[0].0["results"].as_array().is_some_and(|a| a.is_empty()),
        "{}",
        r[0].0
    );
    assert!(r[1].1, "{}", r[1].0);
    assert!(!r[2].0.to_string().contains("etcdir"), "{}", r[2].0);
}

#[test]
fn http_edges_delete_health_bearer_bound_address_arguments_and_paths() {
    let server = serve(&["python"], &[], &[("CRUXE_TOKEN", "t0k3n")]);
    let a = server.addr.clone();
    let auth = ("Authorization", "Bearer t0k3n");
    // The scheme is case-insensitive.
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let h = format!("{scheme} t0k3n");
        let (status, _, body) = http(&a, "GET", "/health", &[("Authorization", &h)], b"");
        assert_eq!(status, 200, "{scheme}");
        // The whole answer: the token was taken (without it, only the status).
        assert!(body.contains("\"repos\""), "{scheme}: {body}");
    }
    // /health checks Host and Origin like /mcp.
    let (status, raw, _) = http_to(&a, "evil.example.com", &[auth]);
    assert_eq!(status, 403, "{raw}");
    assert!(!raw.contains("python"), "{raw}");
    let (status, _, _) = http_to(&a, &a, &[auth]);
    assert_eq!(status, 200);
    for (origin, expected) in [
        ("https://evil.example.com", 403),
        ("http://localhost:5173", 200),
        (&format!("http://{a}"), 200),
    ] {
        let (status, _, _) = http(&a, "GET", "/health", &[auth, ("Origin", origin)], b"");
        assert_eq!(status, expected, "{origin}");
    }
    // DELETE of a session nobody has: 404.
    let (status, _, _) = http(
        &a,
        "DELETE",
        "/mcp",
        &[
            auth,
            ("Mcp-Session-Id", "no-such-session"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        b"",
    );
    assert_eq!(status, 404);
    // tools/call whose arguments are not an object: invalid params.
    let headers = [
        auth,
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (_, head, _) = http(&a, "POST", "/mcp", &headers, init);
    let sid = session_id(&head);
    let mut with = headers.to_vec();
    with.push(("Mcp-Session-Id", &sid));
    with.push(("MCP-Protocol-Version", "2025-06-18"));
    for args in ["[1, 2]", "\"text\"", "42"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"locate_symbol","arguments":{args}}}}}"#
        );
        let (_, _, resp) = http(&a, "POST", "/mcp", &with, body.as_bytes());
        assert!(
            resp.contains("-32602") && resp.contains("\"id\":7"),
            "{args}: {resp}"
        );
    }
    // The real session still exists and can be ended (204, which clients
    // expect; then it is gone).
    let (status, _, _) = http(&a, "DELETE", "/mcp", &with, b"");
    assert_eq!(status, 204);
    let (status, _, _) = http(&a, "DELETE", "/mcp", &with, b"");
    assert_eq!(status, 404);
    drop(server);

    // A path that stays inside the repository, whatever its dots.
    let server = serve(&["python"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            ("get_file_outline", json!({"path": "auth/./jwt.py"})),
            (
                "get_file_outline",
                json!({"path": "services/../auth/./../auth/jwt.py"}),
            ),
            (
                "get_file_outline",
                json!({"path": "auth/../../python/auth/jwt.py"}),
            ),
        ],
    );
    assert!(!r[0].1 && !r[1].1, "{} {}", r[0].0, r[1].0);
    assert_eq!(r[1].0["path"], "auth/jwt.py");
    assert_eq!(err_code(&r[2].0), "invalid_input");
}

#[test]
fn bound_to_every_address_it_answers_on_its_own_addresses() {
    // IPv4 clients of `[::]` arrive as IPv4-mapped IPv6 addresses.
    for any in ["0.0.0.0", "[::]"] {
        answers_on_own_address(any);
    }
}

fn answers_on_own_address(any: &str) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let listen = format!("{any}:{port}");
    let child = Command::new(cruxe_bin())
        .args([
            "serve",
            repo.to_str().expect("utf8"),
            "--listen",
            &listen,
            "--data",
        ])
        .arg(tmp.path().join("data"))
        .env("CRUXE_TOKEN", "t0k3n-t0k3n-t0k3n")
        .env("CRUXE_BUFFER_POOL_MB", "128")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let _server = Reaped(child);
    let auth = ("Authorization", "Bearer t0k3n-t0k3n-t0k3n");
    // 127.0.0.2 is another address of this machine (all of 127/8 is loopback),
    // but not one the server was told about.
    let addr = format!("127.0.0.2:{port}");
    let started = Instant::now();
    let status = loop {
        let (status, _, _) = http_to(&addr, &addr, &[auth]);
        if status != 0 || started.elapsed() > Duration::from_secs(30) {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, 200, "{any}: the host's own address is refused");
    let (status, _, _) = http_to(&addr, &format!("evil.example.com:{port}"), &[auth]);
    assert_eq!(status, 403);
}

/// A child process killed when the test ends, pass or fail.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET /health at `addr` with the given Host header.
fn http_to(addr: &str, host: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return (0, String::new(), String::new());
    };
    let mut req = format!("GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let _ = s.write_all(req.as_bytes());
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, raw, String::new())
}

#[test]
fn run_cypher_reads_a_snapshot_that_catches_up_and_says_when_it_is_behind() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let server = serve_paths(tmp, std::slice::from_ref(&repo), &[], &[]);
    wait_ready(&server);
    for i in 0..3 {
        std::fs::write(
            repo.join(format!("fresh{i}.py")),
            format!("class Fresh{i}:\n    pass\n"),
        )
        .expect("write");
        // Visible to the other tools first.
        let wait = client(json!({"transport": "http", "url": server.url(),
            "calls": [["locate_symbol", {"name": format!("Fresh{i}")}, {"until": "ok", "timeout_s": 30}]]}));
        assert!(!results(&wait)[0].1);
        let started = Instant::now();
        loop {
            let v = call(
                &server,
                "run_cypher",
                json!({"query": "MATCH (s:Symbol {name: $n}) RETURN count(*) AS n", "params": {"n": format!("Fresh{i}")}}),
            );
            if v["rows"][0][0] == 1 {
                break;
            }
            // Not there yet: the answer must say it is behind.
            assert_eq!(v["snapshot_behind"], true, "{v}");
            assert_eq!(v["metadata"]["freshness_status"], "syncing", "{v}");
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "run_cypher never caught up: {v}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The pids of `server`'s query workers.
fn workers_of(server: &Server) -> Vec<u32> {
    crate::mcp::worker_pids(server.pid())
}

#[test]
fn a_worker_holds_nothing_but_its_snapshot_and_a_dead_one_is_replaced() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let data = tmp.path().join("data");
    let server = serve_paths_with_data(tempfile::tempdir().expect("tmp"), &[repo], &data);
    wait_ready(&server);
    let count = json!({"query": "MATCH (s:Symbol) RETURN count(*) AS n"});
    let v = call(&server, "run_cypher", count.clone());
    let n = v["rows"][0][0].as_i64().expect("n");
    let workers = workers_of(&server);
    assert_eq!(workers.len(), 1, "{workers:?}");
    // Kuzu opens files without close-on-exec: a worker must not inherit the
    // server's read-write handle on the live database, or anything else.
    let mut files = Vec::new();
    for fd in std::fs::read_dir(format!("/proc/{}/fd", workers[0]))
        .expect("fds")
        .flatten()
    {
        let target = std::fs::read_link(fd.path()).expect("link");
        files.push(target.to_string_lossy().into_owned());
    }
    files.sort();
    let (pipes, others): (Vec<&String>, Vec<&String>) =
        files.iter().partition(|f| f.starts_with("pipe:"));
    assert_eq!(pipes.len(), 3, "{files:?}");
    assert_eq!(others.len(), 1, "{files:?}");
    assert!(others[0].contains("/snapshots/graph-"), "{files:?}");
    let v = call(&server, "index_status", json!({}));
    assert!(
        v["repos"][0]["cypher_sandbox"]
            .as_str()
            .is_some_and(|s| s.starts_with("landlock")),
        "{v}"
    );
    // An idle worker that dies (here: killed) is replaced for the next query.
    Command::new("kill")
        .args(["-9", &workers[0].to_string()])
        .status()
        .expect("kill");
    std::thread::sleep(Duration::from_millis(100));
    let v = call(&server, "run_cypher", count);
    assert_eq!(v["rows"][0][0].as_i64(), Some(n));
    let again = workers_of(&server);
    assert!(again.len() == 1 && again[0] != workers[0], "{again:?}");
    // Idle for longer than a pooled thread lives: the worker is still there.
    std::thread::sleep(Duration::from_secs(12));
    assert_eq!(workers_of(&server), again);
}

#[test]
fn a_worker_logs_through_its_parent_when_stderr_is_a_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let data = tmp.path().join("data");
    assert!(index(&repo, &data, &[]).status.success());
    // A worker may write no file (RLIMIT_FSIZE 0): its log goes to a pipe.
    let log = tmp.path().join("err.log");
    let o = Command::new(cruxe_bin())
        .args([
            "cypher",
            "--data",
            data.to_str().expect("utf8"),
            "RETURN 1 AS one",
        ])
        .env("CRUXE_LOG", "cruxe=debug")
        .stderr(std::fs::File::create(&log).expect("log"))
        .output()
        .expect("cypher");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(o.status.success(), "{text}");
    // The worker's own line, forwarded by the parent, marked with its pid.
    assert!(
        text.lines()
            .any(|l| l.starts_with("cypher-worker ") && l.contains("cypher worker ready")),
        "{text}"
    );
}

#[test]
fn every_path_gets_the_same_answer_so_none_can_be_probed() {
    let canary = Canary::new();
    let server = serve(&["python"], &[], &[]);
    wait_ready(&server);
    let dir = canary.dir.path().to_string_lossy().into_owned();
    let paths = [
        canary.path("secret.csv"),
        dir.clone(),
        format!("{dir}/no-such-file"),
        "/etc/passwd".into(),
    ];
    let mut queries = Vec::new();
    for p in &paths {
        for format in ["npy", "parquet", "csv", "json"] {
            queries.push(format!("LOAD FROM '{p}' (file_format='{format}') RETURN *"));
        }
        queries.push(format!("CALL READ_NPY('{p}') RETURN *"));
        queries.push(format!("COPY Symbol FROM '{p}'"));
        queries.push(format!("IMPORT DATABASE '{p}'"));
    }
    let calls: Vec<(&str, Value)> = queries
        .iter()
        .map(|q| ("run_cypher", json!({"query": q})))
        .collect();
    let answers = call_all(&server, &calls);
    let per_path = queries.len() / paths.len();
    for (i, (v, err)) in answers.iter().enumerate() {
        assert!(*err, "{}: {v}", queries[i]);
        // The same statement on another path answers exactly the same.
        let same = &answers[i % per_path].0["error"];
        assert_eq!(
            &v["error"],
            same,
            "{} vs {}",
            queries[i],
            queries[i % per_path]
        );
    }
    assert_eq!(canary.touched(), Vec::<String>::new());
}

#[test]
fn queued_cypher_queries_do_not_hold_back_the_other_tools() {
    let server = serve(
        &["python"],
        // Long enough that the flood outlasts the other tools' calls on a
        // busy machine (their client's start-up included).
        &["--cypher-workers", "1", "--query-timeout-ms", "15000"],
        &[],
    );
    wait_ready(&server);
    // Far past any timeout: 10^12 rows.
    let slow = "UNWIND range(1, 10000) AS i UNWIND range(1, 10000) AS j UNWIND range(1, 10000) AS k RETURN sum(i * j * k)";
    let url = server.url();
    std::thread::scope(|s| {
        let flood = s.spawn(|| {
            client(
                json!({"transport": "http", "url": url, "clients": 10, "rounds": 1,
                          "calls": [["run_cypher", {"query": slow}]]}),
            )
        });
        std::thread::sleep(Duration::from_millis(1500));
        // Timed inside the client (`waited_ms`), so the client's own start-up
        // does not count.
        let timed = |tool: &str, args: Value| json!([tool, args, {"until": "ok", "timeout_s": 30}]);
        let report = client(json!({"transport": "http", "url": server.url(), "calls": [
            timed("index_status", json!({})),
            timed("search_code", json!({"query": "user service"})),
            timed("locate_symbol", json!({"name": "UserService"})),
        ]}));
        // The other tools did not queue behind the busy worker: they
        // answered while the flood (ten queries, one running until its 15 s
        // timeout, the others waiting as long) still ran. An order, not a
        // speed.
        assert!(
            !flood.is_finished(),
            "the tools answered only after the flood"
        );
        for r in report["results"].as_array().expect("results") {
            let waited = r["waited_ms"].as_f64().expect("waited_ms");
            assert_eq!(r["is_error"], false, "{r}");
            eprintln!("a tool answered in {waited} ms beside the flood");
        }
        let report = flood.join().expect("flood");
        let answers = results(&report);
        // One ran (and was stopped at its timeout); the rest waited for the
        // worker and say they never ran.
        assert!(
            answers
                .iter()
                .all(|(v, err)| *err && err_code(v) == "query_timeout")
        );
        assert!(
            answers
                .iter()
                .any(|(v, _)| v["error"]["data"]["ran"] == false),
            "{answers:?}"
        );
    });
}

#[test]
fn a_large_answer_is_cut_to_fit_the_clients() {
    let server = serve(&["python"], &[], &[]);
    wait_ready(&server);
    let v = call(
        &server,
        "run_cypher",
        // No token budget to speak of: the server's byte bound cuts it.
        json!({"query": "UNWIND range(1, 20000) AS i RETURN i, repeat('x', 200) AS pad", "limit": 10000, "max_tokens": 100_000_000}),
    );
    assert_eq!(v["truncated"], true, "{}", v["row_count"]);
    let rows = v["rows"].as_array().expect("rows").len();
    assert!(rows > 500 && rows < 10000, "{rows}");
    assert_eq!(v["metadata"]["result_completeness"], "truncated");
}
