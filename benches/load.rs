//! Load benchmark: CLIENTS concurrent MCP sessions over loopback HTTP for SECONDS.
//!
//!     cargo bench --profile dev --bench load -- CORPUS [CLIENTS] [SECONDS]
//!     (or `make bench-load CORPUS=dir`)
//!
//! Indexes CORPUS into a scratch data dir, starts the real `cruxe serve` on it, and
//! runs CLIENTS threads, each its own MCP session (initialize, then `tools/call`)
//! on its own keep-alive HTTP/1.1 connection, calling a random mix of every tool
//! with arguments drawn from the graph, for SECONDS. Prints calls per second,
//! p50/p95/p99/max over every call, errors, and the server's RSS before and after.
//!
//! The client is plain std + serde_json (no async runtime, no SDK), so that on a
//! small machine the load generator takes little of the CPU the server needs; the
//! Python SDK drives the correctness tests (`tests/team.rs`), not this.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Session {
    reader: BufReader<TcpStream>,
    session: Option<String>,
    next_id: u64,
}

impl Session {
    fn connect(addr: &str) -> Session {
        Session::try_connect(addr).expect("connect")
    }

    fn try_connect(addr: &str) -> std::io::Result<Session> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        let mut s = Session {
            reader: BufReader::new(stream),
            session: None,
            next_id: 0,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cruxe-load", "version": "1"}}});
        match s.try_exchange(&init)? {
            (200, _) => {}
            (status, _) => return Err(std::io::Error::other(format!("initialize: {status}"))),
        }
        s.try_exchange(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(s)
    }

    /// A new session, as an MCP client makes one when its server is gone or
    /// answers 404 for its session (behind a balancer: on another replica).
    /// Tried for up to 10 s, while the balancer notices a dead server.
    fn reconnect(addr: &str) -> Option<Session> {
        (0..100).find_map(|_| {
            Session::try_connect(addr)
                .inspect_err(|_| std::thread::sleep(Duration::from_millis(100)))
                .ok()
        })
    }

    /// One POST; returns the JSON-RPC message of the reply, if it has one.
    fn post(&mut self, message: &Value) -> Option<Value> {
        let data = self.exchange(message);
        let text = String::from_utf8_lossy(&data);
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .chain(std::iter::once(text.trim()).filter(|t| t.starts_with('{')))
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
    }

    /// A timed `tools/call`: whether it failed, and its error code. The reply is
    /// checked without building it as a tree (most of it is skipped), so that
    /// the load generator takes little of the CPU the server needs.
    fn call_light(&mut self, tool: &str, args: &Value) -> std::io::Result<(bool, Option<String>)> {
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                         "params": {"name": tool, "arguments": args}});
        let data = match self.try_exchange(&msg)? {
            (404, _) => return Err(std::io::Error::other("404: unknown session")),
            (_, data) => data,
        };
        let message = data
            .split(|&b| b == b'\n')
            .filter_map(|l| l.strip_prefix(b"data: "))
            .chain(std::iter::once(data.trim_ascii()).filter(|t| t.starts_with(b"{")))
            .find_map(|l| serde_json::from_slice::<LightReply>(l).ok());
        Ok(match message.and_then(|m| m.result) {
            Some(r) => (
                r.is_error.unwrap_or(false),
                r.structured.and_then(|s| s.error).and_then(|e| e.code),
            ),
            None => (true, Some("no result".into())),
        })
    }

    /// Sends one POST and returns the body of the reply (SSE or JSON).
    fn exchange(&mut self, message: &Value) -> Vec<u8> {
        self.try_exchange(message).expect("exchange").1
    }

    /// One POST: the reply's status and body; an error when the connection
    /// fails or closes.
    fn try_exchange(&mut self, message: &Value) -> std::io::Result<(u16, Vec<u8>)> {
        let body = message.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        if let Some(id) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        head.push_str("\r\n");
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;

        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("status line {line:?}")))?;
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').unwrap_or((l, ""));
            let (name, value) = (name.to_ascii_lowercase(), value.trim());
            match name.as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => self.session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut data = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(std::io::Error::other)?;
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk)?;
                if size == 0 {
                    break;
                }
                data.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = length {
            data.resize(n, 0);
            self.reader.read_exact(&mut data)?;
        }
        Ok((status, data))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.post(&msg).expect("a reply")
    }

    /// (structuredContent, isError)
    fn call(&mut self, tool: &str, args: Value) -> (Value, bool) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &reply["result"];
        (
            result["structuredContent"].clone(),
            result["isError"].as_bool().unwrap_or(true),
        )
    }
}

/// The parts of a `tools/call` reply the load loop checks; the rest is skipped.
#[derive(serde::Deserialize)]
struct LightReply {
    result: Option<LightResult>,
}

#[derive(serde::Deserialize)]
struct LightResult {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    #[serde(rename = "structuredContent")]
    structured: Option<LightContent>,
}

#[derive(serde::Deserialize)]
struct LightContent {
    error: Option<LightError>,
}

#[derive(serde::Deserialize)]
struct LightError {
    code: Option<String>,
}

/// What one client saw: (tool, milliseconds) per call, its errors, and how
/// many times it started a new session (its server or session gone).
type ClientLog = (Vec<(&'static str, f64)>, Vec<String>, usize);

/// xorshift: deterministic per client, no dependency.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// What an agent might type for a symbol: the last two segments of its
/// qualified name (`jwt validate_token`).
fn query_of(row: &[Value]) -> String {
    let qn = row[3].as_str().unwrap_or("");
    let words: Vec<&str> = qn
        .split([':', '.', '/'])
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() > 1 {
        words[words.len() - 2..].join(" ")
    } else {
        row[0].as_str().unwrap_or("").to_string()
    }
}

fn mixed_call(rng: &mut Rng, syms: &[Vec<Value>], dirs: &[String]) -> (&'static str, Value) {
    let row = &syms[rng.below(syms.len())];
    let (name, path) = (row[0].clone(), row[1].clone());
    let dir = if dirs.is_empty() {
        ".".to_string()
    } else {
        dirs[rng.below(dirs.len())].clone()
    };
    match rng.below(11) {
        0 => (
            "get_symbol_hierarchy",
            json!({"symbol_name": name, "path": path}),
        ),
        1 => (
            "get_symbol_hierarchy",
            json!({"symbol_name": name, "path": path, "direction": "descendants"}),
        ),
        2 => (
            "find_related_symbols",
            json!({"symbol_name": name, "path": path, "scope": "module"}),
        ),
        3 => ("locate_symbol", json!({"name": name})),
        4 => ("get_file_outline", json!({"path": path})),
        5 => ("explore_tree", json!({"pattern": dir, "max_depth": 2})),
        6 => (
            "get_node",
            json!({"node_id": format!("file:{}", path.as_str().unwrap_or(""))}),
        ),
        7 => ("search_code", json!({"query": query_of(row)})),
        8 => (
            "get_code_context",
            json!({"query": query_of(row), "max_tokens": 2000}),
        ),
        9 => (
            "run_cypher",
            json!({"query": "MATCH (f:File {path: $p}) RETURN f.language, f.line_count",
                   "params": {"p": path}}),
        ),
        _ => ("index_status", json!({})),
    }
}

fn rss_mib(pid: u32) -> u64 {
    status_mib(pid, "VmRSS")
}

/// A `/proc/PID/status` figure in MiB (`VmRSS`, `VmHWM`: the peak).
fn status_mib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

/// CPU seconds (user + system) the process has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // Fields after the `(comm)`, which may hold spaces: utime and stime
            // are the 14th and 15th fields of the line, 12th and 13th after it.
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?)
        })
        .map_or(0.0, |ticks| ticks / 100.0)
}

/// Indexes CORPUS into a scratch data dir (or CRUXE_LOAD_DATA's: a data dir
/// that holds CORPUS as repo `bench`, ref `bench` already, `make
/// bench-scale`'s) and starts `cruxe serve` on it: its address and process.
fn start_server(cruxe: &str, corpus: &str, tmp: &std::path::Path) -> (String, std::process::Child) {
    let data = std::env::var_os("CRUXE_LOAD_DATA")
        .map_or_else(|| tmp.join("data"), std::path::PathBuf::from);
    let started = Instant::now();
    let status = Command::new(cruxe)
        .args([
            "index", corpus, "--repo", "bench", "--ref", "bench", "--data",
        ])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("cruxe index");
    assert!(status.success(), "indexing {corpus} failed");
    eprintln!("indexed in {:.1} s", started.elapsed().as_secs_f64());
    let mut server = Command::new(cruxe)
        .args(["serve", corpus, "--repo", "bench", "--ref", "bench"])
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cruxe serve");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("server output").expect("read");
        if let Some(rest) = line.split("serving MCP at http://").nth(1) {
            break rest.trim_end_matches("/mcp").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (addr, server)
}

fn main() {
    // `cargo bench` passes `--bench`; everything else is ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let corpus = args.first().cloned().unwrap_or_else(|| ".".into());
    let clients: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let seconds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(60);
    // CRUXE_BIN measures another build (a before/after comparison).
    let cruxe = std::env::var("CRUXE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_cruxe").into());
    let cruxe = cruxe.as_str();
    let tmp = tempfile::tempdir().expect("tmp");
    // CRUXE_LOAD_URL=host:port: servers already running (replicas behind a
    // balancer, `make bench-replicas-load`); CRUXE_LOAD_PIDS: theirs, for RSS.
    let (addr, mut server, pids) = match std::env::var("CRUXE_LOAD_URL") {
        Ok(url) => {
            let pids: Vec<u32> = std::env::var("CRUXE_LOAD_PIDS")
                .unwrap_or_default()
                .split(',')
                .filter_map(|p| p.parse().ok())
                .collect();
            (
                url.trim_start_matches("http://")
                    .trim_end_matches("/mcp")
                    .to_string(),
                None,
                pids,
            )
        }
        Err(_) => {
            let (addr, server) = start_server(cruxe, &corpus, tmp.path());
            let pid = server.id();
            (addr, Some(server), vec![pid])
        }
    };
    let mut s = Session::connect(&addr);
    loop {
        let (v, _) = s.call("index_status", json!({}));
        if v["repos"][0]["indexing_status"] == "ready" {
            let r = &v["repos"][0]["refs"][0];
            eprintln!("corpus: {} files, {} symbols", r["files"], r["symbols"]);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // The arguments' queries run while a big ref's catalog still loads (48 s
    // on 2.75M symbols, on the same cores): one past its deadline is asked again.
    let rows = |q: &str| -> Vec<Vec<Value>> {
        let call =
            || Session::connect(&addr).call("run_cypher", json!({"query": q, "limit": 10000}));
        let mut v = call().0;
        for _ in 0..3 {
            if v["error"]["code"] != "query_timeout" {
                break;
            }
            v = call().0;
        }
        v["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("run_cypher {q}: {v}"))
            .iter()
            .map(|r| r.as_array().expect("row").clone())
            .collect()
    };
    let syms = rows(
        "MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref RETURN s.name, s.path, s.kind, s.qualified_name LIMIT 10000",
    );
    let mut dirs: Vec<String> =
        rows("MATCH (f:File) WHERE f.repo = $repo RETURN f.path LIMIT 10000")
            .iter()
            .filter_map(|r| Some(r[0].as_str()?.rsplit_once('/')?.0.to_string()))
            .collect();
    dirs.sort();
    dirs.dedup();
    let mut rng = Rng(7);
    for _ in 0..300 {
        let (tool, a) = mixed_call(&mut rng, &syms, &dirs);
        s.call(tool, a);
    }
    let rss = |pids: &[u32]| -> Vec<u64> { pids.iter().map(|&p| rss_mib(p)).collect() };
    let rss_before = rss(&pids);

    // CRUXE_LOAD_TOOLS=search_code,get_node narrows the mix (to cost one tool).
    let only: Vec<String> = std::env::var("CRUXE_LOAD_TOOLS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let only = &only;
    let server_cpu = |pids: &[u32]| -> f64 { pids.iter().map(|&p| cpu_seconds(p)).sum() };
    let (server_cpu0, own_cpu0) = (server_cpu(&pids), cpu_seconds(std::process::id()));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let t0 = Instant::now();
    let results: Vec<ClientLog> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|k| {
                let (syms, dirs, addr) = (&syms, &dirs, &addr);
                scope.spawn(move || {
                    let mut rng = Rng(1000 + k as u64);
                    let mut s = Session::connect(addr);
                    let (mut times, mut errors, mut sessions) = (Vec::new(), Vec::new(), 0);
                    while Instant::now() < deadline {
                        let (tool, a) = mixed_call(&mut rng, syms, dirs);
                        if !only.is_empty() && !only.iter().any(|t| t == tool) {
                            continue;
                        }
                        let t = Instant::now();
                        // A call whose server or session is gone is asked
                        // again once, in a new session, as a client retries.
                        let outcome = s.call_light(tool, &a).or_else(|_| {
                            sessions += 1;
                            s = Session::reconnect(addr)
                                .ok_or_else(|| std::io::Error::other("no server"))?;
                            s.call_light(tool, &a)
                        });
                        times.push((tool, t.elapsed().as_secs_f64() * 1000.0));
                        match outcome {
                            Ok((true, code)) if code.as_deref() != Some("ambiguous_symbol") => {
                                errors.push(format!("{tool} {a}: {code:?}"))
                            }
                            Ok(_) => {}
                            Err(e) => errors.push(format!("{tool} {a}: {e}")),
                        }
                    }
                    (times, errors, sessions)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client"))
            .collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let server_cpu = server_cpu(&pids) - server_cpu0;
    let own_cpu = cpu_seconds(std::process::id()) - own_cpu0;
    let mut per_tool: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for &(tool, ms) in results.iter().flat_map(|r| r.0.iter()) {
        per_tool.entry(tool).or_default().push(ms);
    }
    let mut times: Vec<f64> = results
        .iter()
        .flat_map(|r| r.0.iter().map(|t| t.1))
        .collect();
    let errors: Vec<&String> = results.iter().flat_map(|r| r.1.iter()).collect();
    for e in errors.iter().take(5) {
        eprintln!("  error: {e}");
    }
    times.sort_by(f64::total_cmp);
    let pct = |q: f64| times[((times.len() as f64 * q) as usize).saturating_sub(1)];
    println!(
        "{clients} clients, {seconds} s: {} calls, {:.0} calls/s, p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.1} ms, {} errors",
        times.len(),
        times.len() as f64 / wall,
        pct(0.5),
        pct(0.95),
        pct(0.99),
        times.last().copied().unwrap_or(0.0),
        errors.len()
    );
    println!(
        "CPU: server {:.0} µs per call ({:.1} s), load generator {:.0} µs per call ({:.1} s)",
        server_cpu / times.len() as f64 * 1e6,
        server_cpu,
        own_cpu / times.len() as f64 * 1e6,
        own_cpu
    );
    for (tool, mut ts) in per_tool {
        ts.sort_by(f64::total_cmp);
        let at = |q: f64| ts[((ts.len() as f64 * q) as usize).saturating_sub(1)];
        println!(
            "  {tool:<22} {:>6} calls, p50 {:.2} ms, p95 {:.2} ms",
            ts.len(),
            at(0.5),
            at(0.95)
        );
    }
    println!(
        "sessions started again (server or session gone, the call retried): {}",
        results.iter().map(|r| r.2).sum::<usize>()
    );
    let peaks: Vec<u64> = pids.iter().map(|&p| status_mib(p, "VmHWM")).collect();
    println!(
        "server RSS before the load: {rss_before:?} MiB, after: {:?} MiB, peak: {peaks:?} MiB",
        rss(&pids)
    );
    if let Some(server) = server.as_mut() {
        let _ = server.kill();
        let _ = server.wait();
    }
}
