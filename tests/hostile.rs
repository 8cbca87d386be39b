//! A server under hostile or careless load, round two (issue 51): sessions are
//! a bounded resource, abandoned work stops and gives its permit back, every
//! malformed JSON-RPC message gets a JSON-RPC error, parameters bind as given,
//! cursors are checked, totals are exact or say they are not, and a server
//! stops at once whatever runs. Each test ran against the binary before these
//! fixes and failed there. Everything goes through a real `cruxe serve`.

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::cruxe_bin;
use crate::mcp::{Server, call, call_all, http, serve, serve_paths, session_id, wait_ready};

const JSON: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];
const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn post(addr: &str, body: &[u8], extra: &[(&str, &str)]) -> (u16, String, String) {
    let mut h: Vec<(&str, &str)> = JSON.to_vec();
    h.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &h, body)
}

/// A session that made a call (so it counts as in use); its id.
fn used_session(addr: &str) -> String {
    let (status, head, body) = post(addr, INIT, &[]);
    assert_eq!(status, 200, "{body}");
    let sid = session_id(&head);
    let with = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    post(
        addr,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &with,
    );
    let (status, _, body) = post(
        addr,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        &with,
    );
    assert_eq!(status, 200, "{body}");
    sid
}

fn health(addr: &str) -> Value {
    let (status, _, body) = http(addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("health json")
}

fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------
// D1: sessions

#[test]
fn sessions_are_capped_the_least_used_go_first_and_idle_ones_expire() {
    let server = serve(
        &["rust"],
        &["--max-sessions", "20", "--session-idle-secs", "3"],
        &[],
    );
    wait_ready(&server);
    let a = &server.addr;
    let busy = used_session(a);
    // A flood of handshakes: each is answered, and each past the cap closes
    // a session that never made a call.
    for _ in 0..300 {
        let (status, _, body) = post(a, INIT, &[]);
        assert_eq!(status, 200, "{body}");
    }
    let h = health(a);
    assert_eq!(h["sessions"]["max"], 20, "{h}");
    let open = h["sessions"]["open"].as_u64().expect("open");
    assert!(open <= 20, "{open} sessions open past a cap of 20: {h}");
    // The session that made a call outlived the flood.
    let with = [
        ("Mcp-Session-Id", busy.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, _, body) = post(
        a,
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        &with,
    );
    assert_eq!(status, 200, "the session in use was closed: {body}");
    // Idle sessions expire (3 s here) and the count goes back to zero.
    let started = Instant::now();
    loop {
        let open = health(a)["sessions"]["open"].as_u64().expect("open");
        if open == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{open} sessions still open"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn past_the_cap_with_every_session_in_use_a_handshake_is_refused_clearly() {
    let server = serve(&["rust"], &["--max-sessions", "2"], &[]);
    wait_ready(&server);
    let a = &server.addr;
    used_session(a);
    used_session(a);
    let (status, head, body) = post(a, INIT, &[]);
    assert_eq!(status, 503, "{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after"), "{head}");
    let v: Value = serde_json::from_str(&body).expect("json-rpc error");
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], 1);
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .expect("message")
            .contains("maximum of 2 sessions"),
        "{v}"
    );
}

#[test]
fn idle_and_half_open_connections_are_closed() {
    let server = serve(
        &["rust"],
        &["--connection-idle-secs", "1", "--max-connections", "16"],
        &[],
    );
    wait_ready(&server);
    // Forty connections that never send a byte: the server closes each, and
    // still answers once they are gone.
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&server.addr).expect("connect"))
        .collect();
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let mut buf = [0u8; 64];
        // Closed by the server: end of stream (or a reset), never a timeout.
        match s.read(&mut buf) {
            Ok(n) => assert_eq!(n, 0, "{:?}", &buf[..n]),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "the connection stayed open: {e}"
            ),
        }
    }
    assert_eq!(health(&server.addr)["status"], "ok");
}

#[test]
fn a_public_bind_needs_a_token_of_sixteen_characters() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut child = std::process::Command::new(cruxe_bin())
        .args(["serve", "--listen", "0.0.0.0:0", "--data"])
        .arg(tmp.path().join("data"))
        .arg(crate::common::fixture("go"))
        .env("CRUXE_TOKEN", "short-token")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    // It must refuse at once; one that serves is stopped and fails the test.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(
        status.is_some_and(|s| !s.success()),
        "it served with a short token: {err}"
    );
    assert!(err.contains("at least 16 characters"), "{err}");
}

// ---------------------------------------------------------------------------
// D2: abandoned work stops

/// A Go package of five layers of sixty functions, each calling every
/// function of the next layer (14,400 call edges).
fn mesh(root: &Path) {
    std::fs::create_dir_all(root).expect("mkdir");
    std::fs::write(root.join("go.mod"), "module mesh\n\ngo 1.21\n").expect("go.mod");
    for layer in 0..5 {
        let mut src = String::from("package mesh\n\n");
        for i in 0..60 {
            src.push_str(&format!("func F{layer}x{i}() {{\n"));
            if layer < 4 {
                for j in 0..60 {
                    src.push_str(&format!("\tF{}x{j}()\n", layer + 1));
                }
            }
            src.push_str("}\n\n");
        }
        std::fs::write(root.join(format!("l{layer}.go")), src).expect("write");
    }
}

fn serve_mesh(extra: &[&str]) -> Server {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("mesh");
    mesh(&root);
    let server = serve_paths(tmp, &[root], extra, &[]);
    wait_ready(&server);
    server
}

#[test]
fn deep_hostile_impacts_answer_within_their_budget_and_lookups_go_on() {
    // The work budget is what stops these walks, not the call deadline: on a
    // loaded machine (CI beside a build) the budget's work can take longer
    // than the default 30 s, so the deadline is put out of its way.
    let server = serve_mesh(&["--call-timeout-ms", "600000"]);
    let paths: Vec<String> = (0..5).map(|l| format!("l{l}.go")).collect();
    // Warm: the catalog is loaded, the locate path is ready.
    call(&server, "locate_symbol", json!({"name": "F2x7"}));
    let before = rss(server.pid());
    let impacts = std::thread::scope(|s| {
        let hostile: Vec<_> = (0..8)
            .map(|_| {
                let server = &server;
                let paths = paths.clone();
                s.spawn(move || {
                    call_all(
                        server,
                        &[(
                            "analyze_impact",
                            json!({"paths": paths, "depth": 5, "max_tokens": 2000}),
                        )],
                    )
                    .remove(0)
                })
            })
            .collect();
        // Lookups meanwhile: every one answers (none waits out a deadline).
        let lookups: Vec<(&str, Value)> = (0..20)
            .map(|i| {
                (
                    "locate_symbol",
                    json!({"name": format!("F{}x{}", i % 5, i)}),
                )
            })
            .collect();
        for (v, err) in call_all(&server, &lookups) {
            assert!(!err, "{v}");
            assert_eq!(v["results"].as_array().expect("results").len(), 1, "{v}");
        }
        hostile
            .into_iter()
            .map(|h| h.join().expect("impact"))
            .collect::<Vec<_>>()
    });
    for (v, err) in impacts {
        assert!(!err, "the impact did not answer: {v}");
        assert_eq!(v["completeness"], "lower_bound", "{v}");
        assert_eq!(v["totals_exact"], false, "{v}");
        assert_eq!(v["truncated"], true, "{v}");
        let notes = v["notes"].to_string();
        assert!(notes.contains("work budget"), "{notes}");
    }
    let after = rss(server.pid());
    assert!(
        after < before + (300 << 20),
        "server RSS grew from {} to {} MiB",
        before >> 20,
        after >> 20
    );
}

#[test]
fn a_call_past_its_deadline_is_stopped_and_the_next_ones_run() {
    // Every walk of the call graph gets 1 ms: each is stopped where it runs
    // and answered `query_timeout`; its permit comes back at once, so eight
    // more run after eight timed out, and a lookup after them.
    let server = serve_mesh(&["--call-timeout-ms", "1"]);
    let calls: Vec<(&str, Value)> = (0..16)
        .map(|_| {
            (
                "analyze_impact",
                json!({"paths": ["l3.go", "l4.go"], "depth": 5}),
            )
        })
        .collect();
    for (v, err) in call_all(&server, &calls) {
        assert!(err, "{v}");
        assert_eq!(err_code(&v), "query_timeout", "{v}");
    }
    let server2 = serve_mesh(&["--call-timeout-ms", "60000"]);
    let v = call(&server2, "locate_symbol", json!({"name": "F4x1"}));
    assert_eq!(v["results"][0]["name"], "F4x1");
}

// ---------------------------------------------------------------------------
// D5, D6, D7: parameters, cursors, totals

#[test]
fn list_parameters_bind_as_given_or_are_refused() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "run_cypher",
                json!({"query": "RETURN $x AS x", "params": {"x": [1, "a"]}}),
            ),
            (
                "run_cypher",
                json!({"query": "RETURN $x AS x", "params": {"x": ["a", 1, 2.5]}}),
            ),
            (
                "run_cypher",
                json!({"query": "RETURN $x AS x", "params": {"x": [1, 2.5, null]}}),
            ),
            (
                "run_cypher",
                json!({"query": "RETURN $x AS x", "params": {"x": [["a"], ["b", null]]}}),
            ),
        ],
    );
    for (v, err) in &r[..2] {
        assert!(err, "{v}");
        assert_eq!(err_code(v), "invalid_input", "{v}");
        assert!(v["error"]["message"].to_string().contains("mixes"), "{v}");
    }
    assert!(!r[2].1, "{}", r[2].0);
    assert_eq!(r[2].0["rows"][0][0], json!([1.0, 2.5, null]));
    assert!(!r[3].1, "{}", r[3].0);
    assert_eq!(r[3].0["rows"][0][0], json!([["a"], ["b", null]]));
}

#[test]
fn cursors_past_the_end_are_invalid_input() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let huge = "18446744073709551615";
    let r = call_all(
        &server,
        &[
            (
                "find_references",
                json!({"symbol_name": "Claims", "cursor": huge}),
            ),
            (
                "get_file_outline",
                json!({"path": "src/auth/jwt.rs", "cursor": huge}),
            ),
            ("explore_tree", json!({"cursor": huge})),
            (
                "find_references",
                json!({"symbol_name": "Claims", "cursor": "99999"}),
            ),
        ],
    );
    for (v, err) in r {
        assert!(err, "{v}");
        assert_eq!(err_code(&v), "invalid_input", "{v}");
    }
}

/// A Go package whose `Hub` has 3,000 callers, each in a file of its own.
fn hub(root: &Path, callers: usize) {
    std::fs::create_dir_all(root).expect("mkdir");
    std::fs::write(root.join("go.mod"), "module hub\n\ngo 1.21\n").expect("go.mod");
    std::fs::write(root.join("hub.go"), "package hub\n\nfunc Hub() {}\n").expect("hub");
    for i in 0..callers {
        std::fs::write(
            root.join(format!("c{i:04}.go")),
            format!("package hub\n\nfunc Caller{i}() {{\n\tHub()\n}}\n"),
        )
        .expect("caller");
    }
}

#[test]
fn call_graph_totals_are_exact_or_say_they_are_not() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("hub");
    hub(&root, 3000);
    let server = serve_paths(tmp, &[root], &[], &[]);
    wait_ready(&server);
    let r = call_all(
        &server,
        &[
            (
                "get_call_graph",
                json!({"symbol_name": "Hub", "depth": 1, "limit": 1}),
            ),
            ("get_call_graph", json!({"symbol_name": "Hub", "depth": 1})),
            (
                "get_call_graph",
                json!({"symbol_name": "Hub", "depth": 1, "limit": 2000, "max_tokens": 1000000}),
            ),
        ],
    );
    for (v, err) in &r {
        assert!(!err, "{v}");
        assert_eq!(v["total_nodes"], 3000, "{v}");
        let total = v["total_edges"].as_u64().expect("total_edges");
        if v["totals_exact"] == true {
            assert_eq!(total, 3000, "an exact total that is not: {v}");
        } else {
            assert!(total < 3000, "{v}");
            assert_eq!(v["truncated"], true, "{v}");
        }
    }
    assert_eq!(r[0].0["totals_exact"], false, "{}", r[0].0);
}

// ---------------------------------------------------------------------------
// D8: JSON-RPC

#[test]
fn every_malformed_json_rpc_message_gets_a_json_rpc_error_with_400() {
    let server = serve(&["rust"], &[], &[]);
    wait_ready(&server);
    let a = &server.addr;
    let mut bodies: Vec<(String, i64)> = ["true", "1.5", "null", "[1]", "{}"]
        .iter()
        .map(|id| {
            (
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                -32600,
            )
        })
        .collect();
    bodies.extend([
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":5}"#.to_string(),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#.to_string(),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#.to_string(),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}"#
                .to_string(),
            -32602,
        ),
    ]);
    for (body, code) in bodies {
        let (status, head, text) = post(a, body.as_bytes(), &[]);
        assert_eq!(status, 400, "{body}: {text}");
        assert!(
            head.to_ascii_lowercase().contains("application/json"),
            "{body}: {head}"
        );
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{body}: {e}: {text}"));
        assert_eq!(v["jsonrpc"], "2.0", "{text}");
        assert_eq!(v["error"]["code"], code, "{body}: {text}");
    }
    // The server still serves.
    let (status, _, _) = post(a, INIT, &[]);
    assert_eq!(status, 200);
}

// ---------------------------------------------------------------------------
// D9, D10: ad hoc queries and shutdown

/// A query that runs for minutes on any machine, in little memory.
const ENDLESS: &str = "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y UNWIND range(1, 100) AS z RETURN sum(x + y + z) AS s";

#[test]
fn sigterm_stops_the_server_at_once_whatever_runs() {
    let mut server = serve_mesh(&["--query-timeout-ms", "120000"]);
    let addr = server.url();
    // Two endless queries and two deep impacts, sent by clients that are
    // killed before the server is: nobody waits for their answers.
    let mut clients: Vec<std::process::Child> = Vec::new();
    for (tool, args) in [
        ("run_cypher", json!({"query": ENDLESS})),
        ("run_cypher", json!({"query": ENDLESS})),
        (
            "analyze_impact",
            json!({"paths": ["l3.go", "l4.go"], "depth": 5}),
        ),
    ] {
        clients.push(crate::mcp::spawn_client(json!({
            "transport": "http", "url": addr, "calls": [[tool, args]],
        })));
    }
    // Until both queries run in workers (their processes exist).
    let started = Instant::now();
    while crate::mcp::worker_pids(server.pid()).len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "no workers");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    for mut c in clients {
        let _ = c.kill();
        let _ = c.wait();
    }
    let workers = crate::mcp::worker_pids(server.pid());
    let (clean, took) = server.terminate();
    assert!(clean, "the server did not exit cleanly");
    assert!(
        took < Duration::from_secs(15),
        "SIGTERM took {took:?} with queries running"
    );
    for pid in workers {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z ")),
            "worker {pid} outlived the server"
        );
    }
}

#[test]
fn an_ad_hoc_query_runs_for_its_own_timeout_not_the_call_deadline() {
    // Calls other than run_cypher get 500 ms; a query gets its configured 60 s.
    let server = serve(
        &["rust"],
        &["--query-timeout-ms", "60000", "--call-timeout-ms", "500"],
        &[],
    );
    wait_ready(&server);
    let v = call(
        &server,
        "run_cypher",
        json!({"query": "UNWIND range(1, 20000) AS x UNWIND range(1, 20000) AS y RETURN sum(x + y) AS s"}),
    );
    // A 128-bit sum comes as its digits.
    assert_eq!(v["rows"][0][0], "8000400000000", "{v}");
}
