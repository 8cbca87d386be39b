//! The MCP server end to end: a real `cruxe serve` (or `cruxe mcp`) process, driven
//! by the official MCP Python SDK (`tests/mcp_client.py`), over fixture copies.
//! Protocol faults are sent as raw HTTP, since no well-behaved client sends them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{copy_tree, cruxe_bin, fixture, s};

pub const TOOLS: &[&str] = &[
    "analyze_impact",
    "explore_tree",
    "find_implementations",
    "find_references",
    "find_related_symbols",
    "get_call_graph",
    "get_code_context",
    "get_file_outline",
    "get_node",
    "get_symbol_hierarchy",
    "index_status",
    "locate_symbol",
    "run_cypher",
    "search_code",
];

/// A running `cruxe serve` over copies of fixtures (outside git, so the ref is `live`).
pub struct Server {
    child: Child,
    pub addr: String,
    /// Holds the repo copies and the data dir for the server's lifetime.
    _tmp: tempfile::TempDir,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL), as a crash or the OOM killer would.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Stops the server as Ctrl-C does; whether it exited cleanly.
    pub fn interrupt(&mut self) -> bool {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        self.child.wait().is_ok_and(|s| s.success())
    }

    /// Stops the server as `kill` and service managers do (SIGTERM); whether it
    /// exited cleanly, and how long that took.
    pub fn terminate(&mut self) -> (bool, Duration) {
        let started = Instant::now();
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let clean = self.child.wait().is_ok_and(|s| s.success());
        (clean, started.elapsed())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves copies of the named fixtures (each repo named after its fixture).
pub fn serve(fixtures: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Server {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut paths = Vec::new();
    for f in fixtures {
        let dest = tmp.path().join(f);
        copy_tree(&fixture(f), &dest);
        paths.push(dest);
    }
    serve_paths(tmp, &paths, extra, env)
}

pub fn serve_paths(
    tmp: tempfile::TempDir,
    paths: &[PathBuf],
    extra: &[&str],
    env: &[(&str, &str)],
) -> Server {
    let mut cmd = Command::new(cruxe_bin());
    cmd.arg("serve")
        .args(paths)
        .args(["--listen", "127.0.0.1:0"]);
    if !extra.contains(&"--data") && !extra.contains(&"--config") {
        cmd.arg("--data").arg(tmp.path().join("data"));
    }
    cmd.args(extra)
        .env("CRUXE_BUFFER_POOL_MB", "128")
        .env("CRUXE_THREADS", "1")
        .env_remove("CRUXE_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn cruxe serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("cruxe serve exited before listening"))
            .expect("read stderr");
        if let Some(rest) = line.split("serving MCP at http://").nth(1) {
            break rest.trim_end_matches("/mcp").to_string();
        }
    };
    // Keep draining the server's log so it never blocks on a full pipe; its
    // warnings and errors go to the test's output (shown when it fails).
    std::thread::spawn(move || {
        for line in lines.by_ref().map_while(Result::ok) {
            if line.contains("WARN") || line.contains("ERROR") || line.contains("failed") {
                eprintln!("server: {line}");
            }
        }
    });
    Server {
        child,
        addr,
        _tmp: tmp,
    }
}

/// Waits until /health says every tool answers from every repo's index.
pub fn wait_ready(server: &Server) {
    wait_ready_with(server, &[]);
}

/// `wait_ready` for a server that wants `headers` (its bearer token): without
/// them `/health` says only that it is up, never whether it is ready.
pub fn wait_ready_with(server: &Server, headers: &[(&str, &str)]) {
    let started = Instant::now();
    loop {
        let (status, _, body) = http(&server.addr, "GET", "/health", headers, b"");
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).expect("health json");
        let repos = v["repos"].as_array().expect("repos");
        if v["ready"] == true {
            return;
        }
        assert!(
            repos.iter().all(|r| r["indexing_status"] != "failed"),
            "indexing failed: {body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not ready: {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The Python interpreter that has the official MCP SDK, pytest and coverage.py
/// (`make test` installs them).
pub fn python() -> String {
    if let Ok(p) = std::env::var("CRUXE_MCP_PYTHON") {
        return p;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let p = format!("{home}/.cache/cruxe-venv/bin/python");
    assert!(
        Path::new(&p).exists(),
        "the MCP Python SDK is missing: run `make test` (it creates {p} with `pip install mcp`) or set CRUXE_MCP_PYTHON"
    );
    p
}

/// Starts a client script through the Python SDK; its report comes on stdout.
pub fn spawn_client(script: Value) -> Child {
    let mut child = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the MCP Python client");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.to_string().as_bytes())
        .expect("write script");
    child
}

/// The pids of the query workers of the server `parent`.
pub fn worker_pids(parent: u32) -> Vec<u32> {
    let parent = parent.to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command's closing parenthesis: state, ppid, …
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1));
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent.as_str()) && cmd.contains("cypher-worker") {
            out.push(pid);
        }
    }
    out
}

/// Runs a client script through the Python SDK and returns its JSON report.
pub fn client(script: Value) -> Value {
    let child = spawn_client(script);
    let out = child.wait_with_output().expect("client output");
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client json")
}

/// Waits until every name has a hierarchy answer (the server caught up), at
/// most `timeout_s` per name.
pub fn wait_answered(server: &Server, names: &[String], timeout_s: u64) {
    let calls: Vec<Value> = names
        .iter()
        .map(|n| json!(["get_symbol_hierarchy", {"symbol_name": n}, {"until": "ok", "timeout_s": timeout_s}]))
        .collect();
    let report = client(json!({"transport": "http", "url": server.url(), "calls": calls}));
    for (v, err) in results(&report) {
        assert!(!err, "{v}");
    }
}

/// Calls tools over HTTP through the SDK; returns each result's structured JSON
/// (checked to equal the text content) and whether it was an error.
pub fn call_all(server: &Server, calls: &[(&str, Value)]) -> Vec<(Value, bool)> {
    let report = client(json!({
        "transport": "http",
        "url": server.url(),
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
    }));
    results(&report)
}

pub fn results(report: &Value) -> Vec<(Value, bool)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            assert_eq!(
                r.get("schema_errors").cloned().unwrap_or(json!([])),
                json!([]),
                "the result breaks its tool's outputSchema: {}",
                r["structured"]
            );
            let structured = r["structured"].clone();
            let text: Value = serde_json::from_str(r["text"].as_str().expect("text content"))
                .expect("text is JSON");
            assert_eq!(
                structured, text,
                "structuredContent and content[0].text differ"
            );
            let meta = &structured["metadata"];
            assert_eq!(meta["cruxe_protocol_version"], "1.0", "{structured}");
            for k in [
                "freshness_status",
                "indexing_status",
                "result_completeness",
                "schema_status",
            ] {
                assert!(meta[k].is_string(), "metadata.{k} missing in {structured}");
            }
            (structured, r["is_error"].as_bool().expect("is_error"))
        })
        .collect()
}

pub fn call(server: &Server, name: &str, args: Value) -> Value {
    let (v, err) = call_all(server, &[(name, args)]).remove(0);
    assert!(!err, "{name} failed: {v}");
    v
}

/// One raw HTTP/1.1 exchange; returns (status, headers, body).
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let _ = s.write_all(req.as_bytes());
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// The `Mcp-Session-Id` an initialize answer's headers carry.
pub fn session_id(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l[15..].trim().to_string())
        })
        .expect("session id")
}

pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|v| v["name"].as_str().expect("name").to_string())
        .collect()
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------

#[test]
fn the_python_sdk_lists_and_calls_every_tool_over_http() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let calls = [
        (
            "get_symbol_hierarchy",
            json!({"symbol_name": "validate", "path": "src/auth/handler.rs"}),
        ),
        (
            "find_related_symbols",
            json!({"symbol_name": "validate", "path": "src/auth/handler.rs"}),
        ),
        ("locate_symbol", json!({"name": "AuthHandler"})),
        ("get_file_outline", json!({"path": "src/auth/handler.rs"})),
        ("explore_tree", json!({})),
        ("get_node", json!({"node_id": "file:src/auth/error.rs"})),
        (
            "run_cypher",
            json!({"query": "MATCH (f:File) RETURN count(*) AS n"}),
        ),
        ("index_status", json!({})),
        ("search_code", json!({"query": "validate token"})),
        (
            "get_code_context",
            json!({"query": "authentication handler", "max_tokens": 500}),
        ),
        // Errors, checked against the schemas like the answers (`results`).
        ("run_cypher", json!({"query": "MATCH (n) DELETE n"})),
        (
            "get_symbol_hierarchy",
            json!({"symbol_name": "nothing_is_named_so"}),
        ),
        // A typo: "did you mean", from the search index.
        ("get_call_graph", json!({"symbol_name": "validat"})),
    ];
    let report = client(json!({
        "transport": "http",
        "url": server.url(),
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
    }));
    assert_eq!(report["server_name"], "cruxe");
    assert!(report["protocol_version"].as_str().expect("version") >= "2025-06-18");
    let mut listed = names(&report["tools"]);
    listed.sort();
    assert_eq!(listed, TOOLS);
    for t in report["tools"].as_array().expect("tools") {
        // A title for people, and hints for clients: every tool only reads.
        assert!(t["title"].as_str().is_some_and(|s| !s.is_empty()), "{t}");
        let hints = &t["annotations"];
        assert_eq!(hints["readOnlyHint"], true, "{t}");
        assert_eq!(hints["openWorldHint"], false, "{t}");
        assert_eq!(hints["destructiveHint"], false, "{t}");
        // Every answer has a schema (the SDK checks each result against it);
        // every answer carries its metadata.
        // It admits the error envelope too (`anyOf`: the answer's fields, or
        // `error`), so that a client checking an error result keeps the error.
        let out = &t["output_schema"];
        assert_eq!(out["type"], "object", "{t}");
        assert!(
            out["anyOf"][0]["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("metadata"))),
            "{t}"
        );
        assert_eq!(
            out["anyOf"][1]["required"],
            json!(["error", "metadata"]),
            "{t}"
        );
        // Portable schemas (what the Inspector's --strict checks): one `type`
        // per schema, no bare `true`, only JSON Schema's own formats.
        for schema in [&t["input_schema"], out] {
            // (`additionalProperties: true` is a map's value, not a schema position.)
            let text = schema
                .to_string()
                .replace("\"additionalProperties\":true", "");
            for bad in [
                "\"type\":[",
                ":true",
                "\"format\":\"uint",
                "\"format\":\"int",
                "\"format\":\"double",
            ] {
                assert!(!text.contains(bad), "{bad} in {}: {text}", t["name"]);
            }
        }
        let schema = &t["input_schema"];
        assert_eq!(schema["type"], "object", "{t}");
        let props = schema["properties"].as_object().expect("properties");
        if t["name"] != "index_status" {
            assert!(
                props.contains_key("repo") && props.contains_key("ref"),
                "{t}"
            );
        }
    }
    let hier = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "get_symbol_hierarchy")
        .expect("tool");
    assert_eq!(hier["input_schema"]["required"], json!(["symbol_name"]));
    let res = results(&report);
    assert_eq!(res.len(), calls.len());
    let (answers, errors) = res.split_at(calls.len() - 3);
    assert_eq!(errors[0].0["error"]["code"], "query_not_read_only");
    assert_eq!(errors[1].0["error"]["code"], "symbol_not_found");
    assert_eq!(errors[1].0["error"]["data"]["suggestions"], json!([]));
    let typo = &errors[2].0["error"];
    assert_eq!(typo["code"], "symbol_not_found");
    assert_eq!(typo["data"]["suggestions"][0]["name"], "validate", "{typo}");
    assert!(
        typo["message"]
            .as_str()
            .is_some_and(|m| m.contains("did you mean `auth::")),
        "{typo}"
    );
    assert!(errors.iter().all(|(_, err)| *err));
    for ((name, _), (v, err)) in calls.iter().zip(answers) {
        assert!(!err, "{name}: {v}");
        assert_eq!(v["metadata"]["indexing_status"], "ready");
        assert_eq!(v["metadata"]["ref"], "live");
        assert_eq!(v["metadata"]["repo"], "rust");
    }
    assert_eq!(res[0].0["hierarchy"][1]["name"], "AuthHandler");
    assert_eq!(res[2].0["results"][0]["kind"], "struct");
    assert!(
        res[5].0["content"]
            .as_str()
            .expect("content")
            .contains("pub enum TokenError")
    );
    assert_eq!(res[6].0["rows"], json!([[6]]));
    assert_eq!(res[7].0["repos"][0]["refs"][0]["files"], 6);
    assert_eq!(res[8].0["results"][0]["name"], "validate_token");
    assert!(res[9].0["estimated_tokens"].as_u64().expect("tokens") <= 500);
    assert!(
        !res[9].0["context_items"]
            .as_array()
            .expect("items")
            .is_empty()
    );
}

#[test]
fn stdio_serves_the_same_tools() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let data = tmp.path().join("data");
    let report = client(json!({
        "transport": "stdio",
        "command": cruxe_bin(),
        "args": ["mcp", repo, "--data", data],
        "calls": [["index_status", {}]],
    }));
    let mut listed = names(&report["tools"]);
    listed.sort();
    assert_eq!(listed, TOOLS);
    let res = results(&report);
    assert!(!res[0].1);
    assert_eq!(res[0].0["repos"][0]["repo"], "python");
    // Within one session: wait for the first index, then ask.
    let report = client(json!({
        "transport": "stdio",
        "command": cruxe_bin(),
        "args": ["mcp", repo, "--data", data],
        "wait_ready": true,
        "calls": [["get_symbol_hierarchy", {"symbol_name": "describe"}]],
    }));
    let answer = results(&report).remove(0);
    let chain: Vec<&str> = answer.0["hierarchy"]
        .as_array()
        .expect("hierarchy")
        .iter()
        .map(|n| n["name"].as_str().expect("name"))
        .collect();
    assert_eq!(chain, ["describe", "Config", "UserService"]);
}

/// Over stdio, a line that is not JSON gets a JSON-RPC parse error (id null)
/// on stdout, and the session goes on: the next request is answered.
#[test]
fn stdio_answers_a_line_that_is_not_json_with_a_parse_error() {
    use std::io::{BufRead, Write};
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("python");
    copy_tree(&fixture("python"), &repo);
    let mut child = std::process::Command::new(cruxe_bin())
        .arg("mcp")
        .arg(&repo)
        .arg("--data")
        .arg(tmp.path().join("data"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "this is not json {{").expect("write");
    writeln!(stdin, "{init}").expect("write");
    stdin.flush().expect("flush");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("JSON");
    assert_eq!(first["error"]["code"], -32700, "{first}");
    assert_eq!(first["id"], Value::Null);
    let second: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("JSON");
    assert_eq!(second["id"], 1, "{second}");
    assert_eq!(second["result"]["serverInfo"]["name"], "cruxe");
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}

/// structure-nav-spec.md, User Story 2, scenarios 1-5.
#[test]
fn symbol_hierarchy_user_story() {
    let server = serve(&["rust", "python"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            // 1: validate -> impl AuthHandler -> file root
            (
                "get_symbol_hierarchy",
                json!({"repo": "rust", "symbol_name": "validate", "path": "src/auth/handler.rs", "direction": "ancestors"}),
            ),
            // 2: a class with three methods
            (
                "get_symbol_hierarchy",
                json!({"repo": "python", "symbol_name": "UserService", "direction": "descendants"}),
            ),
            // 3: a name in several files, scoped by path
            (
                "get_symbol_hierarchy",
                json!({"repo": "python", "symbol_name": "__init__"}),
            ),
            (
                "get_symbol_hierarchy",
                json!({"repo": "python", "symbol_name": "__init__", "path": "auth/jwt.py"}),
            ),
            // 4: unknown symbol
            (
                "get_symbol_hierarchy",
                json!({"repo": "python", "symbol_name": "no_such_symbol"}),
            ),
            // 5: a top-level function
            (
                "get_symbol_hierarchy",
                json!({"repo": "python", "symbol_name": "main"}),
            ),
            // several repos served: repo is required
            ("get_symbol_hierarchy", json!({"symbol_name": "main"})),
            (
                "get_symbol_hierarchy",
                json!({"repo": "nope", "symbol_name": "main"}),
            ),
        ],
    );
    let (v, err) = &r[0];
    assert!(!err, "{v}");
    let h = v["hierarchy"].as_array().expect("hierarchy");
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0]["name"].as_str(), h[0]["kind"].as_str()),
        (Some("validate"), Some("method"))
    );
    assert_eq!(
        (h[1]["name"].as_str(), h[1]["kind"].as_str()),
        (Some("AuthHandler"), Some("impl"))
    );
    for n in h {
        for k in [
            "kind",
            "name",
            "line_start",
            "line_end",
            "symbol_id",
            "qualified_name",
            "path",
            "depth",
        ] {
            assert!(!n[k].is_null(), "{k} missing in {n}");
        }
        // Trimmed from list items (issue 19): get_node shows it.
        assert!(n.get("symbol_stable_id").is_none(), "{n}");
    }
    assert_eq!(
        (h[0]["line_start"].as_i64(), h[0]["line_end"].as_i64()),
        (Some(15), Some(17))
    );
    assert_eq!(v["file"], "src/auth/handler.rs");
    assert_eq!(v["chain_length"], 2);

    let (v, err) = &r[1];
    assert!(!err, "{v}");
    let root = &v["hierarchy"][0];
    assert_eq!(root["name"], "UserService");
    let methods: Vec<&str> = root["children"]
        .as_array()
        .expect("children")
        .iter()
        .filter(|c| c["kind"] == "method")
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(methods, ["create", "find", "delete"]);
    assert_eq!(
        v["chain_length"], 7,
        "UserService, Config, describe, create, normalize, find, delete"
    );

    let (v, err) = &r[2];
    assert!(err);
    assert_eq!(err_code(v), "ambiguous_symbol");
    let paths: Vec<&str> = v["error"]["data"]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| c["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, ["auth/handler.py", "auth/jwt.py"]);
    let (v, err) = &r[3];
    assert!(!err, "{v}");
    assert_eq!(v["hierarchy"][0]["path"], "auth/jwt.py");
    assert_eq!(v["hierarchy"][1]["name"], "Claims");

    let (v, err) = &r[4];
    assert!(err);
    assert_eq!(err_code(v), "symbol_not_found");
    assert_eq!(v["error"]["data"]["ref"], "live");
    assert_eq!(v["error"]["data"]["repo"], "python");

    let (v, err) = &r[5];
    assert!(!err, "{v}");
    assert_eq!(v["chain_length"], 1);
    assert_eq!(v["hierarchy"].as_array().expect("h").len(), 1);

    let (v, err) = &r[6];
    assert!(err);
    assert_eq!(err_code(v), "repo_not_found");
    let mut repos: Vec<&str> = v["error"]["data"]["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .map(|r| r.as_str().expect("s"))
        .collect();
    repos.sort();
    assert_eq!(repos, ["python", "rust"]);
    assert_eq!(err_code(&r[7].0), "repo_not_found");
}

/// structure-nav-spec.md, User Story 3, scenarios 1-5.
#[test]
fn related_symbols_user_story() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "scope": "file"}),
            ),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "scope": "module", "limit": 100}),
            ),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "scope": "module", "limit": 5}),
            ),
            ("find_related_symbols", json!({"symbol_name": "TokenError"})),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "scope": "package", "limit": 100}),
            ),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "limit": 0}),
            ),
        ],
    );
    let rel = |v: &Value| -> Vec<(String, String)> {
        v["related"]
            .as_array()
            .expect("related")
            .iter()
            .map(|x| {
                (
                    x["relation"].as_str().expect("rel").to_string(),
                    x["qualified_name"].as_str().expect("qn").to_string(),
                )
            })
            .collect()
    };
    // 1 (ranking): what it calls comes first, then the impl enclosing the
    // method and its other member, what its file imports; then the rest of
    // the file (10 symbols), its field last.
    let (v, err) = &r[0];
    assert!(!err, "{v}");
    let all = rel(v);
    assert_eq!(
        all[..3],
        [
            (
                "callee".to_string(),
                "auth::jwt::validate_token".to_string()
            ),
            (
                "parent".to_string(),
                "auth::handler::AuthHandler".to_string()
            ),
            (
                "same_type".to_string(),
                "auth::handler::AuthHandler::new".to_string()
            ),
        ],
        "{v}"
    );
    assert_eq!(v["related"][1]["kind"], "impl");
    let imported: Vec<String> = all
        .iter()
        .filter(|(r, _)| r == "imported")
        .map(|(_, q)| q.clone())
        .collect();
    // validate_token came as a callee, closer than an import.
    assert_eq!(imported, ["auth::jwt::Claims"]);
    let file: Vec<_> = all.iter().filter(|(r, _)| r == "same_file").collect();
    assert_eq!(file.len(), 6, "{v}");
    assert!(
        !all.iter()
            .any(|(_, q)| q == "auth::handler::AuthHandler::validate")
    );
    assert_eq!(v["scope_used"], "file");

    // 2 and 3: sibling files of the auth module (jwt, error, mod).
    let (v, err) = &r[1];
    assert!(!err, "{v}");
    let module: Vec<String> = rel(v)
        .into_iter()
        .filter(|(r, _)| r == "same_module")
        .map(|(_, q)| q)
        .collect();
    assert!(
        module.contains(&"auth::error::TokenError".to_string()),
        "{module:?}"
    );
    // In rank order.
    let ranked: Vec<(String, String)> = v["related"]
        .as_array()
        .expect("related")
        .iter()
        .map(|x| (s(&x["relation"]), s(&x["kind"])))
        .collect();
    let rank = [
        "callee",
        "caller",
        "parent",
        "same_type",
        "imported",
        "same_file",
        "same_module",
        "same_package",
    ];
    let order: Vec<usize> = ranked
        .iter()
        .map(|(r, _)| rank.iter().position(|x| x == r).expect("a known relation"))
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{ranked:?}");

    // 4: a limit keeps the best ones.
    let (v, err) = &r[2];
    assert!(!err, "{v}");
    assert_eq!(v["related"].as_array().expect("r").len(), 5);
    assert_eq!(rel(v)[..], rel(&r[1].0)[..5]);
    assert_eq!(v["metadata"]["result_completeness"], "truncated");

    // 5: a symbol whose file holds only it and its variants, and imports nothing.
    let (v, err) = &r[3];
    assert!(!err, "{v}");
    assert_eq!(
        rel(v),
        vec![
            (
                "same_type".to_string(),
                "auth::error::TokenError::Expired".to_string()
            ),
            (
                "same_type".to_string(),
                "auth::error::TokenError::Malformed".to_string()
            ),
        ]
    );
    assert_eq!(v["scope_used"], "file");
    assert_eq!(v["anchor"]["name"], "TokenError");

    // package scope reaches other directories of the crate (lib.rs, user.rs).
    let (v, err) = &r[4];
    assert!(!err, "{v}");
    let pkg: Vec<String> = rel(v)
        .into_iter()
        .filter(|(r, _)| r == "same_package")
        .map(|(_, q)| q)
        .collect();
    assert!(pkg.contains(&"user::UserService".to_string()), "{pkg:?}");
    assert!(pkg.contains(&"start".to_string()), "{pkg:?}");

    assert_eq!(err_code(&r[5].0), "invalid_input");
}

/// A file's constants, variables and other types' fields relate least: they
/// come after everything else, other files of the module included.
#[test]
fn related_symbols_put_a_files_values_last() {
    let server = serve(&["go"], &[], &[]);
    wait_ready(&server);
    let v = call(
        &server,
        "find_related_symbols",
        json!({"symbol_name": "Issuer", "path": "auth/claims.go", "scope": "module", "limit": 100}),
    );
    let kinds: Vec<(String, String, String)> = v["related"]
        .as_array()
        .expect("related")
        .iter()
        .map(|x| (s(&x["relation"]), s(&x["kind"]), s(&x["name"])))
        .collect();
    let value = |k: &str| matches!(k, "const" | "var" | "field");
    let first_value = kinds
        .iter()
        .position(|(r, k, _)| r == "same_file" && value(k))
        .expect("a value of the file");
    assert!(
        kinds[first_value..]
            .iter()
            .all(|(r, k, _)| r == "same_file" && value(k)),
        "{kinds:?}"
    );
    assert!(
        kinds[..first_value]
            .iter()
            .any(|(r, _, _)| r == "same_module"),
        "{kinds:?}"
    );
    assert!(
        kinds.iter().any(|(_, k, n)| k == "const" && n == "MaxAge"),
        "{kinds:?}"
    );
}

/// tree-explorer.md's acceptance criteria.
#[test]
fn explore_tree_and_get_node() {
    let server = serve(&["typescript", "go"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "explore_tree",
                json!({"repo": "typescript", "pattern": ".", "max_depth": 1}),
            ),
            (
                "explore_tree",
                json!({"repo": "typescript", "pattern": "src/auth", "max_depth": 0, "detail": "max"}),
            ),
            (
                "explore_tree",
                json!({"repo": "go", "pattern": "AuthHandler", "detail": "min"}),
            ),
            (
                "explore_tree",
                json!({"repo": "go", "pattern": "auth/handler.go", "max_depth": 1}),
            ),
            (
                "explore_tree",
                json!({"repo": "go", "pattern": ".", "max_depth": 0, "limit": 3}),
            ),
            ("get_node", json!({"repo": "go", "node_id": "file:main.go"})),
            ("get_node", json!({"repo": "go", "node_id": "nonsense"})),
            (
                "get_node",
                json!({"repo": "go", "node_id": "struct:auth/handler.go:nope"}),
            ),
            (
                "get_node",
                json!({"repo": "go", "node_id": "file:../../etc/passwd"}),
            ),
            ("get_node", json!({"repo": "go", "node_id": "dir:auth"})),
        ],
    );
    // Root, one level: top-level entries only, no grandchildren.
    let (v, err) = &r[0];
    assert!(!err, "{v}");
    let top: Vec<&str> = v["tree"]
        .as_array()
        .expect("tree")
        .iter()
        .map(|n| n["node_id"].as_str().expect("id"))
        .collect();
    assert_eq!(top, ["dir:src"]);
    assert!(
        v["tree"][0].get("children").is_none(),
        "max_depth 1 shows no grandchildren"
    );

    // A directory, unlimited depth, max detail: files -> classes -> members with
    // signatures and lines, and every node id readable by get_node.
    let (v, err) = &r[1];
    assert!(!err, "{v}");
    let mut ids = Vec::new();
    fn walk(n: &Value, ids: &mut Vec<String>) {
        ids.push(n["node_id"].as_str().expect("id").to_string());
        if n["type"] != "dir" && n["type"] != "file" {
            assert!(
                n["signature"].is_string() && n["line"].is_i64(),
                "max detail: {n}"
            );
        }
        for c in n["children"].as_array().into_iter().flatten() {
            walk(c, ids);
        }
    }
    walk(&v["tree"][0], &mut ids);
    assert_eq!(ids[0], "dir:src/auth");
    assert!(
        ids.iter().any(|i| i.starts_with("class:src/auth/")),
        "{ids:?}"
    );
    assert!(
        ids.iter().any(|i| i.starts_with("method:src/auth/")),
        "{ids:?}"
    );
    let symbol_ids: Vec<(String, Value)> = ids
        .iter()
        .filter(|i| !i.starts_with("dir:"))
        .map(|i| (i.clone(), json!({"repo": "typescript", "node_id": i})))
        .collect();
    let calls: Vec<(&str, Value)> = symbol_ids
        .iter()
        .map(|(_, a)| ("get_node", a.clone()))
        .collect();
    let mut by_symbol_id: Vec<(Value, (&str, Value))> = Vec::new();
    for ((id, _), (node, err)) in symbol_ids.iter().zip(call_all(&server, &calls)) {
        assert!(!err, "get_node {id}: {node}");
        assert_eq!(&node["node_id"], id);
        let content = node["content"].as_str().expect("content");
        assert!(!content.is_empty(), "{id}");
        if node["type"] != "file" {
            assert!(
                content.contains(node["name"].as_str().expect("name")),
                "{id}: {content}"
            );
            assert!(node["metadata"]["signature"].is_string());
            assert_eq!(node["metadata"]["language"], "typescript");
            let symbol_id = node["metadata"]["symbol_id"].clone();
            let args = json!({"repo": "typescript", "node_id": symbol_id});
            by_symbol_id.push((node, ("get_node", args)));
        }
    }
    // The same nodes by the symbol_id the other tools give: the same answer.
    assert!(by_symbol_id.len() > 3, "{by_symbol_id:?}");
    let calls: Vec<(&str, Value)> = by_symbol_id.iter().map(|(_, c)| c.clone()).collect();
    for ((want, _), (got, err)) in by_symbol_id.iter().zip(call_all(&server, &calls)) {
        assert!(!err, "get_node by symbol_id: {got}");
        assert_eq!(got["node_id"], want["node_id"]);
        assert_eq!(got["content"], want["content"]);
        assert_eq!(got["line_start"], want["line_start"]);
    }

    // A name search: the type with its members, under its file; min detail.
    let (v, err) = &r[2];
    assert!(!err, "{v}");
    assert_eq!(v["meta"]["mode"], "search");
    let file = &v["tree"][0];
    assert_eq!(file["node_id"], "file:auth/handler.go");
    let hit = &file["children"][0];
    assert_eq!(hit["name"], "AuthHandler");
    assert!(
        hit.get("signature").is_none(),
        "min detail has no signature"
    );
    let members: Vec<&str> = hit["children"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["name"].as_str().expect("n"))
        .collect();
    assert!(members.contains(&"Validate"), "{members:?}");

    // A file pattern with max_depth 1: its top-level symbols, none below.
    let (v, err) = &r[3];
    assert!(!err, "{v}");
    assert_eq!(v["tree"][0]["node_id"], "file:auth/handler.go");
    for c in v["tree"][0]["children"].as_array().expect("children") {
        assert!(c.get("children").is_none(), "{c}");
    }

    // A node limit truncates, and says so: the tree is built one node past
    // the page, so its total is a lower bound.
    let (v, err) = &r[4];
    assert!(!err, "{v}");
    assert_eq!(v["meta"]["returned"], 3);
    assert_eq!(v["meta"]["total_nodes"], 4);
    assert_eq!(v["meta"]["total_exact"], false);
    assert_eq!(v["meta"]["next_cursor"], "3");
    assert_eq!(v["meta"]["truncated"], true);
    assert_eq!(v["metadata"]["result_completeness"], "truncated");

    let (v, err) = &r[5];
    assert!(!err, "{v}");
    assert!(
        v["content"]
            .as_str()
            .expect("content")
            .starts_with("package main"),
        "{v}"
    );
    assert_eq!(v["line_start"], 1);
    assert_eq!(err_code(&r[6].0), "invalid_input");
    assert_eq!(err_code(&r[7].0), "node_not_found");
    assert_eq!(err_code(&r[8].0), "invalid_input");
    let (v, err) = &r[9];
    assert!(!err, "{v}");
    assert_eq!(
        v["children"],
        json!(["file:auth/claims.go", "file:auth/handler.go"])
    );
}

#[test]
fn run_cypher_reads_and_never_writes() {
    let server = serve(&["python"], &["--query-timeout-ms", "1000"], &[]);
    wait_ready(&server);
    let writes = [
        "CREATE (:Repo {name: 'x', root: 'y'})",
        "MATCH (s:Symbol) SET s.name = 'x' RETURN count(*)",
        "MATCH (s:Symbol) DETACH DELETE s",
        "MERGE (r:Repo {name: 'y'}) RETURN r",
        "COPY (MATCH (s:Symbol) RETURN s.name) TO '/tmp/cruxe-leak.csv'",
        "LOAD FROM '/etc/passwd' RETURN *",
        "DROP TABLE Symbol",
        "CALL threads = 1",
        "EXPORT DATABASE '/tmp/cruxe-export'",
    ];
    let mut calls: Vec<(&str, Value)> = writes
        .iter()
        .map(|q| ("run_cypher", json!({"query": q})))
        .collect();
    calls.push(("run_cypher", json!({"query": "MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref RETURN s.name AS name ORDER BY name LIMIT 3"})));
    calls.push(("run_cypher", json!({"query": "MATCH (s:Symbol) WHERE s.kind = $kind RETURN s.name AS name ORDER BY name", "params": {"kind": "class"}})));
    calls.push((
        "run_cypher",
        json!({"query": "MATCH (s:Symbol) RETURN s.name", "limit": 2}),
    ));
    calls.push(("run_cypher", json!({"query": "MATCH (s:Symbl) RETURN s"})));
    calls.push(("run_cypher", json!({"query": "MATCH (a:Symbol), (b:Symbol), (c:Symbol), (d:Symbol), (e:Symbol), (f:Symbol), (g:Symbol) WHERE a.line_start + b.line_start + c.line_start + d.line_start + e.line_start + f.line_start + g.line_start = -1 RETURN count(*)"})));
    calls.push((
        "run_cypher",
        json!({"query": "MATCH (s:Symbol) RETURN s.name AS set, s.kind AS `create` LIMIT 1"}),
    ));
    calls.push((
        "run_cypher",
        json!({"query": "MATCH (s:Symbol) RETURN count(*) AS n"}),
    ));
    let before = call(
        &server,
        "run_cypher",
        json!({"query": "MATCH (s:Symbol) RETURN count(*) AS n"}),
    );
    let r = call_all(&server, &calls);
    for (i, q) in writes.iter().enumerate() {
        assert!(r[i].1, "{q} was not refused: {}", r[i].0);
        assert_eq!(err_code(&r[i].0), "query_not_read_only", "{q}");
    }
    assert!(!Path::new("/tmp/cruxe-leak.csv").exists());
    let n = writes.len();
    assert_eq!(r[n].0["columns"], json!(["name"]));
    assert_eq!(
        r[n].0["rows"],
        json!([["AuthHandler"], ["Claims"], ["Config"]])
    );
    assert_eq!(
        r[n + 1].0["rows"],
        json!([["AuthHandler"], ["Claims"], ["Config"], ["UserService"]])
    );
    assert_eq!(r[n + 2].0["row_count"], 2);
    assert_eq!(r[n + 2].0["truncated"], true);
    assert_eq!(r[n + 2].0["metadata"]["result_completeness"], "truncated");
    assert_eq!(err_code(&r[n + 3].0), "query_invalid");
    assert!(
        r[n + 3].0["error"]["message"]
            .as_str()
            .expect("m")
            .contains("Symbl")
    );
    assert_eq!(err_code(&r[n + 4].0), "query_timeout", "{}", r[n + 4].0);
    assert!(
        !r[n + 5].1,
        "words in aliases are not writes: {}",
        r[n + 5].0
    );
    assert_eq!(r[n + 6].0["rows"], before["rows"], "nothing changed");
}

#[test]
fn bad_requests_get_clean_errors_and_the_server_keeps_serving() {
    let server = serve(&["rust"], &["--query-timeout-ms", "2000"], &[]);
    wait_ready(&server);
    let a = server.addr.clone();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let post = |body: &[u8], extra: &[(&str, &str)]| {
        let mut h: Vec<(&str, &str)> = json_headers.to_vec();
        h.extend_from_slice(extra);
        http(&a, "POST", "/mcp", &h, body)
    };
    // Malformed JSON and a non-JSON-RPC body: JSON-RPC parse / invalid request errors.
    for (body, code) in [
        (&b"{not json"[..], -32700),
        (b"", -32700),
        (br#"{"hello": "world"}"#, -32600),
        (br#"{"jsonrpc": "1.0", "method": "ping", "id": 1}"#, -32600),
        (b"[1, 2]", -32600),
        (b"42", -32600),
    ] {
        let (status, _, text) = post(body, &[]);
        assert_eq!(status, 400, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(v["jsonrpc"], "2.0", "{text}");
        assert_eq!(v["id"], Value::Null, "{text}");
        assert_eq!(v["error"]["code"], code, "{text}");
    }
    // An oversized body is refused before it is read.
    let big = vec![b' '; 5 * 1024 * 1024];
    let (status, _, _) = post(&big, &[]);
    assert_eq!(status, 413);
    // A foreign browser origin and a foreign Host are refused (DNS rebinding).
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (status, _, _) = post(init, &[("Origin", "https://evil.example.com")]);
    assert_eq!(status, 403);
    let (status, _, body) = post(init, &[("Origin", "http://localhost:3000")]);
    assert_eq!(status, 200, "{body}");

    // A session, then an unknown method, an unknown tool and wrong argument types.
    let (_, head, _) = post(init, &[]);
    let sid = session_id(&head);
    let with_session = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    post(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &with_session,
    );
    let (_, _, body) = post(
        br#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
        &with_session,
    );
    assert!(body.contains("-32601"), "unknown method: {body}");
    let (_, _, body) = post(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#, &with_session);
    assert!(
        body.contains("-32602") && body.contains("tool not found"),
        "unknown tool: {body}"
    );
    let (_, _, body) = post(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_symbol_hierarchy","arguments":{"symbol_name":42}}}"#, &with_session);
    assert!(
        body.contains(r#"\"code\":\"invalid_input\""#) && body.contains(r#""isError":true"#),
        "wrong argument type: {body}"
    );
    let (_, _, body) = post(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_symbol_hierarchy","arguments":{"symbol_name":"x","direction":"sideways"}}}"#, &with_session);
    assert!(
        body.contains(r#"\"code\":\"invalid_input\""#),
        "bad enum value: {body}"
    );
    let (_, _, body) = post(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"locate_symbol","arguments":{"name":"x","bogus":1}}}"#, &with_session);
    assert!(
        body.contains(r#"\"code\":\"invalid_input\""#),
        "unknown argument: {body}"
    );

    // Still serving.
    let (status, _, _) = http(&a, "GET", "/health", &[], b"");
    assert_eq!(status, 200);
    let v = call(&server, "locate_symbol", json!({"name": "validate_token"}));
    assert_eq!(v["results"][0]["path"], "src/auth/jwt.rs");
}

#[test]
fn tool_input_errors_use_the_contract_codes() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            ("get_file_outline", json!({"path": "src/nope.rs"})),
            ("get_file_outline", json!({"path": "/etc/passwd"})),
            ("get_file_outline", json!({"path": "src/../../x"})),
            (
                "locate_symbol",
                json!({"name": "AuthHandler", "ref": "release-9"}),
            ),
            ("locate_symbol", json!({"name": "   "})),
            ("locate_symbol", json!({"name": "authhandler"})),
            (
                "locate_symbol",
                json!({"name": "auth::jwt::validate_token"}),
            ),
            (
                "locate_symbol",
                json!({"name": "AuthHandler", "kind": "impl", "limit": 1}),
            ),
            ("explore_tree", json!({"max_depth": -1})),
            (
                "get_symbol_hierarchy",
                json!({"symbol_name": "AuthHandler", "direction": "descendants"}),
            ),
        ],
    );
    assert_eq!(err_code(&r[0].0), "file_not_found");
    assert_eq!(r[0].0["error"]["data"]["path"], "src/nope.rs");
    assert_eq!(err_code(&r[1].0), "invalid_input");
    assert_eq!(err_code(&r[2].0), "invalid_input");
    assert_eq!(err_code(&r[3].0), "ref_not_indexed");
    assert_eq!(r[3].0["error"]["data"]["indexed_refs"], json!(["live"]));
    assert_eq!(err_code(&r[4].0), "invalid_input");
    assert_eq!(r[5].0["exact"], false);
    assert_eq!(r[5].0["results"][0]["name"], "AuthHandler");
    assert_eq!(
        r[6].0["results"][0]["qualified_name"],
        "auth::jwt::validate_token"
    );
    assert_eq!(r[7].0["results"].as_array().expect("r").len(), 1);
    assert_eq!(r[7].0["total_found"], 2);
    assert_eq!(r[7].0["results"][0]["kind"], "impl");
    assert_eq!(err_code(&r[8].0), "invalid_input");
    // A struct's descendants include its impl blocks and their methods.
    let kids: Vec<&str> = r[9].0["hierarchy"][0]["children"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| c["signature"].as_str().expect("s"))
        .collect();
    assert_eq!(
        kids,
        ["impl AuthHandler", "impl Authenticator for AuthHandler"]
    );
}

#[test]
fn serve_answers_while_it_indexes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("big");
    for i in 0..3000 {
        let dir = repo.join(format!("pkg{}", i % 30));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("m{i}.py")),
            format!("class C{i}:\n    def run(self):\n        return {i}\n"),
        )
        .expect("write");
    }
    let data = tmp.path().join("data");
    let server = serve_paths_with_data(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &data,
    );
    let (status, _, body) = http(&server.addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200);
    assert!(
        body.contains("\"indexing\""),
        "the first index is still running: {body}"
    );
    let r = call_all(
        &server,
        &[
            ("index_status", json!({})),
            ("locate_symbol", json!({"name": "C7"})),
        ],
    );
    let (status_v, _) = &r[0];
    if status_v["repos"][0]["indexing_status"] == "indexing" {
        assert!(
            status_v["repos"][0]["job"]["phase"].is_string(),
            "{status_v}"
        );
        assert_eq!(status_v["metadata"]["freshness_status"], "syncing");
        // Unless the first index committed between the two calls, a tool says so.
        let (v, err) = &r[1];
        if *err {
            assert_eq!(err_code(v), "index_not_ready", "{v}");
            assert_eq!(v["metadata"]["indexing_status"], "indexing");
        }
    }
    wait_ready(&server);
    let v = call(&server, "locate_symbol", json!({"name": "C7"}));
    assert_eq!(v["results"][0]["path"], "pkg7/m7.py");
    assert_eq!(v["metadata"]["freshness_status"], "fresh");
    drop(server);

    // Restarted on the same data dir, it answers from the existing index at once
    // while it checks for changes.
    let server = serve_paths_with_data(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &data,
    );
    let v = call(&server, "locate_symbol", json!({"name": "C2999"}));
    assert_eq!(v["results"][0]["path"], "pkg29/m2999.py");
}

/// One meaning of ready: the "is ready" line (and `/health`'s `ready`) come
/// only once every tool answers from the first index, `run_cypher` included:
/// its workers read a snapshot made after the run's checkpoint, so the line
/// waits for that snapshot. On a two-repo server each repo says it once, and
/// `index_status`'s envelope says ready.
#[test]
fn the_ready_line_means_every_tool_answers() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    copy_tree(&fixture("rust"), &a);
    copy_tree(&fixture("python"), &b);
    let data = tmp.path().join("data");
    let mut child = Command::new(cruxe_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .args([&a, &b])
        .env("CRUXE_THREADS", "1")
        .env_remove("CRUXE_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut addr = String::new();
    let mut ready = Vec::new();
    while ready.len() < 2 {
        let line = lines
            .next()
            .expect("the server ended before both repos were ready")
            .expect("read");
        if let Some(rest) = line.split("serving MCP at http://").nth(1) {
            addr = rest.trim_end_matches("/mcp").to_string();
        }
        if line.contains(" is ready: ") {
            // At this line the snapshot run_cypher reads is there.
            let snapshots = std::fs::read_dir(data.join("snapshots"))
                .map(|d| d.count())
                .unwrap_or(0);
            assert!(snapshots > 0, "ready before run_cypher can read: {line}");
            ready.push(line);
        }
    }
    std::thread::spawn(move || for _ in lines.by_ref() {});
    let server = Server {
        child,
        addr,
        _tmp: tmp,
    };
    let (status, _, body) = http(&server.addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200, "{body}");
    let health: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(health["ready"], true, "{body}");
    let r = call_all(
        &server,
        &[
            (
                "run_cypher",
                json!({"repo": "a", "query": "MATCH (s:Symbol) RETURN count(*) AS n"}),
            ),
            (
                "get_symbol_hierarchy",
                json!({"repo": "b", "symbol_name": "validate_token"}),
            ),
            ("index_status", json!({})),
        ],
    );
    for (v, err) in &r {
        assert!(!err, "{v}");
    }
    assert!(
        r[0].0["rows"][0][0].as_i64().unwrap_or(0) > 10,
        "{}",
        r[0].0
    );
    assert_eq!(r[2].0["metadata"]["indexing_status"], "ready", "{}", r[2].0);
}

pub fn serve_paths_with_data(tmp: tempfile::TempDir, paths: &[PathBuf], data: &Path) -> Server {
    let data = data.to_string_lossy().into_owned();
    serve_paths(tmp, paths, &["--data", &data], &[])
}

#[test]
fn a_token_guards_the_server_and_is_required_off_loopback() {
    let out = Command::new(cruxe_bin())
        .args(["serve", "--listen", "0.0.0.0:0"])
        .arg(fixture("go"))
        .args(["--data"])
        .arg(tempfile::tempdir().expect("tmp").path())
        .env_remove("CRUXE_TOKEN")
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a bearer token"));

    let server = serve(&["go"], &[], &[("CRUXE_TOKEN", "s3cret-token")]);
    // A load balancer checks /health without the secret: it learns that the
    // server is up, and nothing else.
    for auth in [None, Some("Bearer wrong")] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let (status, _, body) = http(&server.addr, "GET", "/health", &headers, b"");
        assert_eq!(status, 200, "{auth:?}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v, serde_json::json!({"status": "ok"}), "{auth:?}");
    }
    let (status, _, body) = http(
        &server.addr,
        "GET",
        "/health",
        &[("Authorization", "Bearer s3cret-token")],
        b"",
    );
    assert_eq!(status, 200);
    assert!(body.contains("\"repos\""), "{body}");
    let (status, head, body) = http(
        &server.addr,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(status, 401);
    // The refusal says how to pass the token (a client would try OAuth).
    assert!(
        body.contains("`Authorization: Bearer <token>`") && body.contains("--token-file"),
        "{body}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer realm=\"cruxe\", error=\"invalid_token\""),
        "{head}"
    );
}

/// Each tool's JSON on the fixtures, reviewed with `cargo insta review`. Fields that
/// change from run to run (commit, times, temp paths) are redacted.
#[test]
fn snapshots_of_every_tool() {
    let server = serve(&["rust", "typescript"], &[], &[]);
    wait_ready(&server);
    let calls = [
        (
            "get_symbol_hierarchy",
            json!({"repo": "rust", "symbol_name": "validate", "path": "src/auth/handler.rs"}),
        ),
        (
            "get_symbol_hierarchy",
            json!({"repo": "rust", "symbol_name": "AuthHandler", "direction": "descendants"}),
        ),
        (
            "find_related_symbols",
            json!({"repo": "rust", "symbol_name": "validate", "path": "src/auth/handler.rs", "scope": "module", "limit": 8}),
        ),
        (
            "locate_symbol",
            json!({"repo": "typescript", "name": "Router"}),
        ),
        (
            "get_file_outline",
            json!({"repo": "typescript", "path": "src/router.ts"}),
        ),
        (
            "explore_tree",
            json!({"repo": "typescript", "pattern": ".", "max_depth": 3, "detail": "max"}),
        ),
        (
            "explore_tree",
            json!({"repo": "rust", "pattern": "validate"}),
        ),
        (
            "get_node",
            json!({"repo": "rust", "node_id": "method:src/auth/handler.rs:auth::handler::AuthHandler::validate"}),
        ),
        (
            "run_cypher",
            json!({"repo": "rust", "query": "MATCH (f:File)-[i:IMPORTS]->(t) WHERE f.repo = $repo RETURN f.path AS file, i.to_name AS to_name, label(t) AS target ORDER BY file, to_name"}),
        ),
        ("index_status", json!({"repo": "rust"})),
        (
            "get_symbol_hierarchy",
            json!({"repo": "rust", "symbol_name": "missing"}),
        ),
        (
            "search_code",
            json!({"repo": "typescript", "query": "router handler", "limit": 5}),
        ),
        (
            "get_code_context",
            json!({"repo": "rust", "query": "validate token", "strategy": "depth", "max_tokens": 120}),
        ),
    ];
    let names = [
        "hierarchy_ancestors",
        "hierarchy_descendants",
        "related_module",
        "locate_symbol",
        "file_outline",
        "explore_tree_root",
        "explore_tree_search",
        "get_node",
        "run_cypher",
        "index_status",
        "error_symbol_not_found",
        "search_code",
        "code_context_depth",
    ];
    for ((v, _), name) in call_all(&server, &calls).into_iter().zip(names) {
        insta::assert_json_snapshot!(format!("tool_{name}"), v, {
            ".repos[].root" => "[root]",
            ".repos[].data_dir" => "[data_dir]",
            // landlock+nofile here; `none` on a kernel without Landlock.
            ".repos[].cypher_sandbox" => "[sandbox]",
            ".repos[].last_run.seconds" => "[seconds]",
            ".repos[].refs[].last_indexed" => "[time]",
            ".repos[].refs[].commit" => "[commit]",
        });
    }
}

/// The contract's token estimate of one context item, recomputed from the JSON
/// the client got: the larger of `ceil(words × 1.3)` and o200k_base's count.
fn estimate(bpe: &tiktoken_rs::CoreBPE, item: &Value) -> u64 {
    let json = item.to_string();
    let words = json.split_whitespace().count() as u64;
    ((words * 13).div_ceil(10)).max(bpe.encode_ordinary(&json).len() as u64)
}

/// A TypeScript module as a bundler leaves it: declarations side by side on
/// a few very long lines, no indentation, short names.
fn minified_ts(dir: &Path) {
    std::fs::create_dir_all(dir.join("dist")).expect("mkdir");
    let words = ["auth", "token", "user", "config", "handler", "claims"];
    let mut text = String::new();
    for (i, w) in words.iter().cycle().take(48).enumerate() {
        text.push_str(&format!(
            "export function {w}Step{i}(a,b){{const c=a.map(d=>d*{i}).filter(e=>e>b);if(c.length>{i}){{return c.reduce((f,g)=>f+g,0)}}return validate{w}(c,\"{w}-{i}\")}}"
        ));
        if i % 8 == 7 {
            text.push('\n');
        }
    }
    for w in words {
        text.push_str(&format!(
            "export const validate{w}=(x,y)=>x.length>0&&y!==\"\";"
        ));
    }
    std::fs::write(dir.join("dist/bundle.ts"), text).expect("write");
    std::fs::write(dir.join("package.json"), "{\"name\":\"mini\"}").expect("write");
}

/// get_code_context never goes over its budget, in the tokens a model would
/// pay: random queries × budgets 1..10000 × both strategies, on Go (tabs),
/// Python and minified TypeScript. The whole `content[0].text`, counted by
/// o200k_base, stays within `max_tokens` plus what the answer costs with no
/// items (its metadata block) and a separator per item; `estimated_tokens` is
/// the sum of the items' estimates.
#[test]
fn code_context_fits_every_budget() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut paths = Vec::new();
    for f in ["go", "python"] {
        let dest = tmp.path().join(f);
        copy_tree(&fixture(f), &dest);
        paths.push(dest);
    }
    // A long tab-indented Go function: a depth answer's body is cut to fit.
    let mut big = String::from(
        "package auth\n\n// ValidateTokenChain checks each token of a chain.\nfunc ValidateTokenChain(tokens []string) error {\n",
    );
    for i in 0..120 {
        big.push_str(&format!(
            "\tif len(tokens) > {i} {{\n\t\tif tokens[{i}] == \"\" {{\n\t\t\treturn errEmpty\n\t\t}}\n\t}}\n"
        ));
    }
    big.push_str("\treturn nil\n}\n");
    std::fs::write(tmp.path().join("go/auth/chain.go"), big).expect("write");
    let mini = tmp.path().join("mini");
    minified_ts(&mini);
    paths.push(mini);
    let server = serve_paths(tmp, &paths, &[], &[]);
    wait_ready(&server);
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    let words = [
        "auth", "token", "validate", "user", "service", "handler", "claims", "create", "find",
        "config", "error", "jwt", "start", "delete", "describe", "key", "name", "main", "step",
        "issuer",
    ];
    // A small deterministic generator (no extra dependency): xorshift.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut calls = Vec::new();
    for i in 0..180 {
        let q: Vec<&str> = (0..1 + next(3))
            .map(|_| words[next(words.len() as u64) as usize])
            .collect();
        let budget = match i % 4 {
            0 => 1 + next(40),
            1 => 1 + next(400),
            2 => 1 + next(3000),
            _ => 1 + next(10_000),
        };
        let strategy = if (i / 4) % 2 == 0 { "breadth" } else { "depth" };
        let repo = ["go", "python", "mini"][i % 3];
        calls.push((
            "get_code_context",
            json!({"repo": repo, "query": q.join(" "), "max_tokens": budget, "strategy": strategy}),
        ));
    }
    let report = client(json!({
        "transport": "http",
        "url": server.url(),
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
    }));
    let texts: Vec<String> = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["text"].as_str().expect("text").to_string())
        .collect();
    let mut saw_cut = false;
    let mut saw_empty = false;
    let mut saw_tabs_over_words = false;
    for (((_, args), (v, err)), text) in calls.iter().zip(results(&report)).zip(&texts) {
        assert!(!err, "{args}: {v}");
        let budget = args["max_tokens"].as_u64().expect("budget");
        let items = v["context_items"].as_array().expect("items");
        let reported = v["estimated_tokens"].as_u64().expect("estimate");
        assert!(reported <= budget, "{args}: {reported} > {budget}");
        assert_eq!(
            reported,
            items.iter().map(|i| estimate(&bpe, i)).sum::<u64>(),
            "{args}"
        );
        // The text as the client got it, against the same answer without items
        // (key order is kept: serde_json's preserve_order is on).
        let mut bare = v.clone();
        bare["context_items"] = json!([]);
        let overhead = bpe.encode_ordinary(&bare.to_string()).len() as u64;
        let real = bpe.encode_ordinary(text).len() as u64;
        assert!(
            real <= budget + overhead + items.len() as u64,
            "{args}: the text is {real} tokens, over {budget} + {overhead} (no items) + {}",
            items.len()
        );
        saw_tabs_over_words |= items.iter().any(|i| {
            let j = i.to_string();
            j.contains("\\t") && bpe.encode_ordinary(&j).len() > 2 * j.split_whitespace().count()
        });
        let meta = &v["metadata"];
        assert_eq!(meta["returned"], items.len());
        assert_eq!(meta["strategy"], args["strategy"]);
        let total = meta["total_candidates"].as_u64().expect("total");
        assert_eq!(v["truncated"], json!((items.len() as u64) < total));
        if v["truncated"] == true {
            assert_eq!(meta["remaining_candidates"], total - items.len() as u64);
            assert!(meta["suggestion"].is_string());
            assert_eq!(meta["result_completeness"], "partial");
        }
        for item in items {
            assert_eq!(
                item.get("body").is_some(),
                args["strategy"] == "depth",
                "{item}"
            );
        }
        saw_cut |= items.iter().any(|i| i["body_truncated"] == true);
        saw_empty |= items.is_empty() && total > 0;
    }
    assert!(
        saw_cut,
        "no depth answer cut a body to fit: the test did not test"
    );
    assert!(
        saw_empty,
        "no budget was too small for every candidate: the test did not test"
    );
    assert!(
        saw_tabs_over_words,
        "no item was tab-indented code the word formula undercounts: the test did not test"
    );
}

#[test]
fn search_and_context_inputs() {
    let server = serve(&["rust", "typescript"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "get_code_context",
                json!({"repo": "rust", "query": "token", "max_tokens": 0}),
            ),
            (
                "get_code_context",
                json!({"repo": "rust", "query": "token", "strategy": "wide"}),
            ),
            (
                "get_code_context",
                json!({"repo": "rust", "query": "validate token", "max_tokens": 1}),
            ),
            (
                "get_code_context",
                json!({"repo": "rust", "query": "validate token"}),
            ),
            (
                "search_code",
                json!({"repo": "rust", "query": "AuthHandler"}),
            ),
            (
                "search_code",
                json!({"repo": "rust", "query": "auth handler", "kind": "struct"}),
            ),
            (
                "search_code",
                json!({"repo": "typescript", "query": "router", "path_prefix": "src/services"}),
            ),
            ("search_code", json!({"repo": "rust", "query": "   "})),
        ],
    );
    assert_eq!(err_code(&r[0].0), "invalid_max_tokens");
    assert_eq!(err_code(&r[1].0), "invalid_strategy");
    let (v, err) = &r[2];
    assert!(!err, "{v}");
    assert_eq!(v["context_items"], json!([]));
    assert_eq!(v["truncated"], true);
    assert!(
        v["metadata"]["suggestion"]
            .as_str()
            .expect("s")
            .contains("max_tokens")
    );
    let (v, err) = &r[3];
    assert!(!err, "{v}");
    assert_eq!(v["metadata"]["strategy"], "breadth");
    assert_eq!(v["context_items"][0]["name"], "validate_token");
    assert!(v["context_items"][0].get("body").is_none());
    let (v, _) = &r[4];
    assert_eq!(v["results"][0]["name"], "AuthHandler");
    assert_eq!(
        v["results"][0]["kind"], "struct",
        "the type before its impl blocks"
    );
    let (v, _) = &r[5];
    let kinds: Vec<&str> = v["results"]
        .as_array()
        .expect("r")
        .iter()
        .map(|x| x["kind"].as_str().expect("k"))
        .collect();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| *k == "struct"),
        "{kinds:?}"
    );
    let (v, _) = &r[6];
    assert!(
        v["results"]
            .as_array()
            .expect("r")
            .iter()
            .all(|x| x["path"].as_str().expect("p").starts_with("src/services/")),
        "{v}"
    );
    assert_eq!(err_code(&r[7].0), "invalid_input");
}

/// get_code_context follows the graph from its best hits: the definitions a hit's
/// file imports and its code uses come along (marked as such), imports it does
/// not use do not, and neither do definitions the query and the hits never touch.
#[test]
fn code_context_expands_through_imports() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("vault");
    std::fs::create_dir_all(repo.join("util")).expect("mkdir");
    std::fs::write(repo.join("util/__init__.py"), "").expect("write");
    std::fs::write(
        repo.join("util/crypto.py"),
        "import hashlib\n\n\ndef derive_key(secret):\n    return hashlib.sha256(secret).digest()\n\n\ndef spare_helper(n):\n    return n * 2\n\n\ndef lonely(n):\n    return n\n",
    )
    .expect("write");
    std::fs::write(
        repo.join("service.py"),
        "from util.crypto import derive_key, spare_helper\n\n\nclass Safe:\n    def unlock_vault(self, secret):\n        key = derive_key(secret)\n        return self.doors.open(key)\n",
    )
    .expect("write");
    let server = serve_paths(tmp, &[repo], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "get_code_context",
                json!({"query": "unlock vault", "strategy": "breadth"}),
            ),
            (
                "get_code_context",
                json!({"query": "unlock vault", "strategy": "depth"}),
            ),
        ],
    );
    for (v, err) in &r {
        assert!(!err, "{v}");
        let items = v["context_items"].as_array().expect("items");
        let names: Vec<&str> = items.iter().filter_map(|i| i["name"].as_str()).collect();
        assert_eq!(items[0]["name"], "unlock_vault", "{v}");
        let key = items
            .iter()
            .find(|i| i["name"] == "derive_key")
            .unwrap_or_else(|| panic!("derive_key comes along: {v}"));
        assert_eq!(key["relation"], "imported", "{key}");
        assert_eq!(key["context_of"], "service.Safe.unlock_vault", "{key}");
        assert_eq!(key["path"], "util/crypto.py");
        assert!(
            !names.contains(&"spare_helper"),
            "imported, never used: {v}"
        );
        assert!(!names.contains(&"lonely"), "{v}");
    }
    let depth = &r[1].0["context_items"];
    let key = depth
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["name"] == "derive_key")
        .expect("derive_key");
    assert!(
        key["body"]
            .as_str()
            .expect("body")
            .contains("hashlib.sha256"),
        "{key}"
    );
}

/// structure-nav-spec.md, User Story 4, scenarios 1-8, over a generated repository
/// where one query matches 40 symbols.
#[test]
fn code_context_user_story() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("tokens");
    for i in 0..20 {
        let dir = repo.join(format!("pkg{}", i % 4));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let text = format!(
            "class TokenStore{i}:\n    \"\"\"Keeps tokens of shard {i}.\"\"\"\n\n    def refresh_token(self, token, ttl={i}):\n        if not token:\n            raise ValueError('empty token')\n        self.cache[token] = ttl\n        for shard in range(ttl):\n            self.log.append(('refresh', shard, token))\n            self.metrics['refreshed'] += 1\n            if shard % 7 == 0:\n                self.flush(shard, reason='periodic refresh of the token cache')\n        return token.strip()\n"
        );
        std::fs::write(dir.join(format!("store{i}.py")), text).expect("write");
    }
    let repo_dir = repo.clone();
    let server = serve_paths(tmp, &[repo], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "get_code_context",
                json!({"query": "token", "max_tokens": 500, "strategy": "breadth"}),
            ),
            (
                "get_code_context",
                json!({"query": "token", "max_tokens": 2000, "strategy": "depth"}),
            ),
            (
                "get_code_context",
                json!({"query": "token", "max_tokens": 2000, "strategy": "breadth"}),
            ),
            (
                "get_code_context",
                json!({"query": "token", "max_tokens": 100}),
            ),
            ("get_code_context", json!({"query": "zebra quasar"})),
            ("get_code_context", json!({"query": "token"})),
            (
                "get_node",
                json!({"node_id": "method:pkg0/store0.py:pkg0.store0.TokenStore0.refresh_token"}),
            ),
        ],
    );
    for (v, err) in &r {
        assert!(!err, "{v}");
    }
    let items = |v: &Value| v["context_items"].as_array().expect("items").clone();
    let tokens = |v: &Value| v["estimated_tokens"].as_u64().expect("tokens");
    // 1 and 6: breadth, 500 tokens: several symbols, signatures, no bodies.
    let breadth = items(&r[0].0);
    assert!(r[0].0["metadata"]["total_candidates"].as_u64().expect("n") >= 20);
    assert!(breadth.len() > 5, "{}", r[0].0);
    assert!(tokens(&r[0].0) <= 500);
    for it in &breadth {
        for k in ["name", "kind", "path", "line_start", "signature"] {
            assert!(!it[k].is_null(), "{k} in {it}");
        }
        assert!(it.get("body").is_none());
    }
    // 2 and 7: depth, 2000 tokens: fewer symbols than breadth at 2000, each with its body.
    let depth = items(&r[1].0);
    assert!(tokens(&r[1].0) <= 2000);
    assert!(
        !depth.is_empty() && depth.len() < items(&r[2].0).len(),
        "depth {} vs breadth {}",
        depth.len(),
        items(&r[2].0).len()
    );
    for it in &depth {
        let body = it["body"].as_str().expect("body");
        assert!(body.contains(it["name"].as_str().expect("name")), "{it}");
        assert!(
            it.get("body_truncated").is_none(),
            "small bodies are never cut: {it}"
        );
    }
    for it in &depth {
        // The whole definition: exactly its lines of the file.
        let text = std::fs::read_to_string(repo_dir.join(it["path"].as_str().expect("path")))
            .expect("read");
        let lines: Vec<&str> = text.lines().collect();
        let (a, b) = (
            it["line_start"].as_u64().expect("a") as usize,
            it["line_end"].as_u64().expect("b") as usize,
        );
        assert_eq!(
            lines[a - 1..b].join("\n").trim(),
            it["body"].as_str().expect("body").trim(),
            "{it}"
        );
    }
    assert_eq!(
        r[6].0["content"].as_str().expect("content").lines().count(),
        10,
        "{}",
        r[6].0
    );
    // 3: a small budget: truncated, and filled as far as the items allow.
    let small = &r[3].0;
    assert_eq!(small["truncated"], true);
    assert!(!items(small).is_empty());
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    let smallest = breadth
        .iter()
        .map(|i| estimate(&bpe, i))
        .min()
        .expect("an item");
    assert!(
        tokens(small) <= 100 && tokens(small) + smallest > 100 - smallest,
        "{small}"
    );
    // 4: nothing matches.
    assert_eq!(r[4].0["context_items"], json!([]));
    assert_eq!(r[4].0["estimated_tokens"], 0);
    // 5: the default budget is 4000.
    assert_eq!(r[5].0["metadata"]["max_tokens"], 4000);
    assert!(tokens(&r[5].0) <= 4000);
    // 8: the estimate is the larger of ceil(words × 1.3) and o200k_base's count
    // of each item's compact JSON, summed.
    for (v, _) in &r[..6] {
        assert_eq!(
            tokens(v),
            items(v).iter().map(|i| estimate(&bpe, i)).sum::<u64>()
        );
    }
}

/// Walks are kept for repeated calls (the graph's walk cache) and rows come
/// from the server's catalog: after a saved change, every tool that walked the
/// file before answers from the new state, never the kept one.
#[test]
fn walks_kept_for_repeated_calls_follow_a_saved_change() {
    let tmp = tempfile::tempdir().expect("tmp");
    let v1 = "class Cart:\n    def add(self, item):\n        return item\n\n    def total(self):\n        return 0\n";
    let (repo, file) = shop(tmp.path(), v1);
    let server = serve_paths_with_data(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &tmp.path().join("data"),
    );
    wait_ready(&server);
    let names = |v: &Value, key: &str| -> Vec<String> {
        let mut out = Vec::new();
        fn walk(v: &Value, key: &str, out: &mut Vec<String>) {
            if let Some(n) = v.get("name").and_then(Value::as_str) {
                out.push(n.to_string());
            }
            for k in [key, "children"] {
                if let Some(list) = v.get(k).and_then(Value::as_array) {
                    list.iter().for_each(|c| walk(c, key, out));
                }
            }
        }
        walk(v, key, &mut out);
        out
    };
    let asks = [
        (
            "get_file_outline",
            json!({"path": "shop/cart.py"}),
            "symbols",
        ),
        (
            "get_symbol_hierarchy",
            json!({"symbol_name": "Cart", "direction": "descendants"}),
            "hierarchy",
        ),
        (
            "explore_tree",
            json!({"pattern": "shop", "max_depth": 4}),
            "tree",
        ),
    ];
    for (tool, args, key) in &asks {
        // Twice: the second answer comes from the kept walks.
        for _ in 0..2 {
            let v = call(&server, tool, args.clone());
            let seen = names(&v, key);
            assert!(seen.contains(&"total".to_string()), "{tool}: {v}");
            assert!(!seen.contains(&"checkout".to_string()), "{tool}: {v}");
        }
    }
    std::fs::write(
        &file,
        format!("{v1}\n    def checkout(self):\n        return self.total()\n"),
    )
    .expect("write");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let v = call(&server, "get_file_outline", json!({"path": "shop/cart.py"}));
        if v["metadata"]["freshness_status"] == "fresh"
            && names(&v, "symbols").contains(&"checkout".to_string())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the change never showed: {v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for (tool, args, key) in &asks {
        let v = call(&server, tool, args.clone());
        let seen = names(&v, key);
        assert!(
            seen.contains(&"checkout".to_string()) && seen.contains(&"total".to_string()),
            "{tool} answered from before the change: {v}"
        );
    }
    let v = call(&server, "search_code", json!({"query": "checkout"}));
    assert_eq!(v["results"][0]["name"], "checkout", "{v}");
    assert_eq!(v["results"][0]["parent"]["name"], "Cart", "{v}");
}

/// A function added to a file and taken out again, then a checkpoint, over and
/// over (an editor's undo): the server keeps serving and answers each state.
/// Kuzu kept the deleted in-memory `CONTAINS` row of such a pair past the
/// checkpoint, marked invalid, and the next run's walk over the file's symbols
/// read the mark as a row: the server segfaulted on the second round
/// (`patches/README.md`, the fourth patch).
#[test]
fn an_edit_undone_across_checkpoints_keeps_the_server_serving() {
    let tmp = tempfile::tempdir().expect("tmp");
    let v1 = "class Cart:\n    def add(self, item):\n        return item\n";
    let (repo, file) = shop(tmp.path(), v1);
    let data = tmp.path().join("data");
    let server = serve_paths(
        tempfile::tempdir().expect("tmp"),
        std::slice::from_ref(&repo),
        &[
            "--data",
            &data.to_string_lossy(),
            "--checkpoint-after-ms",
            "1500",
        ],
        &[],
    );
    wait_ready(&server);
    let until = |name: &str, state: &str| {
        let report = client(json!({"transport": "http", "url": server.url(), "calls": [
            ["get_symbol_hierarchy", {"symbol_name": name}, {"until": state, "timeout_s": 30}],
        ]}));
        let (v, err) = results(&report).remove(0);
        assert_eq!(err, state == "error", "{name} {state}: {v}");
    };
    for round in 0..3 {
        // Added, seen, undone at once: both runs land before one checkpoint.
        std::fs::write(
            &file,
            format!("{v1}\ndef undone_{round}():\n    return 1\n"),
        )
        .expect("write");
        until(&format!("undone_{round}"), "ok");
        std::fs::write(&file, v1).expect("write");
        until(&format!("undone_{round}"), "error");
        // The checkpoint of both, then the next round's runs after it.
        std::thread::sleep(Duration::from_millis(2500));
        let (status, _, body) = http(&server.addr, "GET", "/health", &[], b"");
        assert_eq!(status, 200, "round {round}: {body}");
    }
    let v = call(
        &server,
        "get_symbol_hierarchy",
        json!({"symbol_name": "Cart", "direction": "descendants"}),
    );
    assert!(v.to_string().contains("\"add\""), "{v}");
}

/// A repo `shop` under `dir` holding the package `shop` with `cart.py` = `cart`:
/// the repo's path and the file's.
fn shop(dir: &Path, cart: &str) -> (PathBuf, PathBuf) {
    let repo = dir.join("shop");
    std::fs::create_dir_all(repo.join("shop")).expect("mkdir");
    let file = repo.join("shop/cart.py");
    std::fs::write(&file, cart).expect("write");
    std::fs::write(repo.join("shop/__init__.py"), "").expect("write");
    (repo, file)
}

/// One argument name across tools: `symbol_name` and `name` are both taken;
/// integers may come as strings (some clients send every argument so); a
/// string that is no integer is `invalid_input`.
#[test]
fn arguments_take_aliases_and_integers_as_strings() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            ("locate_symbol", json!({"symbol_name": "validate_token"})),
            ("locate_symbol", json!({"name": "validate_token"})),
            (
                "get_symbol_hierarchy",
                json!({"name": "validate", "path": "src/auth/handler.rs"}),
            ),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "limit": "2"}),
            ),
            (
                "find_related_symbols",
                json!({"symbol_name": "validate", "path": "src/auth/handler.rs", "limit": "two"}),
            ),
            ("explore_tree", json!({"max_depth": " 1 ", "limit": 3.5})),
        ],
    );
    for (v, err) in &r[..4] {
        assert!(!err, "{v}");
    }
    assert_eq!(r[0].0["results"], r[1].0["results"]);
    assert_eq!(r[0].0["results"][0]["name"], "validate_token");
    assert_eq!(r[2].0["hierarchy"][0]["name"], "validate");
    assert_eq!(r[3].0["related"].as_array().expect("related").len(), 2);
    for (v, err) in &r[4..] {
        assert!(err, "{v}");
        assert_eq!(v["error"]["code"], "invalid_input", "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .expect("message")
                .contains("integer"),
            "{v}"
        );
    }
}
