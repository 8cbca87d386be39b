//! The real `cruxe` binary as an engineer uses it: index, status, cypher (table and
//! JSON, writes refused), hierarchy, help, and clear errors.

use crate::common::{cruxe, cruxe_bin, fixture, s, stderr, stdout};

fn indexed(lang: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data").to_string_lossy().into_owned();
    let fx = fixture(lang);
    let out = cruxe(&[
        "index",
        fx.to_str().expect("utf8"),
        "--data",
        &data,
        "--repo",
        lang,
        "--ref",
        "test",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    (tmp, data)
}

#[test]
fn index_prints_the_summary_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let fx = fixture("rust");
    let out = cruxe(&[
        "index",
        fx.to_str().expect("utf8"),
        "--data",
        data.to_str().expect("utf8"),
        "--ref",
        "test",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text.lines().next().unwrap_or("");
    // The repo name defaults to the folder name.
    assert!(
        line.starts_with("indexed rust@test: 6 files (6 parsed"),
        "{line}"
    );
    for part in ["symbols", "import edges", "unresolved imports", " s"] {
        assert!(line.contains(part), "{line}");
    }
    // Second run: nothing to parse.
    let again = cruxe(&[
        "index",
        fx.to_str().expect("utf8"),
        "--data",
        data.to_str().expect("utf8"),
        "--ref",
        "test",
    ]);
    assert!(
        stdout(&again).contains("(0 parsed, 6 unchanged, 0 removed)"),
        "{}",
        stdout(&again)
    );
}

/// `--memory-mb` sizes the run's pools: the least budget taken indexes a
/// repository, and a budget that is not a number is refused before anything.
#[test]
fn index_runs_within_the_least_memory_budget() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let fx = fixture("rust");
    let index = |budget: &str| {
        std::process::Command::new(cruxe_bin())
            .args(["index", fx.to_str().expect("utf8"), "--ref", "test"])
            .args([
                "--data",
                data.to_str().expect("utf8"),
                "--memory-mb",
                budget,
            ])
            .env_remove("CRUXE_BUFFER_POOL_MB")
            .env_remove("CRUXE_SEARCH_WRITER_MB")
            .output()
            .expect("run cruxe")
    };
    let out = index("lots");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--memory-mb"), "{}", stderr(&out));
    assert!(!data.exists(), "a refused run made a data dir");
    // 1 MiB is raised to the least budget (256 MiB), which holds the run.
    let out = index("1");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("indexed rust@test: 6 files (6 parsed"),
        "{}",
        stdout(&out)
    );
    let out = cruxe(&["status", "--data", data.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A closed standard error (`cruxe index … 2>&1 | head -1`, after its first
/// line) does not stop a run: the progress lines are dropped, the run saves
/// its state, and the next run re-parses nothing.
#[test]
fn index_finishes_when_stderr_is_closed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let fx = fixture("rust");
    let args = [
        "index",
        fx.to_str().expect("utf8"),
        "--data",
        data.to_str().expect("utf8"),
        "--repo",
        "rust",
        "--ref",
        "test",
    ];
    let mut child = std::process::Command::new(cruxe_bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stderr.take());
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "exit {:?}", out.status);
    let again = cruxe(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stdout(&again).contains("(0 parsed,"), "{}", stdout(&again));
}

#[test]
fn cypher_json_gives_the_true_chain() {
    let (_tmp, data) = indexed("rust");
    let out = cruxe(&[
        "cypher",
        "--data",
        &data,
        "--json",
        "MATCH (p)-[:CONTAINS*]->(s:Symbol {name:'validate', kind:'method'}) RETURN label(p) AS label, p.name AS name, p.path AS path ORDER BY label",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let rows = v.as_array().expect("array");
    assert_eq!(rows.len(), 2);
    assert_eq!(s(&rows[0]["label"]), "File");
    assert_eq!(s(&rows[0]["path"]), "src/auth/handler.rs");
    assert_eq!(s(&rows[1]["label"]), "Symbol");
    assert_eq!(s(&rows[1]["name"]), "AuthHandler");
}

#[test]
fn cypher_table_is_aligned() {
    let (_tmp, data) = indexed("go");
    let out = cruxe(&[
        "cypher",
        "--data",
        &data,
        "MATCH (s:Symbol {kind:'struct'}) RETURN s.name AS name, s.path AS path ORDER BY name",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "name        | path");
    assert_eq!(lines[2], "AuthHandler | auth/handler.go");
    assert_eq!(lines[3], "Claims      | auth/claims.go");
    assert_eq!(lines[4], "UserService | services/user.go");
    assert_eq!(lines[5], "(3 rows)");

    // An unaliased expression's column is named by its whole text: its header
    // is cut like a cell, and no line runs on.
    let long = format!("RETURN {} AS x, 1 + {}", "1", "1 + ".repeat(60) + "1");
    let out = cruxe(&["cypher", "--data", &data, &long]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.lines().all(|l| l.chars().count() <= 90), "{text}");
    assert!(
        text.lines().next().is_some_and(|h| h.ends_with('…')),
        "{text}"
    );
}

#[test]
fn cypher_refuses_writes_and_changes_nothing() {
    let (_tmp, data) = indexed("python");
    let count = || {
        let out = cruxe(&[
            "cypher",
            "--data",
            &data,
            "--json",
            "MATCH (s:Symbol) RETURN count(*) AS n",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        v[0]["n"].as_i64().expect("n")
    };
    let before = count();
    for q in [
        "CREATE (:Repo {name: 'evil', root: '/'})",
        "MATCH (s:Symbol) DETACH DELETE s",
        "MATCH (s:Symbol) SET s.name = 'x'",
        "MATCH (s:Symbol) WITH s LIMIT 1 MERGE (:External {id: 'x', repo: 'a', ref: 'b', name: 'c'})",
    ] {
        let out = cruxe(&["cypher", "--data", &data, q]);
        assert!(!out.status.success(), "write accepted: {q}");
        assert!(stderr(&out).contains("refused"), "{q}: {}", stderr(&out));
    }
    assert_eq!(count(), before);
    assert!(before > 10);
}

#[test]
fn cypher_reports_invalid_queries_clearly() {
    let (_tmp, data) = indexed("python");
    let out = cruxe(&["cypher", "--data", &data, "MATCH (s:Nope) RETURN s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid query"), "{}", stderr(&out));
}

#[test]
fn status_lists_counts() {
    let (_tmp, data) = indexed("typescript");
    let out = cruxe(&["status", "--data", &data, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v[0]["repo"], "typescript");
    assert_eq!(v[0]["ref"], "test");
    assert_eq!(v[0]["files"], 4);
    assert!(v[0]["symbols"].as_i64().unwrap_or(0) > 15);
}

#[test]
fn hierarchy_command_prints_the_chain() {
    let (_tmp, data) = indexed("rust");
    let out = cruxe(&[
        "hierarchy",
        "validate",
        "--path",
        "src/auth/handler.rs",
        "--data",
        &data,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "method auth::handler::AuthHandler::validate (src/auth/handler.rs:15-17)"
    );
    assert_eq!(
        lines[1],
        "  impl auth::handler::AuthHandler (src/auth/handler.rs:8-18)"
    );
    assert_eq!(lines[2], "    file src/auth/handler.rs");
}

/// Every read tool is a command: each prints the tool's answer for people and
/// the whole answer with `--json`; the flags mean the same everywhere, the
/// limits are the tools', and errors name flags and commands, not arguments
/// and tools.
#[test]
fn every_read_tool_is_a_command_with_the_same_flags() {
    let (_tmp, data) = indexed("rust");
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--data", &data]);
        cruxe(&all)
    };
    let tools = [
        (vec!["search", "validate"], "search_code"),
        (vec!["locate", "validate_token"], "locate_symbol"),
        (vec!["outline", "src/auth/handler.rs"], "get_file_outline"),
        (vec!["related", "validate_token"], "find_related_symbols"),
        (vec!["context", "validate a token"], "get_code_context"),
        (vec!["hierarchy", "validate_token"], "get_symbol_hierarchy"),
        (vec!["refs", "validate_token"], "find_references"),
        (vec!["calls", "validate_token"], "get_call_graph"),
        (vec!["impls", "Authenticator"], "find_implementations"),
    ];
    for (args, tool) in &tools {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(!stdout(&out).trim().is_empty(), "{args:?} printed nothing");
        let mut json = args.clone();
        json.extend(["--json", "--repo", "rust", "--ref", "test"]);
        let out = run(&json);
        assert!(out.status.success(), "{json:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{tool}: {e}: {}", stdout(&out)));
        assert_eq!(v["metadata"]["repo"], "rust", "{tool}: {v}");
        assert_eq!(v["metadata"]["ref"], "test", "{tool}: {v}");
    }
    // The answers are the tools': the outline lists the file's symbols.
    let text = stdout(&run(&["outline", "src/auth/handler.rs"]));
    assert!(
        text.starts_with("src/auth/handler.rs (rust, module auth::handler, "),
        "{text}"
    );
    assert!(text.contains("\n    method validate  "), "{text}");
    // --limit cuts a list and says so; past the tool's bound it is refused
    // with the flag's name.
    let text = stdout(&run(&["outline", "src/auth/handler.rs", "--limit", "2"]));
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.ends_with("(2 shown; --limit for more)\n"), "{text}");
    let out = run(&["refs", "validate_token", "--limit", "2000"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--limit must be between 1 and 1000, not 2000"),
        "{}",
        stderr(&out)
    );
    // An unknown name: the hint names commands.
    let out = run(&["calls", "no_such_symbol_anywhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("try `cruxe search NAME` or `cruxe locate NAME`"),
        "{}",
        stderr(&out)
    );
    // An ambiguous one: the candidates, and the flag to choose with.
    let out = run(&["related", "validate"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("pass --path"), "{err}");
    assert!(err.contains("src/auth/jwt.rs:25"), "{err}");
}

#[test]
fn errors_are_clear() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let out = cruxe(&["cypher", "--data", data.to_str().expect("utf8"), "RETURN 1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no index at"), "{}", stderr(&out));
    let out = cruxe(&["index", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/definitely/not/here does not exist"),
        "{}",
        stderr(&out)
    );
    let out = cruxe(&["serve", "/definitely/not/here", "--listen", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/definitely/not/here does not exist"),
        "{}",
        stderr(&out)
    );
    // A port in use: said once, not once per link of the error's chain.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::write(repo.join("main.rs"), "fn main() {}\n").expect("write");
    let out = cruxe(&[
        "serve",
        repo.to_str().expect("utf8"),
        "--listen",
        &addr,
        "--data",
        data.to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
    assert_eq!(err.matches("in use").count(), 1, "{err}");
    let out = cruxe(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_teaches() {
    let out = cruxe(&["--help"]);
    let text = stdout(&out);
    for word in ["index", "cypher", "status", "hierarchy", "Examples:"] {
        assert!(text.contains(word), "{text}");
    }
    let out = cruxe(&["index", "--help"]);
    assert!(stdout(&out).contains("--force"));
}

/// `cruxe serve` says when its first index is ready, with counts and seconds,
/// whatever the log level: the line a person waits for before asking.
#[test]
fn serve_says_when_the_first_index_is_ready() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("rust");
    crate::common::copy_tree(&fixture("rust"), &repo);
    let mut command = std::process::Command::new(cruxe_bin());
    command
        .args([
            "serve",
            repo.to_str().expect("utf8"),
            "--listen",
            "127.0.0.1:0",
            "--data",
        ])
        .arg(tmp.path().join("data"))
        .env_remove("CRUXE_LOG")
        .env_remove("RUST_LOG");
    let (mut child, ready) = serve_until_ready(&mut command);
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready.starts_with("cruxe: rust@"), "{ready}");
    let count = |what: &str| -> u64 {
        ready
            .split(", ")
            .flat_map(|p| p.split(": "))
            .find_map(|p| p.strip_suffix(what)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} in {ready}"))
    };
    assert!(count(" files") >= 5, "{ready}");
    assert!(count(" symbols") >= 20, "{ready}");
    assert!(
        ready.contains("indexed in ") && ready.ends_with(" s)"),
        "{ready}"
    );
}

/// Issue 19: while a server holds a data dir, `status`, `cypher` and every
/// read command go through it (its address is in the data dir) and print
/// what they print without it; each takes the repository's PATH like `index`; and
/// `serve --data DIR` with no PATH serves the repositories DIR holds.
#[test]
fn read_commands_go_through_a_running_server_and_print_the_same() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("app");
    crate::common::copy_tree(&fixture("rust"), &repo);
    let path = repo.to_str().expect("utf8");
    let out = cruxe(&["index", path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let query = "MATCH (f:File)-[:CONTAINS]->(s:Symbol) RETURN f.path AS path, s.name AS name ORDER BY path, name";
    let commands: Vec<Vec<&str>> = vec![
        vec!["status", path],
        vec!["status", path, "--json"],
        vec!["cypher", query, path],
        vec!["cypher", "--json", query, path],
        // The scope parameters stand for the same repository and ref both ways.
        vec!["cypher", "RETURN $repo AS repo, $ref AS ref", path],
        vec!["cypher", "--repo", "app", "RETURN $repo AS repo", path],
        vec![
            "hierarchy",
            "validate",
            "--path",
            "src/auth/handler.rs",
            "-C",
            path,
        ],
        vec![
            "hierarchy",
            "AuthHandler",
            "--path",
            "src/auth/handler.rs",
            "--direction",
            "descendants",
            "-C",
            path,
        ],
        // Every read tool is a command, with the same flags everywhere.
        vec!["search", "validate token", "--limit", "3", "-C", path],
        vec!["locate", "validate", "-C", path],
        vec!["outline", "src/auth/handler.rs", "-C", path],
        vec![
            "related",
            "validate",
            "--path",
            "src/auth/handler.rs",
            "-C",
            path,
        ],
        vec![
            "context",
            "validate a token",
            "--max-tokens",
            "400",
            "-C",
            path,
        ],
        vec![
            "refs",
            "validate_token",
            "--path",
            "src/auth/jwt.rs",
            "-C",
            path,
        ],
        vec!["calls", "validate_token", "--callers", "-C", path],
        vec!["impls", "Authenticator", "-C", path],
        vec!["impact", "--symbol", "validate_token", "-C", path],
    ];
    let run_all = || -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                let out = crate::common::cruxe_in(tmp.path(), c);
                assert!(out.status.success(), "{c:?}: {}", stderr(&out));
                stdout(&out)
            })
            .collect()
    };
    let alone = run_all();
    assert!(alone[2].lines().count() > 10, "{}", alone[2]);
    assert!(alone[4].contains("\napp  | live\n"), "{}", alone[4]);

    // Served from elsewhere, named by its data dir alone.
    let mut command = std::process::Command::new(cruxe_bin());
    command
        .current_dir(tmp.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(repo.join(".cruxe"));
    let (mut child, ready) = serve_until_ready(&mut command);
    assert!(
        ready.starts_with("cruxe: app@"),
        "the recorded repo is served: {ready}"
    );
    assert!(repo.join(".cruxe/server.json").is_file());
    let through = run_all();
    for (i, (a, b)) in alone.iter().zip(&through).enumerate() {
        assert_eq!(a, b, "{:?} differs through the server", commands[i]);
    }
    // A data dir holding the server's record and no graph answers the same:
    // the answer came from the server.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join(".cruxe")).expect("mkdir");
    std::fs::copy(
        repo.join(".cruxe/server.json"),
        elsewhere.join(".cruxe/server.json"),
    )
    .expect("copy");
    let out = crate::common::cruxe_in(
        tmp.path(),
        &["cypher", query, elsewhere.to_str().expect("utf8")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), alone[2]);
    let refused =
        crate::common::cruxe_in(tmp.path(), &["cypher", "MATCH (s:Symbol) DELETE s", path]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("refused"), "{}", stderr(&refused));
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
    assert!(
        !repo.join(".cruxe/server.json").exists(),
        "a stopped server takes its record away"
    );
    // And the graph was not touched by the detour.
    assert_eq!(run_all()[2], alone[2]);
}

/// Starts `command` (a `cruxe serve`) with stderr piped, and waits for the
/// line that says its first index is ready.
fn serve_until_ready(command: &mut std::process::Command) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(line) if line.contains("is ready") => return (child, line),
            Ok(_) => continue,
            Err(e) => panic!("no ready line: {e}"),
        }
    }
}

/// An index inside a repository leaves `git status` clean: the data dir
/// carries its own `.gitignore` of `*` (CONTRACT §5).
#[test]
fn an_index_inside_a_repository_leaves_git_status_clean() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("app");
    crate::common::copy_tree(&fixture("python"), &repo);
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
        stdout(&o)
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "init"]);
    let out = cruxe(&["index", repo.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(repo.join(".cruxe/manifest.json").exists());
    assert_eq!(git(&["status", "--porcelain"]), "");
}
