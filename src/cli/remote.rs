//! The read commands through a running server. A server holds its data dir's
//! graph for as long as it runs (Kuzu lets no other process open a database
//! its writer holds), and records where it answers (`server.json`, see
//! `DataDir::record_server`): `status`, `cypher` and every read command then
//! ask it over MCP and print what they would have printed from the graph. A record a
//! killed server left behind names a port nobody answers: then the commands
//! read the graph themselves.
//!
//! A small MCP client over one loopback HTTP/1.0 connection a request: no body
//! framing to undo (the server closes the connection after the answer), and
//! answers come as JSON or as server-sent events, both read here.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::store::datadir::DataDir;

/// An MCP session with the server recorded in a data dir.
pub struct Remote {
    host: String,
    path: String,
    session: Option<String>,
    token: Option<String>,
    next_id: u64,
}

/// How long a call may take: a Cypher query is stopped by the server at its
/// own limit well before this.
const TIMEOUT: Duration = Duration::from_secs(120);

impl Remote {
    /// The server recorded in `data`, if there is one and it answers.
    pub fn connect(data: &DataDir) -> Option<Remote> {
        let record = data.recorded_server()?;
        let rest = record.url.strip_prefix("http://")?;
        let (host, path) = rest.split_once('/').map_or((rest, "/"), |(h, p)| (h, p));
        let mut remote = Remote {
            host: host.to_string(),
            path: format!("/{}", path.trim_start_matches('/')),
            session: None,
            token: std::env::var("CRUXE_TOKEN")
                .ok()
                .filter(|t| !t.trim().is_empty()),
            next_id: 1,
        };
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "cruxe-cli", "version": env!("CARGO_PKG_VERSION")},
        });
        remote.request("initialize", init).ok()?;
        remote
            .post(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
            )
            .ok()?;
        Some(remote)
    }

    /// Calls `tool`: its answer, and whether it is an error.
    pub fn call(&mut self, tool: &str, args: Value) -> Result<(Value, bool)> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        let is_error = result["isError"] == true;
        let answer = match result.get("structuredContent") {
            Some(v) if !v.is_null() => v.clone(),
            _ => {
                let text = result["content"][0]["text"].as_str().unwrap_or("{}");
                serde_json::from_str(text).context("the server's answer is not JSON")?
            }
        };
        Ok((answer, is_error))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self
            .post(&msg, Some(id))?
            .with_context(|| format!("the server sent no answer to {method}"))?;
        if let Some(e) = reply.get("error") {
            bail!("the server refused {method}: {}", e["message"]);
        }
        Ok(reply["result"].clone())
    }

    /// Posts one message; for a request, reads the response with id `id`.
    fn post(&mut self, msg: &Value, id: Option<u64>) -> Result<Option<Value>> {
        let body = msg.to_string();
        let mut stream = TcpStream::connect(&self.host)
            .with_context(|| format!("cannot reach the server at {}", self.host))?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        let mut head = format!(
            "POST {} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.host,
            body.len()
        );
        if let Some(s) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {}\r\n", t.trim()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status)?;
        let code: u16 = status
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .with_context(|| format!("not an HTTP answer: {status:?}"))?;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("mcp-session-id")
            {
                self.session = Some(v.trim().to_string());
            }
        }
        if code == 401 {
            bail!(
                "the server at {} wants a bearer token: set CRUXE_TOKEN",
                self.host
            );
        }
        if !(200..300).contains(&code) {
            bail!("the server at {} answered HTTP {code}", self.host);
        }
        let Some(id) = id else { return Ok(None) };
        // JSON, or events whose `data:` lines carry messages: the one with our
        // id is the answer (others are notifications, or empty priming events).
        let mut text = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                break;
            }
            let data = line.trim_end().strip_prefix("data:").map(str::trim);
            let candidate = data.unwrap_or_else(|| line.trim_end());
            if let Ok(v) = serde_json::from_str::<Value>(candidate)
                && v["id"] == id
            {
                return Ok(Some(v));
            }
            if data.is_none() {
                text.push_str(&line);
            }
        }
        let v: Value = serde_json::from_str(text.trim()).context("no answer from the server")?;
        Ok((v["id"] == id).then_some(v))
    }
}
