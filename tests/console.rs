//! The web console (`GET /`) in a real browser: Debian's headless Chromium,
//! driven over WebDriver (chromedriver, `fantoccini`), against a real
//! `cruxe serve` on repositories the tests build. `make test` installs the
//! browser and its driver (`make deps`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::mcp::{Server, call, serve, serve_paths, wait_ready, wait_ready_with};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// One browser at a time: four Chromiums on two cores would time each other
/// rather than the page (the 330-node layout took 0.2-0.3 s alone, 0.86 s so).
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// chromedriver on a port of its own, stopped with the test; the next test's
/// browser starts then.
struct Driver {
    child: Child,
    url: String,
    _profile: tempfile::TempDir,
    _turn: MutexGuard<'static, ()>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn driver() -> Driver {
    let turn = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    for bin in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(bin).exists(),
            "{bin} is missing: `make deps` installs Debian's chromium and chromium-driver"
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _profile: tempfile::tempdir().expect("profile"),
        _turn: turn,
    }
}

async fn browser(d: &Driver) -> Client {
    // The flags a closed network needs (no background connections), as root.
    let caps = json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1280,860",
                format!("--user-data-dir={}", d._profile.path().display()),
            ]
        }
    });
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&d.url)
        .await
        .expect("a Chromium session")
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn console_url(server: &Server, query: &str) -> String {
    let mut q = String::new();
    for b in query.bytes() {
        if b.is_ascii_alphanumeric() {
            q.push(b as char);
        } else {
            q.push_str(&format!("%{b:02X}"));
        }
    }
    format!("http://{}/?q={q}", server.addr)
}

/// Waits until the page has finished what it started (its `body[data-ready]`)
/// and no query is running.
async fn settled(c: &Client) {
    until(
        c,
        "the console to settle",
        "document.body.dataset.ready === 'true' && document.getElementById('summary').textContent !== 'running…'",
    )
    .await;
}

/// Waits for `script` (a JS expression) to be true. The deadline guards
/// against a hang; it is not a speed bound (CI machines are busy).
async fn until(c: &Client, what: &str, script: &str) {
    let started = Instant::now();
    loop {
        let v = c
            .execute(&format!("return {script}"), vec![])
            .await
            .expect("script");
        if v == Value::Bool(true) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(&format!("return {script}"), vec![])
        .await
        .expect("script")
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .expect(css)
        .text()
        .await
        .expect("text")
}

/// Types `query` into the editor and runs it with Ctrl-Enter (keys only).
async fn run_by_keyboard(c: &Client, query: &str) {
    let editor = c.find(Locator::Css("#editor")).await.expect("editor");
    c.execute(
        "document.getElementById('editor').value = ''; document.getElementById('editor').focus();",
        vec![],
    )
    .await
    .expect("focus");
    editor.send_keys(query).await.expect("type");
    // Control down, Enter, then every modifier up (WebDriver's NULL key).
    editor
        .send_keys("\u{E009}\u{E007}\u{E000}")
        .await
        .expect("ctrl-enter");
    settled(c).await;
}

/// A repo of `files` Python files with `per_file` functions each.
fn generated_repo(root: &Path, files: usize, per_file: usize) {
    for f in 0..files {
        let mut src = String::new();
        for g in 0..per_file {
            src.push_str(&format!("def f{f}_{g}(x):\n    return x + {g}\n\n"));
        }
        std::fs::write(root.join(format!("m{f}.py")), src).expect("write");
    }
}

#[test]
fn the_console_runs_queries_draws_graphs_and_refuses_writes() {
    let server = serve(&["calls/rust"], &[], &[]);
    wait_ready(&server);
    let d = driver();
    block_on(async {
        let c = browser(&d).await;

        // A table query opened from a link: its rows, as the MCP tool gives them.
        let table = "MATCH (s:Symbol) WHERE s.repo = $repo RETURN s.name AS name, s.kind AS kind ORDER BY name, kind";
        c.goto(&console_url(&server, table)).await.expect("open");
        settled(&c).await;
        let expected = call(
            &server,
            "run_cypher",
            json!({"query": table, "limit": 1000}),
        );
        let rows = js(
            &c,
            "[...document.querySelectorAll('#table-view tbody tr')].map(r => [...r.cells].map(td => td.textContent))",
        )
        .await;
        assert_eq!(rows, expected["rows"], "the table shows the tool's rows");
        assert!(rows.as_array().expect("rows").len() > 20, "{rows}");
        assert_eq!(
            js(&c, "document.getElementById('tab-graph').disabled").await,
            Value::Bool(true),
            "no nodes: no graph"
        );

        // Nothing but the cruxe server was asked for anything.
        let origins = js(
            &c,
            "performance.getEntriesByType('resource').map(e => new URL(e.name).origin)",
        )
        .await;
        let own = format!("http://{}", server.addr);
        assert!(
            origins.as_array().expect("list").iter().all(|o| *o == own),
            "{origins}"
        );

        // The schema panel, from the graph itself, with counts.
        let tables = js(
            &c,
            "[...document.querySelectorAll('#schema details')].map(d => d.dataset.table)",
        )
        .await;
        for t in ["Symbol", "File", "IMPORTS", "CONTAINS", "CALLS"] {
            assert!(
                tables.as_array().expect("tables").contains(&json!(t)),
                "{t} missing: {tables}"
            );
        }
        let symbols = call(
            &server,
            "run_cypher",
            json!({"query": "MATCH (s:Symbol) RETURN count(s)"}),
        );
        let shown = text(&c, "#schema details[data-table=Symbol] .count").await;
        assert_eq!(shown.replace(',', ""), symbols["rows"][0][0].to_string());

        // A path query, typed and run from the keyboard: a graph on a canvas.
        run_by_keyboard(
            &c,
            "MATCH p = (f:File)-[:CONTAINS*1..3]->(s:Symbol) WHERE f.repo = $repo AND s.name = 'helper' RETURN p",
        )
        .await;
        assert_eq!(
            js(
                &c,
                "document.getElementById('tab-graph').getAttribute('aria-selected')"
            )
            .await,
            json!("true")
        );
        assert!(
            js(&c, "document.querySelectorAll('#graph canvas').length > 0").await
                == Value::Bool(true)
        );
        let nodes: usize = js(&c, "document.getElementById('graph-view').dataset.nodes")
            .await
            .as_str()
            .expect("nodes")
            .parse()
            .expect("a count");
        assert!(nodes >= 3, "file, function, helper: {nodes}");

        // Keyboard in the graph: move to a node, show it, expand it.
        c.execute("document.getElementById('graph-view').focus()", vec![])
            .await
            .expect("focus graph");
        let view = c.find(Locator::Css("#graph-view")).await.expect("view");
        view.send_keys("\u{E014}").await.expect("arrow right");
        view.send_keys("\u{E007}").await.expect("enter");
        until(&c, "details", "!document.getElementById('details').hidden").await;
        let title = text(&c, "#details-title").await;
        assert!(!title.is_empty());
        view.send_keys("e").await.expect("expand");
        until(
            &c,
            "more nodes",
            &format!("Number(document.getElementById('graph-view').dataset.nodes) > {nodes}"),
        )
        .await;

        // A click on a drawn node shows its properties and its source lines.
        // The layout is random: the node is first moved clear of the others,
        // so that the click lands on it alone however they fell.
        let at = js(
            &c,
            "(() => { const cy = state.cy; const n = cy.nodes().filter(n => n.data('props').name === 'helper')[0]; \
               const bb = cy.nodes().not(n).boundingBox(); \
               n.position({ x: bb.x2 + 120, y: (bb.y1 + bb.y2) / 2 }); cy.fit(undefined, 40); \
               const r = document.getElementById('graph').getBoundingClientRect(); \
               const p = n.renderedPosition(); return [r.left + p.x, r.top + p.y]; })()",
        )
        .await;
        let (x, y) = (at[0].as_f64().expect("x"), at[1].as_f64().expect("y"));
        let click = MouseActions::new("mouse".into())
            .then(PointerAction::MoveTo {
                duration: None,
                x: x.round(),
                y: y.round(),
            })
            .then(PointerAction::Down {
                button: MOUSE_BUTTON_LEFT,
            })
            .then(PointerAction::Up {
                button: MOUSE_BUTTON_LEFT,
            });
        c.perform_actions(click).await.expect("click");
        until(
            &c,
            "the helper's details",
            "document.getElementById('details-title').textContent.endsWith('helper') && document.getElementById('details-source').textContent.includes('helper')",
        )
        .await;

        // A write: the read-only error, and nothing changed.
        let before = call(
            &server,
            "run_cypher",
            json!({"query": "MATCH (r:Repo) RETURN count(r)"}),
        );
        run_by_keyboard(&c, "CREATE (:Repo {name: 'evil', root: '/'})").await;
        let error = text(&c, "#error").await;
        assert!(error.contains("query_not_read_only"), "{error}");
        let after = call(
            &server,
            "run_cypher",
            json!({"query": "MATCH (r:Repo) RETURN count(r)"}),
        );
        assert_eq!(before["rows"], after["rows"]);

        // A syntax error says where.
        run_by_keyboard(&c, "MATCH (s:Symbol RETURN s").await;
        let error = text(&c, "#error").await;
        assert!(
            error.contains("query_invalid") && error.contains("offset"),
            "{error}"
        );

        // Every example runs (on this repo) without an error.
        let examples = c
            .find_all(Locator::Css("#examples button"))
            .await
            .expect("examples");
        assert!(examples.len() >= 6);
        for b in examples {
            let title = b.text().await.expect("title");
            b.click().await.expect("click");
            settled(&c).await;
            assert_eq!(
                js(&c, "document.getElementById('error').hidden").await,
                Value::Bool(true),
                "{title}: {}",
                text(&c, "#error").await
            );
        }

        // Copy link gives the address that opens the console with the query.
        run_by_keyboard(&c, "RETURN 1 + 1 AS two").await;
        c.find(Locator::Css("#copy-link"))
            .await
            .expect("button")
            .click()
            .await
            .expect("click");
        let link = js(&c, "document.getElementById('link').value").await;
        assert_eq!(
            link,
            json!(format!(
                "http://{}/?q=RETURN%201%20%2B%201%20AS%20two",
                server.addr
            ))
        );

        // 1,000 rows render in under a second; the row cap shows as truncation.
        run_by_keyboard(
            &c,
            "UNWIND range(1, 1500) AS i RETURN i, 'row ' + string(i) AS label",
        )
        .await;
        let summary = text(&c, "#summary").await;
        assert!(
            summary.contains("truncated at the row cap (1000)"),
            "{summary}"
        );
        let rows = js(
            &c,
            "document.querySelectorAll('#table-view tbody tr').length",
        )
        .await;
        assert_eq!(rows, json!(1000));
        let ms: f64 = js(&c, "document.getElementById('summary').dataset.renderMs")
            .await
            .as_str()
            .expect("ms")
            .parse()
            .expect("a number");
        // A figure for docs/BENCHMARKS.md, not a bound: a busy machine is slow.
        eprintln!("console: 1,000 rows drawn in {ms:.1} ms");
        assert!(ms.is_finite() && ms >= 0.0, "{ms} ms");

        c.close().await.expect("close");
    });
}

#[test]
fn a_300_node_graph_lays_out_and_the_page_stays_responsive() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("many");
    std::fs::create_dir_all(&repo).expect("mkdir");
    generated_repo(&repo, 30, 10);
    let server = serve_paths(tmp, &[repo], &[], &[]);
    wait_ready(&server);
    let d = driver();
    block_on(async {
        let c = browser(&d).await;
        c.goto(&console_url(
            &server,
            "MATCH (f:File)-[c:CONTAINS]->(s:Symbol) WHERE f.repo = $repo RETURN f, c, s",
        ))
        .await
        .expect("open");
        settled(&c).await;
        let nodes = js(
            &c,
            "Number(document.getElementById('graph-view').dataset.nodes)",
        )
        .await;
        assert_eq!(nodes, json!(330), "30 files and their 300 functions");
        let ms: f64 = js(&c, "document.getElementById('graph-view').dataset.layoutMs")
            .await
            .as_str()
            .expect("ms")
            .parse()
            .expect("a number");
        // Responsive: the layout has finished (it stops, it is not left
        // running) and the page answers a script after it. The times are
        // figures for docs/BENCHMARKS.md, not bounds: a busy machine is slow.
        let t = Instant::now();
        assert_eq!(js(&c, "1 + 1").await, json!(2));
        let answer = t.elapsed();
        eprintln!(
            "console: 330 nodes laid out in {ms:.0} ms; the page answered a script {} ms later",
            answer.as_millis()
        );
        assert!(ms.is_finite() && ms >= 0.0, "{ms} ms");
        c.close().await.expect("close");
    });
}

#[test]
fn with_a_token_the_console_shows_nothing_until_it_is_given() {
    let server = serve(&["python"], &[], &[("CRUXE_TOKEN", "c0ns0le-t0ken")]);
    // Ready first: a query sent while the repo is still indexed is answered
    // `index_not_ready`, and the page shows that instead of rows.
    wait_ready_with(&server, &[("Authorization", "Bearer c0ns0le-t0ken")]);
    let d = driver();
    block_on(async {
        let c = browser(&d).await;
        let query = "MATCH (f:File) WHERE f.repo = $repo RETURN f.path ORDER BY f.path";
        c.goto(&console_url(&server, query)).await.expect("open");
        settled(&c).await;
        let form = c.find(Locator::Css("#token-form")).await.expect("form");
        assert!(form.is_displayed().await.expect("shown"));
        assert_eq!(
            js(
                &c,
                "document.querySelectorAll('#table-view tr, #schema details').length"
            )
            .await,
            json!(0),
            "no data without the token"
        );
        // A wrong token is refused like none.
        let input = c.find(Locator::Css("#token-input")).await.expect("input");
        input.send_keys("wrong\u{E007}").await.expect("type");
        settled(&c).await;
        assert!(form.is_displayed().await.expect("asked again"));
        assert_eq!(
            js(&c, "document.querySelectorAll('#table-view tr').length").await,
            json!(0)
        );
        // The right one: the query runs, the schema fills.
        let input = c.find(Locator::Css("#token-input")).await.expect("input");
        input
            .send_keys("c0ns0le-t0ken\u{E007}")
            .await
            .expect("type");
        until(
            &c,
            "rows",
            "document.querySelectorAll('#table-view tbody tr').length > 0 && document.querySelectorAll('#schema details').length > 0",
        )
        .await;
        assert!(!form.is_displayed().await.expect("hidden"));
        c.close().await.expect("close");
    });
}

#[test]
fn several_repositories_get_a_picker_and_queries_follow_it() {
    let server = serve(&["python", "go"], &[], &[]);
    wait_ready(&server);
    let d = driver();
    block_on(async {
        let c = browser(&d).await;
        let query = "MATCH (f:File) WHERE f.repo = $repo RETURN DISTINCT f.language AS language";
        c.goto(&console_url(&server, query)).await.expect("open");
        settled(&c).await;
        let picker = c.find(Locator::Css("#target-label")).await.expect("picker");
        assert!(picker.is_displayed().await.expect("shown"));
        let options = js(
            &c,
            "[...document.querySelectorAll('#target option')].map(o => o.textContent)",
        )
        .await;
        assert_eq!(options.as_array().expect("options").len(), 2, "{options}");
        let first = text(&c, "#table-view tbody").await;
        // Choose the other repository with the keyboard, run again.
        c.execute("document.getElementById('target').focus()", vec![])
            .await
            .expect("focus");
        let select = c.find(Locator::Css("#target")).await.expect("select");
        select.send_keys("\u{E015}").await.expect("arrow down");
        settled(&c).await;
        run_by_keyboard(&c, query).await;
        let second = text(&c, "#table-view tbody").await;
        let mut both = [first.trim().to_string(), second.trim().to_string()];
        both.sort();
        assert_eq!(both, ["go".to_string(), "python".to_string()]);
        c.close().await.expect("close");
    });
}

/// A repo whose call graph has a hub: `core.hub` is called by `step0` of each
/// of `packages` packages (`pkgN/util.py`, one basename everywhere), `stepJ`
/// calls `stepJ-1`; the hub also makes a call nothing resolves (a `Name`
/// placeholder). Callers of the hub within k calls: `packages × k` nodes.
fn hub_repo(root: &Path, packages: usize, steps: usize) {
    std::fs::write(
        root.join("core.py"),
        "def hub(x):\n    return mystery_call(x)\n",
    )
    .expect("write");
    for p in 0..packages {
        let dir = root.join(format!("pkg{p}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("__init__.py"), "").expect("write");
        let mut src = String::from("from core import hub\n\n\ndef step0(x):\n    return hub(x)\n");
        for j in 1..steps {
            src.push_str(&format!(
                "\n\ndef step{j}(x):\n    return step{}(x)\n",
                j - 1
            ));
        }
        std::fs::write(dir.join("util.py"), src).expect("write");
    }
}

/// The node labels drawn, and the pairs of them that overlap, by the boxes
/// cytoscape.js itself gives them.
const LABEL_OVERLAPS: &str = "(() => {
  const cy = state.cy;
  const drawn = cy.nodes().filter(n => n.style('label') !== '');
  // Each drawn label within the room it was placed in (else two labels placed
  // apart may still touch, as a layout happens to put them).
  const outside = drawn.filter(n => {
    const r = n.scratch('_labelRoom'), b = n.renderedBoundingBox({ includeNodes: false, includeLabels: true, includeEdges: false });
    return !r || b.x1 < r.x1 - 0.5 || b.x2 > r.x2 + 0.5 || b.y1 < r.y1 - 0.5 || b.y2 > r.y2 + 0.5;
  });
  if (outside.length > 0) return [drawn.length, 100 + outside.length];
  const boxes = drawn.map(n => n.boundingBox({ includeNodes: false, includeLabels: true, includeEdges: false }));
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) overlaps++;
  }
  return [drawn.length, overlaps];
})()";

/// Issue 53: the console's graph stays readable at 30, 100 and 300 nodes
/// (labels drawn only when they fit, a legend, the node the query is about
/// marked, captions told apart), an error clears the old result, node cells
/// say kind, name and place, and expanding skips unresolved-call
/// placeholders. The screenshots in docs/ come from here
/// (`CRUXE_SCREENSHOTS=docs`).
#[test]
fn the_graph_reads_at_30_100_and_300_nodes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("hub");
    std::fs::create_dir_all(&repo).expect("mkdir");
    hub_repo(&repo, 10, 30);
    let server = serve_paths(tmp, &[repo], &[], &[]);
    wait_ready(&server);
    let d = driver();
    let shots = std::env::var_os("CRUXE_SCREENSHOTS").map(PathBuf::from);
    block_on(async {
        let c = browser(&d).await;
        c.goto(&format!("http://{}/", server.addr))
            .await
            .expect("open");
        settled(&c).await;
        for (depth, nodes) in [(3, 31), (10, 101), (30, 301)] {
            run_by_keyboard(
                &c,
                &format!(
                    "MATCH p = (c)-[:CALLS* SHORTEST 1..{depth}]->(h:Symbol {{name: 'hub'}}) WHERE h.repo = $repo RETURN p"
                ),
            )
            .await;
            let shown = js(&c, "state.cy.nodes().length").await;
            assert_eq!(shown, json!(nodes), "{depth} calls deep");
            // The hub is what every path is about: marked, its label drawn.
            let roots = js(&c, "state.cy.nodes('.root').map(n => n.data('props').name)").await;
            assert_eq!(roots, json!(["hub"]), "{depth}");
            // A legend of what is shown.
            let legend = js(
                &c,
                "[document.getElementById('legend').dataset.nodeKinds, document.getElementById('legend').dataset.edgeKinds]",
            )
            .await;
            assert_eq!(legend, json!(["function", "CALLS"]), "{depth}");
            assert!(
                text(&c, "#legend")
                    .await
                    .contains("what the query is about")
            );
            // Same-named functions of same-named files read apart.
            let captions = js(&c, "state.cy.nodes().map(n => n.data('caption'))").await;
            let captions: Vec<&str> = captions
                .as_array()
                .expect("captions")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let unique: std::collections::HashSet<&str> = captions.iter().copied().collect();
            assert_eq!(unique.len(), captions.len(), "{captions:?}");
            assert!(captions.contains(&"step0 · pkg3/util.py"), "{captions:?}");
            // No two drawn labels overlap; past a few dozen nodes only the
            // marked one is drawn until the view is zoomed in.
            let [drawn, overlaps] = js(&c, LABEL_OVERLAPS)
                .await
                .as_array()
                .map(|v| [v[0].as_u64().unwrap_or(0), v[1].as_u64().unwrap_or(99)])
                .expect("overlaps");
            eprintln!("console: {nodes} nodes, {drawn} labels drawn, {overlaps} overlapping");
            assert_eq!(
                overlaps, 0,
                "{nodes} nodes: {drawn} labels drawn (100 + n: n of them outside the room placed for them)"
            );
            assert!(drawn >= 1, "the hub's label");
            let png = c.screenshot().await.expect("screenshot");
            assert!(png.starts_with(b"\x89PNG"));
            let name = format!("console-graph-{}.png", nodes - 1);
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            std::fs::write(dir.join(&name), &png).expect("write screenshot");
            if let Some(out) = &shots {
                std::fs::write(out.join(&name), &png).expect("write screenshot");
            }
        }

        // Hovering a node draws its label, whatever the zoom.
        let at = js(
            &c,
            "(() => { const n = state.cy.nodes().filter(n => !n.hasClass('root'))[0]; \
               const r = document.getElementById('graph').getBoundingClientRect(); \
               const p = n.renderedPosition(); return [r.left + p.x, r.top + p.y, n.id()]; })()",
        )
        .await;
        let hover = MouseActions::new("mouse".into()).then(PointerAction::MoveTo {
            duration: None,
            x: at[0].as_f64().expect("x").round(),
            y: at[1].as_f64().expect("y").round(),
        });
        c.perform_actions(hover).await.expect("hover");
        until(
            &c,
            "the hovered label",
            &format!("state.cy.getElementById({}).hasClass('hover')", at[2]),
        )
        .await;

        // Expanding the hub brings its callers and file, not the placeholder
        // of its unresolved call.
        c.execute("expand(state.cy.nodes('.root')[0])", vec![])
            .await
            .expect("expand");
        until(
            &c,
            "the expanded hub",
            "state.cy.nodes().some(n => n.data('props')._label === 'File')",
        )
        .await;
        let names = js(
            &c,
            "state.cy.nodes().filter(n => n.data('cls') === 'Name').length",
        )
        .await;
        assert_eq!(
            names,
            json!(0),
            "expansion skips unresolved-call placeholders"
        );
        let with_name = call(
            &server,
            "run_cypher",
            json!({"query": "MATCH (s:Symbol {name: 'hub'})-[:UNRESOLVED]->(n:Name) RETURN n.name"}),
        );
        assert_eq!(
            with_name["rows"],
            json!([["mystery_call"]]),
            "the placeholder exists"
        );

        // A node cell says kind, name and place.
        run_by_keyboard(&c, "MATCH (s:Symbol {name: 'hub'}) RETURN s").await;
        let cell = js(
            &c,
            "document.querySelector('#table-view tbody td').textContent",
        )
        .await;
        assert_eq!(cell, "(Symbol fn core.hub · core.py:1)");

        // A failed query leaves nothing of the last answer on screen.
        run_by_keyboard(&c, "MATCH p = (c)-[:CALLS]->(h:Symbol) RETURN p LIMIT 5").await;
        assert_eq!(js(&c, "state.cy !== null").await, json!(true));
        run_by_keyboard(&c, "MATCH (s:Symbol RETURN s").await;
        let cleared = js(
            &c,
            "[state.cy === null, document.getElementById('table-view').children.length, \
              document.getElementById('graph-view').hidden, document.getElementById('tab-graph').disabled, \
              document.getElementById('legend').children.length, document.getElementById('error').hidden]",
        )
        .await;
        assert_eq!(cleared, json!([true, 0, true, true, 0, false]));
        c.close().await.expect("close");
    });
}
