//! Generations and replicas end to end (`cruxe serve --publish`, `--replica`):
//! real servers, a real object store of the `file://` kind (the S3 variant
//! runs outside `make test`: `make test-s3`), a real MCP client.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{copy_tree, fixture};
use crate::mcp::{Server, call, call_all, client, http, results, serve_paths, wait_ready};

/// The store a test publishes to: a fresh prefix of `CRUXE_TEST_S3`
/// (`s3://bucket`, what `make test-s3` sets with a Garage server's keys in
/// `AWS_*`), else the directory `dir`. Tests that spoil objects on purpose
/// write to the directory and use it either way.
fn store_url(dir: &Path) -> String {
    match std::env::var("CRUXE_TEST_S3") {
        Ok(bucket) if !bucket.is_empty() => {
            let name = dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            format!("{}/{name}", bucket.trim_end_matches('/'))
        }
        _ => file_url(dir),
    }
}

fn file_url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// A publisher over a copy of the Python fixture, publishing to `url`.
fn publisher(url: &str) -> (Server, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let server = serve_paths(tmp, std::slice::from_ref(&repo), &["--publish", url], &[]);
    wait_ready(&server);
    (server, repo)
}

fn replica(url: &str) -> Server {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("generations");
    let dir = dir.to_string_lossy().into_owned();
    serve_paths(tmp, &[], &["--replica", url, "--data", &dir], &[])
}

/// The generation a replica's answer came from.
fn generation_of(v: &Value) -> u64 {
    v["metadata"]["generation"].as_u64().unwrap_or(0)
}

/// An answer without its metadata (which says who answered, and when).
fn body(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("metadata");
    }
    v
}

/// Waits until a `file://` store holds a generation (the publisher's first
/// upload); an S3 store is waited for by the replicas' readiness.
fn wait_published(url: &str) {
    let Some(dir) = url.strip_prefix("file://") else {
        return;
    };
    let gens = Path::new(dir).join("generations");
    let started = Instant::now();
    while !std::fs::read_dir(&gens).is_ok_and(|mut d| {
        d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".json")))
    }) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "nothing published in {dir}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The generation replica `r` answers from now.
fn served_generation(r: &Server) -> u64 {
    generation_of(&call(r, "locate_symbol", json!({"name": "validate_token"})))
}

/// `r`'s answer once it knows the function `name` (an edit published and
/// served there), asked until it does, 2 minutes at most.
fn once_served(r: &Server, name: &str) -> Value {
    let report = client(json!({
        "transport": "http", "url": r.url(),
        "calls": [["get_symbol_hierarchy", {"symbol_name": name}, {"until": "ok", "timeout_s": 120}]],
    }));
    let (v, err) = results(&report).remove(0);
    assert!(!err, "the edit never reached the replica: {v}");
    v
}

const READS: &[(&str, &str)] = &[
    ("locate_symbol", r#"{"name": "validate_token"}"#),
    ("get_file_outline", r#"{"path": "auth/handler.py"}"#),
    ("search_code", r#"{"query": "token"}"#),
    (
        "get_call_graph",
        r#"{"symbol_name": "validate_token", "direction": "both", "depth": 2}"#,
    ),
    ("find_references", r#"{"symbol_name": "validate_token"}"#),
    ("explore_tree", r#"{}"#),
    (
        "run_cypher",
        r#"{"query": "MATCH (s:Symbol) RETURN count(s) AS n"}"#,
    ),
];

fn reads() -> Vec<(&'static str, Value)> {
    READS
        .iter()
        .map(|(n, a)| (*n, serde_json::from_str(a).expect("args")))
        .collect()
}

#[test]
fn replicas_answer_as_their_publisher_and_follow_its_edits() {
    let store = tempfile::tempdir().expect("store");
    let url = store_url(store.path());
    let (publisher, repo) = publisher(&url);
    wait_published(&url);
    let (a, b) = (replica(&url), replica(&url));
    wait_ready(&a);
    wait_ready(&b);

    // The same generation, the same answers: every read tool and run_cypher.
    let mine = call_all(&publisher, &reads());
    for r in [&a, &b] {
        let theirs = call_all(r, &reads());
        for ((p, p_err), (t, t_err)) in mine.iter().zip(&theirs) {
            assert!(!p_err && !t_err, "{p}\n{t}");
            assert_eq!(body(p), body(t), "a replica answered differently");
            assert!(generation_of(t) >= 1, "no generation in {t}");
            assert!(t["metadata"]["published_at"].is_string(), "{t}");
        }
    }
    let before = served_generation(&a);

    // An edit on the publisher reaches both replicas.
    std::fs::write(
        repo.join("auth/replicated.py"),
        "def replicated_probe(token):\n    return token\n",
    )
    .expect("write");
    let started = Instant::now();
    for r in [&a, &b] {
        let v = once_served(r, "replicated_probe");
        assert!(generation_of(&v) > before, "{v}");
        assert_eq!(v["metadata"]["freshness_status"], "fresh", "{v}");
    }
    eprintln!(
        "an edit was answered by both replicas {} ms after it was saved",
        started.elapsed().as_millis()
    );
    // The replicas made their catalogs from the previous generation's,
    // reading the changed file again: the same answers as the publisher's.
    let mut after = reads();
    after.extend([
        ("locate_symbol", json!({"name": "replicated_probe"})),
        ("search_code", json!({"query": "replicated probe"})),
        ("get_file_outline", json!({"path": "auth/replicated.py"})),
    ]);
    let mine = call_all(&publisher, &after);
    for r in [&a, &b] {
        let theirs = call_all(r, &after);
        for ((p, p_err), (t, t_err)) in mine.iter().zip(&theirs) {
            assert!(!p_err && !t_err, "{p}\n{t}");
            assert_eq!(
                body(p),
                body(t),
                "a replica answered differently after the edit"
            );
        }
    }
    // And the source texts came along: the new function's body.
    let node = call(
        &a,
        "get_file_outline",
        json!({"path": "auth/replicated.py"}),
    );
    assert!(node.to_string().contains("replicated_probe"), "{node}");
    // The publisher's /health says what it put in the store: at least the
    // generation that answered, and no failure.
    let (status, _, health) = http(&publisher.addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200, "{health}");
    let h: Value = serde_json::from_str(&health).expect("json");
    assert!(
        h["publish"]["generation"].as_u64().unwrap_or(0) >= generation_of(&node),
        "{h}"
    );
    assert_eq!(h["publish"]["error"], Value::Null, "{h}");
    // A replica follows the store, not a tree.
    let st = call(&a, "index_status", json!({}));
    assert!(!st.to_string().contains("\"watching\":true"), "{st}");
}

#[test]
fn a_replica_of_an_empty_store_answers_index_not_ready() {
    let store = tempfile::tempdir().expect("store");
    let r = replica(&store_url(store.path()));
    let (status, _, health) = http(&r.addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200, "{health}");
    let h: Value = serde_json::from_str(&health).expect("json");
    assert_eq!(
        (h["ready"].clone(), h["generation"].clone()),
        (json!(false), json!(0)),
        "{h}"
    );
    let (v, err) = call_all(&r, &[("locate_symbol", json!({"name": "validate_token"}))]).remove(0);
    assert!(err, "{v}");
    assert_eq!(v["error"]["code"], "index_not_ready", "{v}");
}

/// A `file://` store whose directory does not exist is no empty store (a
/// typo, a shared filesystem not mounted): a replica stops and says so, and
/// makes no directory there (it never writes the store).
#[test]
fn a_replica_of_a_missing_store_directory_stops_and_says_so() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("no-such-store");
    let mut child = std::process::Command::new(crate::common::cruxe_bin())
        .args([
            "serve",
            "--replica",
            &file_url(&missing),
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--data")
        .arg(tmp.path().join("r"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cruxe");
    // A replica that serves instead would never exit: a minute bounds the
    // wait (it times nothing; the refusal comes at start).
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the replica of a missing directory kept running");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
        .expect("read stderr");
    assert!(!status.success(), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!missing.exists(), "the replica made the store's directory");
}

/// A generation whose objects do not match their hashes is refused whole; the
/// replica keeps answering from the one it has, and says it is behind.
/// Two replicas on one host would share the default directory, and the
/// second would remove the generations the first serves: it is refused, and
/// says what to do.
#[test]
fn a_second_replica_on_the_same_directory_is_refused_and_the_first_serves_on() {
    let store = tempfile::tempdir().expect("store");
    let url = store_url(store.path());
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp
        .path()
        .join("generations")
        .to_string_lossy()
        .into_owned();
    let first = serve_paths(tmp, &[], &["--replica", &url, "--data", &dir], &[]);
    let mut second = std::process::Command::new(crate::common::cruxe_bin())
        .args([
            "serve",
            "--replica",
            &url,
            "--data",
            &dir,
            "--listen",
            "127.0.0.1:0",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run a second replica");
    // It ends at once; one still running after a minute was not refused.
    let until = Instant::now() + Duration::from_secs(60);
    let status = loop {
        match second.try_wait().expect("wait") {
            Some(status) => break Some(status),
            None if Instant::now() > until => break None,
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let _ = second.kill();
    let second = second.wait_with_output().expect("its output");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(status.is_some_and(|s| !s.success()), "not refused: {err}");
    assert!(
        err.contains("in use by another replica") && err.contains("its own `--data DIR`"),
        "{err}"
    );
    let (status, _, health) = http(&first.addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200, "{health}");
}

#[test]
fn a_corrupted_truncated_or_escaping_object_is_refused_and_the_replica_keeps_serving() {
    let store = tempfile::tempdir().expect("store");
    let url = file_url(store.path());
    let (mut publisher, _repo) = publisher(&url);
    wait_published(&url);
    let r = replica(&url);
    wait_ready(&r);
    // No more generations from the publisher: the store is ours to spoil.
    publisher.kill9();
    let served = served_generation(&r);
    let gens = store.path().join("generations");
    let newest = std::fs::read_dir(&gens)
        .expect("generations")
        .flatten()
        .map(|e| e.path())
        .max()
        .expect("a manifest");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(&newest).expect("read")).expect("json");
    let n = manifest["generation"].as_u64().expect("number");

    for (i, spoil) in ["corrupted", "truncated", "escaping"].iter().enumerate() {
        // A new file whose blob is not what its name says, or whose path
        // leaves the generation's directory.
        let text = format!("def spoiled_{i}():\n    return {i}\n");
        let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
        let (stored, path) = match *spoil {
            "corrupted" => (
                text.replace("return", "raise"),
                format!("sources/spoiled/{i}.py"),
            ),
            "truncated" => (
                text[..text.len() / 2].to_string(),
                format!("sources/spoiled/{i}.py"),
            ),
            _ => (text.clone(), format!("../../spoiled-{i}.py")),
        };
        std::fs::write(store.path().join("blobs").join(&hash), stored).expect("blob");
        let mut m = manifest.clone();
        let g = n + 1 + i as u64;
        m["generation"] = json!(g);
        m["files"].as_array_mut().expect("files").push(json!({
            "path": path, "size": text.len(),
            "blake3": hash, "chunks": [hash],
        }));
        std::fs::write(gens.join(format!("{g:020}.json")), m.to_string()).expect("manifest");
        // The replica sees it, refuses it, and stays where it was.
        let started = Instant::now();
        loop {
            let v = call(&r, "locate_symbol", json!({"name": "validate_token"}));
            assert_eq!(
                generation_of(&v),
                served,
                "a {spoil} generation was served: {v}"
            );
            if v["metadata"]["generations_behind"].as_u64() == Some(g - served) {
                assert_eq!(v["metadata"]["freshness_status"], "syncing", "{v}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never saw generation {g}: {v}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Refused (so fetched and checked), and the replica answers as before.
        let started = Instant::now();
        loop {
            let (_, _, health) = http(&r.addr, "GET", "/health", &[], b"");
            let h: Value = serde_json::from_str(&health).expect("health json");
            if h["refused_generation"] == g {
                assert_eq!(h["generation"], served, "{h}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never refused {g}: {h}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let v = call(&r, "locate_symbol", json!({"name": "validate_token"}));
        assert_eq!(
            generation_of(&v),
            served,
            "a {spoil} generation was served: {v}"
        );
    }
}

/// A publisher killed mid-upload leaves blobs without a manifest: invisible.
/// Replicas stay on the last complete generation; the next publisher
/// publishes after it and removes what the killed one left.
#[test]
fn a_publisher_killed_mid_upload_leaves_replicas_on_the_last_complete_generation() {
    let store = tempfile::tempdir().expect("store");
    let url = file_url(store.path());
    let (mut publisher, repo) = publisher(&url);
    wait_published(&url);
    let r = replica(&url);
    wait_ready(&r);
    let served = served_generation(&r);
    publisher.kill9();
    // What a killed upload leaves: blobs no manifest names.
    let orphan = store
        .path()
        .join("blobs")
        .join(blake3::hash(b"orphan").to_hex().to_string());
    std::fs::write(&orphan, b"orphan").expect("blob");
    std::thread::sleep(Duration::from_millis(1500));
    let v = call(&r, "locate_symbol", json!({"name": "validate_token"}));
    assert_eq!(generation_of(&v), served, "{v}");
    assert_eq!(v["metadata"]["freshness_status"], "fresh", "{v}");

    // A new publisher on the same repo and store carries on from there.
    let tmp = tempfile::tempdir().expect("tmp");
    let again = serve_paths(tmp, std::slice::from_ref(&repo), &["--publish", &url], &[]);
    wait_ready(&again);
    std::fs::write(
        repo.join("auth/after.py"),
        "def after_restart():\n    return 1\n",
    )
    .expect("write");
    let v = once_served(&r, "after_restart");
    assert!(generation_of(&v) > served, "{v}");
    assert!(
        !orphan.exists(),
        "the killed upload's blob is still in the store"
    );
}

/// An edit made while the store refuses writes is published once it takes
/// them again, with no edit after it: the publisher tries the upload again.
/// The store's `blobs` folder turned into a file makes every new blob fail
/// (a root test user can write anywhere, so permissions would not).
#[test]
fn an_edit_published_while_the_store_fails_is_uploaded_once_it_answers() {
    let store = tempfile::tempdir().expect("store");
    let url = file_url(store.path());
    let (publisher, repo) = publisher(&url);
    wait_published(&url);
    let r = replica(&url);
    wait_ready(&r);
    let served = served_generation(&r);
    let blobs = store.path().join("blobs");
    let away = store.path().join("blobs.away");
    std::fs::rename(&blobs, &away).expect("move the blobs away");
    std::fs::write(&blobs, b"not a folder").expect("block the blobs");
    std::fs::write(
        repo.join("auth/while_down.py"),
        "def while_down():\n    return 1\n",
    )
    .expect("write");
    // The run indexes the edit and its upload fails: no new generation.
    let gens = store.path().join("generations");
    let count = || std::fs::read_dir(&gens).map_or(0, |d| d.count());
    let before = count();
    let started = Instant::now();
    loop {
        let (status, _, health) = http(&publisher.addr, "GET", "/health", &[], b"");
        assert_eq!(status, 200, "{health}");
        let v: Value = serde_json::from_str(&health).expect("health json");
        if v["publish"]["error"].is_string() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the publisher never said its upload failed: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        count(),
        before,
        "a generation was published without its blobs"
    );
    std::fs::remove_file(&blobs).expect("unblock");
    std::fs::rename(&away, &blobs).expect("the blobs back");
    let v = once_served(&r, "while_down");
    assert!(generation_of(&v) > served, "{v}");
    let (_, _, health) = http(&publisher.addr, "GET", "/health", &[], b"");
    let v: Value = serde_json::from_str(&health).expect("health json");
    assert!(v["publish"]["error"].is_null(), "{v}");
}

/// One raw HTTP/1.1 exchange, or `None` when the connection fails (a
/// replica, or the balancer's backend, gone).
fn try_http(addr: &str, headers: &[(&str, &str)], body: &[u8]) -> Option<(u16, String, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, head.to_string(), body.to_string()))
}

const JSON_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// A new MCP session through `addr`; its id.
fn initialize(addr: &str) -> Option<String> {
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lb","version":"1"}}}"#;
    let (status, head, _) = try_http(addr, &JSON_HEADERS, init)?;
    (status == 200).then(|| crate::mcp::session_id(&head))
}

/// One tool call in session `sid`: its result, or `None` when the call did
/// not get one (the session unknown where it landed, the replica gone).
fn call_in(addr: &str, sid: &str, id: u64) -> Option<Value> {
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("Mcp-Session-Id", sid));
    headers.push(("MCP-Protocol-Version", "2025-06-18"));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"locate_symbol","arguments":{{"name":"validate_token"}}}}}}"#
    );
    let (status, _, text) = try_http(addr, &headers, body.as_bytes())?;
    if status != 200 {
        return None;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(|v| v["id"] == id && v["result"].is_object())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// HAProxy (Debian's, `make test` installs it) in front of two replicas,
/// sessions kept on one by `Mcp-Session-Id` (docs/DEPLOY.md). One replica is
/// killed while clients call; every call a client retries after starting a
/// new session (what the MCP spec's 404 for an unknown session asks of it)
/// is answered.
#[test]
fn behind_haproxy_a_replica_killed_mid_load_loses_no_retried_call() {
    let haproxy = ["/usr/sbin/haproxy", "/usr/bin/haproxy"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("haproxy is missing: run `make test` (it installs Debian's haproxy)");
    let store = tempfile::tempdir().expect("store");
    let url = store_url(store.path());
    let (_publisher, _repo) = publisher(&url);
    wait_published(&url);
    let (r1, mut r2) = (replica(&url), replica(&url));
    wait_ready(&r1);
    wait_ready(&r2);
    let front = format!("127.0.0.1:{}", free_port());
    let cfg = store.path().join("haproxy.cfg");
    let config = include_str!("../docs/DEPLOY.md")
        .split("```\nglobal")
        .nth(1)
        .and_then(|c| c.split("```").next())
        .map(|c| format!("global{c}"))
        .expect("the HAProxy configuration in docs/DEPLOY.md")
        .replace("10.0.0.11:7411", &r1.addr)
        .replace("10.0.0.12:7411", &r2.addr)
        .replace("bind :7411", &format!("bind {front}"));
    std::fs::write(&cfg, config).expect("write the config");
    let mut lb = std::process::Command::new(haproxy)
        .args(["-f", &cfg.to_string_lossy(), "-db"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start haproxy");
    let started = Instant::now();
    while initialize(&front).is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "haproxy never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let clients: Vec<_> = (0..4)
        .map(|c| {
            let front = front.clone();
            std::thread::spawn(move || {
                let mut sid = initialize(&front).expect("a session");
                let (mut answered, mut new_sessions) = (0, 0);
                for i in 0..60u64 {
                    let id = 100 + i;
                    let mut tries = 0;
                    loop {
                        if let Some(v) = call_in(&front, &sid, id) {
                            assert_eq!(v["result"]["isError"], false, "client {c}: {v}");
                            answered += 1;
                            break;
                        }
                        tries += 1;
                        assert!(tries < 50, "client {c}: call {i} never answered");
                        std::thread::sleep(Duration::from_millis(100));
                        if let Some(s) = initialize(&front) {
                            sid = s;
                            new_sessions += 1;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                (answered, new_sessions)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    r2.kill9();
    let outcomes: Vec<(u32, u32)> = clients
        .into_iter()
        .map(|t| t.join().expect("client"))
        .collect();
    let _ = lb.kill();
    let _ = lb.wait();
    assert!(outcomes.iter().all(|(a, _)| *a == 60), "{outcomes:?}");
    eprintln!("calls answered and sessions started again, per client: {outcomes:?}");
    drop(r1);
}
