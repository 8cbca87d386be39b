//! A team server: several repositories and refs from a `cruxe.toml`, git refs
//! indexed without a checkout, isolation between them, live freshness while files
//! change, 32 concurrent MCP clients, and kill -9 of `cruxe serve` mid-run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{copy_tree, cruxe, cruxe_bin, fixture, rows, small_graph, stdout};
use crate::mcp::{call_all, client, results, serve_paths, wait_ready};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=cruxe",
            "-c",
            "user.email=cruxe@example.com",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("run git");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `shop`: a git repository whose `main` is checked out with an uncommitted edit
/// (`checkout_draft`), and whose `release` branch has other code
/// (`checkout_release`, `refund`) that is never checked out.
fn shop_repo(dir: &Path) {
    std::fs::create_dir_all(dir.join("shop")).expect("mkdir");
    std::fs::write(dir.join("shop/__init__.py"), "").expect("write");
    let cart = "class Cart:\n    def total(self):\n        return 0\n\n\ndef checkout_main(cart):\n    return cart.total()\n";
    std::fs::write(dir.join("shop/cart.py"), cart).expect("write");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "main"]);
    git(dir, &["checkout", "-q", "-b", "release"]);
    std::fs::write(
        dir.join("shop/cart.py"),
        cart.replace("checkout_main", "checkout_release"),
    )
    .expect("write");
    std::fs::write(
        dir.join("shop/refund.py"),
        "def refund(order):\n    return -order\n",
    )
    .expect("write");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "release"]);
    git(dir, &["checkout", "-q", "main"]);
    std::fs::write(
        dir.join("shop/cart.py"),
        format!("{cart}\n\ndef checkout_draft(cart):\n    return None\n"),
    )
    .expect("write");
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .iter()
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect()
}

/// Two repositories (one of them with two refs) served from one cruxe.toml:
/// every answer comes from exactly the repo and ref asked for.
#[test]
fn two_repos_and_two_refs_are_isolated() {
    let tmp = tempfile::tempdir().expect("tmp");
    shop_repo(&tmp.path().join("shop"));
    copy_tree(&fixture("python"), &tmp.path().join("blog"));
    std::fs::write(
        tmp.path().join("blog/publish.py"),
        "def publish(post):\n    return post\n",
    )
    .expect("write");
    let status_before = git_out(&tmp.path().join("shop"), &["status", "--porcelain"]);
    let config = tmp.path().join("cruxe.toml");
    std::fs::write(
        &config,
        "[server]\nquery_timeout_ms = 4000\nmemory_mb = 512\n\n[[repo]]\npath = \"shop\"\ndata = \"shop-data\"\ngit_refs = [\"release\"]\n\n[[repo]]\npath = \"blog\"\nname = \"journal\"\n",
    )
    .expect("write config");
    let config_arg = config.to_str().expect("utf8").to_string();
    let root = tmp.path().to_path_buf();
    let server = serve_paths(tmp, &[], &["--config", &config_arg], &[]);
    wait_ready(&server);
    let locate = |repo: &str, rf: Option<&str>, name: &str| {
        let mut args = json!({"repo": repo, "name": name});
        if let Some(r) = rf {
            args["ref"] = json!(r);
        }
        ("locate_symbol", args)
    };
    // The git ref is indexed after the working trees: wait for it.
    let wait = client(json!({
        "transport": "http", "url": server.url(),
        "calls": [["locate_symbol", {"repo": "shop", "ref": "release", "name": "refund"},
                   {"until": "ok", "timeout_s": 60}]],
    }));
    assert!(!results(&wait)[0].1);

    let calls = vec![
        locate("shop", None, "checkout_draft"),
        locate("shop", None, "checkout_main"),
        locate("shop", None, "checkout_release"),
        locate("shop", None, "refund"),
        locate("shop", Some("release"), "checkout_release"),
        locate("shop", Some("release"), "refund"),
        locate("shop", Some("release"), "checkout_draft"),
        locate("shop", Some("release"), "checkout_main"),
        locate("journal", None, "publish"),
        locate("journal", None, "checkout_main"),
        locate("shop", None, "publish"),
        (
            "search_code",
            json!({"repo": "shop", "ref": "release", "query": "checkout"}),
        ),
        ("search_code", json!({"repo": "shop", "query": "checkout"})),
        (
            "get_node",
            json!({"repo": "shop", "ref": "release", "node_id": "file:shop/cart.py"}),
        ),
        (
            "get_node",
            json!({"repo": "shop", "node_id": "file:shop/cart.py"}),
        ),
        ("locate_symbol", json!({"name": "publish"})),
        locate("shop", Some("nope"), "refund"),
        ("index_status", json!({})),
        (
            "get_code_context",
            json!({"repo": "shop", "ref": "release", "query": "checkout cart", "strategy": "depth"}),
        ),
    ];
    let r = call_all(&server, &calls);
    let ok = |i: usize| {
        assert!(!r[i].1, "call {i} {:?} failed: {}", calls[i], r[i].0);
        &r[i].0
    };
    let code = |i: usize| {
        assert!(r[i].1, "call {i} {:?} should fail: {}", calls[i], r[i].0);
        r[i].0["error"]["code"].as_str().expect("code").to_string()
    };
    // A name not defined in the repo/ref: locate_symbol answers with search hits
    // instead (`match: "search"`), none of which may be that name.
    let absent = |i: usize| {
        let name = calls[i].1["name"].as_str().expect("name");
        let v = &r[i].0;
        if r[i].1 {
            assert_eq!(v["error"]["code"], "symbol_not_found", "{v}");
        } else {
            assert_eq!(v["match"], "search", "call {i}: {v}");
            assert!(
                !names(v, "results").iter().any(|n| n == name),
                "call {i}: {v}"
            );
        }
    };
    // The working tree, with its uncommitted edit, is `main`.
    assert_eq!(ok(0)["results"][0]["path"], "shop/cart.py");
    assert_eq!(ok(0)["metadata"]["ref"], "main");
    assert_eq!(ok(1)["results"][0]["name"], "checkout_main");
    absent(2);
    absent(3);
    // `release` holds its own code only.
    assert_eq!(ok(4)["results"][0]["name"], "checkout_release");
    assert_eq!(ok(4)["metadata"]["ref"], "release");
    assert_eq!(ok(5)["results"][0]["path"], "shop/refund.py");
    absent(6);
    absent(7);
    // The other repo neither sees nor is seen.
    assert_eq!(ok(8)["results"][0]["path"], "publish.py");
    absent(9);
    absent(10);
    let release_hits = names(ok(11), "results");
    assert!(release_hits.contains(&"checkout_release".to_string()));
    assert!(
        !release_hits
            .iter()
            .any(|n| n == "checkout_main" || n == "checkout_draft"),
        "{release_hits:?}"
    );
    let main_hits = names(ok(12), "results");
    assert!(main_hits.contains(&"checkout_draft".to_string()));
    assert!(!main_hits.contains(&"checkout_release".to_string()));
    // Files of a git ref are read from git's objects, not the working tree.
    let release_cart = ok(13)["content"].as_str().expect("content");
    assert!(release_cart.contains("def checkout_release"));
    assert!(!release_cart.contains("checkout_draft"));
    assert!(
        ok(14)["content"]
            .as_str()
            .expect("content")
            .contains("def checkout_draft")
    );
    // Several repos: `repo` is required, and the error lists them.
    assert_eq!(code(15), "repo_not_found");
    assert_eq!(
        r[15].0["error"]["data"]["repos"],
        json!(["shop", "journal"])
    );
    assert_eq!(code(16), "ref_not_indexed");
    // index_status lists every repo and ref.
    let status = ok(17);
    let repos = status["repos"].as_array().expect("repos");
    assert_eq!(repos.len(), 2);
    // Its envelope speaks for both repos, which are ready.
    assert_eq!(status["metadata"]["indexing_status"], "ready", "{status}");
    assert_eq!(
        status["metadata"]["schema_status"], "compatible",
        "{status}"
    );
    let shop_refs: Vec<(String, String)> = repos[0]["refs"]
        .as_array()
        .expect("refs")
        .iter()
        .map(|r| {
            (
                r["ref"].as_str().expect("ref").to_string(),
                r["source"].as_str().expect("source").to_string(),
            )
        })
        .collect();
    assert!(shop_refs.contains(&("main".into(), "working_tree".into())));
    assert!(shop_refs.contains(&("release".into(), "git".into())));
    assert_eq!(repos[1]["repo"], "journal");
    assert_eq!(repos[1]["refs"][0]["ref"], "live");
    for it in ok(18)["context_items"].as_array().expect("items") {
        let body = it["body"].as_str().unwrap_or("");
        assert!(!body.contains("checkout_draft"), "{it}");
    }
    // The release branch moves (no checkout): the server sees the ref change in
    // .git and re-reads that ref.
    let shop = root.join("shop");
    git(&shop, &["branch", "-f", "release", "main"]);
    let moved = client(json!({
        "transport": "http", "url": server.url(),
        "calls": [
            ["get_symbol_hierarchy", {"repo": "shop", "ref": "release", "symbol_name": "checkout_main"},
             {"until": "ok", "timeout_s": 30}],
            ["get_symbol_hierarchy", {"repo": "shop", "ref": "release", "symbol_name": "refund"}],
            ["index_status", {"repo": "shop"}],
        ],
    }));
    let moved = results(&moved);
    assert_eq!(
        moved[1].0["error"]["code"], "symbol_not_found",
        "{}",
        moved[1].0
    );
    let release = moved[2].0["repos"][0]["refs"]
        .as_array()
        .expect("refs")
        .iter()
        .find(|r| r["ref"] == "release")
        .cloned()
        .expect("release");
    assert_eq!(
        release["commit"].as_str().expect("commit"),
        git_out(&shop, &["rev-parse", "main"]).trim()
    );

    // Indexing a git ref touched neither the working tree nor HEAD.
    assert!(
        !status_before.is_empty(),
        "the working tree has an uncommitted edit"
    );
    assert_eq!(
        git_out(&shop, &["status", "--porcelain"]),
        status_before,
        "the working tree changed"
    );
    assert_eq!(git_out(&shop, &["branch", "--show-current"]).trim(), "main");
}

/// `cruxe index PATH --ref BRANCH` reads a branch that is not checked out from
/// git objects; `--working-tree` names the working tree instead.
#[test]
fn cli_indexes_a_branch_without_checking_it_out() {
    let tmp = tempfile::tempdir().expect("tmp");
    let shop = tmp.path().join("shop");
    shop_repo(&shop);
    let data = tmp.path().join("data");
    let (shop_s, data_s) = (shop.to_str().expect("utf8"), data.to_str().expect("utf8"));
    let out = cruxe(&["index", shop_s, "--data", data_s, "--ref", "release"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).starts_with("indexed shop@release: 3 files"),
        "{}",
        stdout(&out)
    );
    let out = cruxe(&["index", shop_s, "--data", data_s]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).starts_with("indexed shop@main: 2 files"),
        "{}",
        stdout(&out)
    );
    let out = cruxe(&[
        "index",
        shop_s,
        "--data",
        data_s,
        "--ref",
        "release",
        "--working-tree",
    ]);
    assert!(out.status.success(), "{out:?}");
    let store = cruxe::store::datadir::DataDir::new(&data)
        .open_graph_read_only(&small_graph())
        .expect("open");
    let found = rows(
        &store,
        "MATCH (s:Symbol) WHERE s.name STARTS WITH 'checkout_' RETURN s.ref AS r, s.name AS n ORDER BY r, n",
    );
    let pairs: Vec<(String, String)> = found
        .iter()
        .map(|r| {
            (
                r["r"].as_str().expect("r").into(),
                r["n"].as_str().expect("n").into(),
            )
        })
        .collect();
    // `release` now holds the working tree (--working-tree replaced the git snapshot).
    let want: Vec<(String, String)> = [
        ("main", "checkout_draft"),
        ("main", "checkout_main"),
        ("release", "checkout_draft"),
        ("release", "checkout_main"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pairs, want);
    drop(store);
    let out = cruxe(&["index", shop_s, "--data", data_s, "--ref", "no-such-branch"]);
    assert!(
        out.status.success(),
        "a name git does not know names the working tree: {out:?}"
    );
}

/// A saved change is picked up by the watcher and answered; a deletion too; and
/// the metadata says `fresh` once the index caught up.
#[test]
fn saved_changes_become_visible() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    std::fs::write(repo.join(".gitignore"), "build/\n").expect("write");
    // A directory's own ignore file, read when a run walks just that directory.
    std::fs::write(repo.join("auth/.gitignore"), "*_generated.py\n").expect("write");
    let server = serve_paths(tmp, std::slice::from_ref(&repo), &[], &[]);
    wait_ready(&server);

    // Files the repo ignores (a build's output) trigger no run at all.
    let last_run =
        || crate::mcp::call(&server, "index_status", json!({}))["repos"][0]["last_run"].clone();
    let before = last_run();
    std::fs::create_dir_all(repo.join("build")).expect("mkdir");
    std::fs::write(repo.join("build/generated.py"), "def gen():\n    pass\n").expect("write");
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(last_run(), before, "an ignored file started a run");

    std::fs::write(
        repo.join("auth/tokens_generated.py"),
        "def ignored_beside(token):\n    return token\n",
    )
    .expect("write");
    std::fs::write(
        repo.join("auth/fresh.py"),
        "def just_saved(token):\n    return token\n",
    )
    .expect("write");
    let report = client(json!({
        "transport": "http", "url": server.url(),
        "calls": [
            ["get_symbol_hierarchy", {"symbol_name": "just_saved"}, {"until": "ok", "timeout_s": 30}],
            ["get_symbol_hierarchy", {"symbol_name": "ignored_beside"}],
        ],
    }));
    let r = results(&report);
    assert_eq!(
        r[1].0["error"]["code"], "symbol_not_found",
        "a new file its directory's .gitignore names was indexed: {}",
        r[1].0
    );
    assert_eq!(
        r[0].0["hierarchy"][0]["path"], "auth/fresh.py",
        "{}",
        r[0].0
    );
    let waited = report["results"][0]["waited_ms"].as_f64().expect("waited");
    eprintln!("a new file was answered after {waited} ms");
    std::fs::remove_file(repo.join("auth/fresh.py")).expect("rm");
    let report = client(json!({
        "transport": "http", "url": server.url(),
        "calls": [
            ["get_symbol_hierarchy", {"symbol_name": "just_saved"}, {"until": "error", "timeout_s": 30}],
        ],
    }));
    let r = results(&report);
    assert_eq!(r[0].0["error"]["code"], "symbol_not_found");
    // Once caught up, answers say fresh.
    let started = Instant::now();
    loop {
        let v = crate::mcp::call(&server, "index_status", json!({}));
        if v["metadata"]["freshness_status"] == "fresh" {
            assert_eq!(v["repos"][0]["watching"], true);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never fresh: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes `hot/modK.py` for K in 0..n in state `tag` (every function name ends
/// with it), so an answer about one file can be told to be all old or all new.
/// Each file is replaced whole (temp file, rename), as editors save: a plain
/// write can be read half done (truncated), a third state of the file that the
/// index would rightly show.
fn write_hot(repo: &Path, n: usize, tag: &str) {
    for k in 0..n {
        let mut text = String::new();
        for d in 0..4 {
            text.push_str(&format!("def hot{d}_{tag}(x):\n    return x + {d}\n\n\n"));
        }
        let tmp = repo.join(format!("hot/mod{k}.py.tmp"));
        std::fs::write(&tmp, text).expect("write");
        std::fs::rename(&tmp, repo.join(format!("hot/mod{k}.py"))).expect("rename");
    }
}

/// 32 MCP clients at once, mixing every tool, while files are being rewritten and
/// re-indexed underneath: no errors, and every outline of a changing file is
/// entirely the old or entirely the new state.
#[test]
fn thirty_two_clients_while_files_change() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    std::fs::create_dir_all(repo.join("hot")).expect("mkdir");
    write_hot(&repo, 8, "a");
    let server = serve_paths(tmp, std::slice::from_ref(&repo), &[], &[]);
    wait_ready(&server);

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let editor = {
        let (repo, stop) = (repo.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut edits = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                write_hot(&repo, 8, if edits % 2 == 0 { "b" } else { "a" });
                edits += 1;
                std::thread::sleep(Duration::from_millis(120));
            }
            edits
        })
    };
    let calls = json!([
        ["get_file_outline", {"path": "hot/mod3.py"}],
        ["locate_symbol", {"name": "UserService"}],
        ["search_code", {"query": "hot"}],
        ["get_symbol_hierarchy", {"symbol_name": "describe", "direction": "ancestors"}],
        ["find_related_symbols", {"symbol_name": "UserService"}],
        ["explore_tree", {"pattern": "hot", "max_depth": 2}],
        ["get_node", {"node_id": "file:services/user_service.py"}],
        ["run_cypher", {"query": "MATCH (f:File) WHERE f.path STARTS WITH 'hot/' RETURN count(*) AS n"}],
        ["get_code_context", {"query": "hot", "max_tokens": 800}],
        ["index_status", {}],
    ]);
    let report = client(json!({
        "transport": "http", "url": server.url(),
        "clients": 32, "rounds": 3, "calls": calls,
    }));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let edits = editor.join().expect("editor");
    let r = results(&report);
    assert_eq!(r.len(), 32 * 3 * 10);
    let mut outlines = 0;
    let mut states = std::collections::HashSet::new();
    for (v, err) in &r {
        assert!(!err, "an error under load: {v}");
        // A failed index run (e.g. a checkpoint that could not finish) shows here.
        assert_eq!(v["metadata"]["indexing_status"], "ready", "{v}");
        if let Some(symbols) = v.get("symbols").and_then(Value::as_array) {
            outlines += 1;
            let tags: std::collections::HashSet<&str> = symbols
                .iter()
                .filter_map(|s| s["name"].as_str())
                .map(|n| &n[n.len() - 1..])
                .collect();
            assert_eq!(symbols.len(), 4, "{v}");
            assert_eq!(tags.len(), 1, "a mixed outline: {v}");
            states.extend(tags.into_iter().map(str::to_string));
        }
        if let Some(rows) = v.get("rows") {
            assert_eq!(rows, &json!([[8]]), "{v}");
        }
    }
    assert_eq!(outlines, 32 * 3);
    eprintln!("{edits} edits during the run; outline states seen: {states:?}");
    assert!(edits >= 2, "the files did not change during the run");
}

/// `kill -9` of `cruxe serve` at pseudo-random moments of indexing (the first
/// index, and re-indexing after edits) — ten times; every time the data dir
/// opens and answers with one complete state.
#[test]
fn kill_serve_during_indexing() {
    const FILES: usize = 600;
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("killed");
    let data = tmp.path().join("data");
    let write = |tag: &str| {
        for i in 0..FILES {
            let dir = repo.join(format!("pkg{}", i % 10));
            std::fs::create_dir_all(&dir).expect("mkdir");
            let mut text = String::new();
            for d in 0..6 {
                text.push_str(&format!(
                    "class K{d}_{tag}:\n    def m(self):\n        return {d}\n\n"
                ));
            }
            std::fs::write(dir.join(format!("m{i}.py")), text).expect("write");
        }
    };
    write("a");
    // A tiny deterministic generator: the seed is printed so a failure can be replayed.
    let mut seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_nanos() as u64;
    eprintln!("kill_serve_during_indexing seed {seed}");
    let mut next = move |max: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % max
    };
    let mut answered = 0;
    for round in 0..10 {
        if round % 2 == 1 {
            write(if round % 4 == 1 { "b" } else { "a" });
        }
        let mut child = Command::new(cruxe_bin())
            .args([
                "serve",
                repo.to_str().expect("utf8"),
                "--listen",
                "127.0.0.1:0",
            ])
            .arg("--data")
            .arg(&data)
            .env("CRUXE_BUFFER_POOL_MB", "128")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cruxe serve");
        std::thread::sleep(Duration::from_millis(200 + next(2500)));
        let _ = child.kill();
        let _ = child.wait();
        let dd = cruxe::store::datadir::DataDir::new(&data);
        if !dd.exists() {
            continue; // killed before the first index was published
        }
        let store = dd
            .open_graph_read_only(&small_graph())
            .unwrap_or_else(|e| panic!("round {round}: the data dir must open: {e}"));
        let files = rows(&store, "MATCH (f:File) RETURN count(*) AS n");
        let tags = rows(
            &store,
            "MATCH (s:Symbol {kind: 'class'}) RETURN DISTINCT substring(s.name, size(s.name), 1) AS t",
        );
        assert_eq!(files[0]["n"], json!(FILES), "round {round}");
        assert_eq!(tags.len(), 1, "round {round}: a mix of states: {tags:?}");
        answered += 1;
    }
    assert!(answered > 0, "no kill came after the first index");
}

/// A save is answered first and checkpointed once changes pause (500 ms by
/// default), well before `FINISH_WITHIN` (10 s) would force it: the log is
/// empty again within a few seconds, and the server still answers.
#[test]
fn a_save_is_checkpointed_soon_after_changes_pause() {
    let keep = tempfile::tempdir().expect("tmp");
    let repo = keep.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let data = keep.path().join("data");
    let data_arg = data.to_string_lossy().into_owned();
    let server = serve_paths(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &["--data", &data_arg],
        &[],
    );
    wait_ready(&server);
    let dd = cruxe::store::datadir::DataDir::new(&data);
    let graph = dd.graph_path().expect("manifest").expect("a graph");
    let wal = || std::fs::metadata(format!("{}.wal", graph.display())).map_or(0, |m| m.len());
    std::fs::write(
        repo.join("auth/soon.py"),
        "def saved_soon():\n    return 1\n",
    )
    .expect("write");
    crate::mcp::wait_answered(&server, &["saved_soon".to_string()], 30);
    let answered = Instant::now();
    while wal() > 0 {
        assert!(
            answered.elapsed() < Duration::from_secs(4),
            "not checkpointed {:?} after the save was answered",
            answered.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    crate::mcp::wait_answered(&server, &["saved_soon".to_string()], 5);
}

/// Saves in quick succession are each committed and answered, and checkpointed
/// together once they pause. A kill -9 before that checkpoint leaves a data dir
/// that opens with one complete state (the copy from before them); the next
/// start re-indexes and answers every save.
#[test]
fn a_kill_before_the_checkpoint_of_quick_saves_loses_nothing() {
    let keep = tempfile::tempdir().expect("tmp");
    let repo = keep.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let data = keep.path().join("data");
    let data_arg = data.to_string_lossy().into_owned();
    let serve = || {
        serve_paths(
            tempfile::tempdir().expect("tmp"),
            std::slice::from_ref(&repo),
            &["--data", &data_arg],
            // Long enough that the kill surely comes before the checkpoint.
            &[("CRUXE_CHECKPOINT_AFTER_MS", "20000")],
        )
    };
    let visible = |server: &crate::mcp::Server, names: &[String]| {
        crate::mcp::wait_answered(server, names, 30)
    };
    let server = serve();
    wait_ready(&server);
    let mut names = Vec::new();
    for k in 0..3 {
        let name = format!("quick_save_{k}");
        std::fs::write(
            repo.join(format!("auth/quick{k}.py")),
            format!("def {name}():\n    return {k}\n"),
        )
        .expect("write");
        names.push(name);
        visible(&server, &names);
    }
    drop(server); // kill -9
    let dd = cruxe::store::datadir::DataDir::new(&data);
    let graph = dd.graph_path().expect("manifest").expect("a graph");
    // The kill came before the checkpoint: the saves are in the log only, and
    // the copy from before them is there.
    let wal = std::fs::metadata(format!("{}.wal", graph.display())).map_or(0, |m| m.len());
    assert!(wal > 0, "the runs were checkpointed already");
    assert!(std::path::PathBuf::from(format!("{}.bak", graph.display())).exists());
    let store = dd
        .open_graph_read_only(&small_graph())
        .expect("the data dir opens");
    let quick = rows(
        &store,
        "MATCH (f:File)-[:CONTAINS]->(s:Symbol) WHERE f.path STARTS WITH 'auth/quick' \
         RETURN f.path AS p, s.name AS n ORDER BY p",
    );
    // One complete state: every file there has its function.
    for r in &quick {
        assert!(
            crate::common::s(&r["n"]).starts_with("quick_save_"),
            "{quick:?}"
        );
    }
    drop(store);
    let mut server = serve();
    wait_ready(&server);
    visible(&server, &names);

    // A save right before Ctrl-C: the server checkpoints it before it exits and
    // leaves no copy to put back; the next start answers it.
    std::fs::write(
        repo.join("auth/last.py"),
        "def last_save():\n    return 0\n",
    )
    .expect("write");
    names.push("last_save".into());
    visible(&server, &names);
    assert!(server.interrupt(), "a clean exit");
    assert!(
        !std::path::PathBuf::from(format!("{}.bak", graph.display())).exists(),
        "a clean stop leaves no copy to put back"
    );
    let server = serve();
    wait_ready(&server);
    visible(&server, &names);
}

/// Without a watcher nothing notices an edit, so answers say they may be behind.
#[test]
fn an_unwatched_tree_is_stale() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let server = serve_paths(tmp, std::slice::from_ref(&repo), &["--no-watch"], &[]);
    wait_ready(&server);
    let v = crate::mcp::call(&server, "index_status", json!({}));
    assert_eq!(v["metadata"]["freshness_status"], "stale", "{v}");
    assert_eq!(v["repos"][0]["watching"], false);
    assert!(
        v["repos"][0]["watch_error"]
            .as_str()
            .is_some_and(|e| e.contains("--no-watch")),
        "{v}"
    );
}
