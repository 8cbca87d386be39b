//! Compaction: re-index runs that replace many rows grow Kuzu's file (it does
//! not reuse the space of deleted rows); once it doubles, the graph is rewritten
//! with only its live rows. The rewritten graph must hold exactly what a fresh
//! index holds, and a server must keep answering across the swap.

use std::path::Path;
use std::time::{Duration, Instant};

use cruxe::index::{Silent, index_repo};
use cruxe::store::datadir::DataDir;
use serde_json::json;

use crate::common::{opts, rows, s, small_graph};
use crate::mcp::{call, client, results, serve_paths, wait_answered, wait_ready};

/// A Python tree: twenty small modules, one importing the big one, and
/// `pkg/big.py` with `classes` classes.
fn write_tree(root: &Path, classes: usize) {
    std::fs::create_dir_all(root.join("pkg")).expect("mkdir");
    std::fs::write(root.join("pkg/__init__.py"), "").expect("write");
    for i in 0..20 {
        let mut text = String::from("from pkg.big import C1_0\n\n");
        for j in 0..30 {
            text.push_str(&format!("def f{i}_{j}(x):\n    return x + {j}\n\n"));
        }
        std::fs::write(root.join(format!("pkg/m{i}.py")), text).expect("write");
    }
    write_big(root, classes, 0);
}

/// Rewrites `pkg/big.py` in state `round`: every class renamed and moved down
/// a line (every row of the file replaced), plus `edited_<round>()`.
fn write_big(root: &Path, classes: usize, round: usize) {
    let mut text = format!("# round {round}\n\ndef edited_{round}():\n    return {round}\n\n");
    text.push_str("class C1_0:\n    pass\n\n");
    for j in 0..classes {
        // Every third class documented with what CSV must carry: quotes,
        // commas, a backslash, a line break, non-ASCII; the rest undocumented
        // (an empty string, which must not come back as NULL).
        let doc = match j % 3 {
            0 => format!(
                "        \"\"\"Says \"{j}\", twice; a \\\\ path\n        on two lines: é\"\"\"\n"
            ),
            _ => String::new(),
        };
        text.push_str(&format!(
            "class C{j}_{round}:\n    def m(self):\n{doc}        return {j}\n\n"
        ));
    }
    std::fs::write(root.join("pkg/big.py"), text).expect("write");
}

/// The manifest's current database file and its built size.
fn manifest(data: &Path) -> (String, u64) {
    let text = std::fs::read_to_string(data.join("manifest.json")).expect("manifest");
    let m: serde_json::Value = serde_json::from_str(&text).expect("json");
    (
        m["graph"].as_str().expect("graph").to_string(),
        m["built_bytes"].as_u64().expect("built_bytes"),
    )
}

fn file_len(data: &Path, name: &str) -> u64 {
    std::fs::metadata(data.join(name))
        .expect("graph file")
        .len()
}

/// Everything the graph holds, as sorted lines: nodes with their properties,
/// nesting and import edges.
fn contents(data: &DataDir) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let mut out = Vec::new();
    for (what, q) in [
        (
            "file",
            "MATCH (r:Ref)-[:HAS_FILE]->(f:File) RETURN r.id AS a, f.path AS b, f.content_hash AS c, f.error_lines AS d",
        ),
        (
            "symbol",
            "MATCH (s:Symbol) RETURN s.id AS a, s.qualified_name AS b, s.line_start AS c, s.signature + '|' + s.doc + '|' + s.visibility AS d",
        ),
        (
            "contains",
            "MATCH (p)-[:CONTAINS]->(c:Symbol) RETURN p.id AS a, c.id AS b, '' AS c, '' AS d",
        ),
        (
            "imports",
            "MATCH (f:File)-[e:IMPORTS]->(t) RETURN f.path AS a, t.id AS b, e.line AS c, e.to_name + '|' + e.alias + '|' + e.confidence AS d",
        ),
    ] {
        for r in rows(&store, q) {
            out.push(format!(
                "{what} {} {} {} {}",
                s(&r["a"]),
                s(&r["b"]),
                s(&r["c"]),
                s(&r["d"])
            ));
        }
    }
    out.sort();
    out
}

/// CLI-style runs (each its own process state): the file never stays at twice
/// its built size, is rewritten when it gets there, and the rewritten graph
/// equals a fresh index of the same tree, and takes the next run.
#[test]
fn an_outgrown_graph_is_compacted_to_what_a_fresh_index_holds() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    write_tree(&repo, 1500);
    let data = DataDir::new(tmp.path().join("data"));
    let mut o = opts("py");
    o.graph.compact_growth_bytes = 1 << 20;
    index_repo(&repo, &data, &o, &Silent).expect("index");
    let (first, _) = manifest(data.root());
    let mut grew_to = 0;
    for round in 1..=8 {
        write_big(&repo, 1500, round);
        index_repo(&repo, &data, &o, &Silent).expect("re-index");
        let (graph, built_now) = manifest(data.root());
        let len = file_len(data.root(), &graph);
        grew_to = grew_to.max(len);
        assert!(
            len < 2 * built_now,
            "round {round}: the file is {len} bytes, built at {built_now}: not compacted"
        );
        // Only the current database's files are left.
        let graphs = std::fs::read_dir(data.root())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("graph-") && !n.starts_with(&graph))
            .collect::<Vec<_>>();
        assert!(graphs.is_empty(), "round {round}: left over {graphs:?}");
    }
    let (last, _) = manifest(data.root());
    assert_ne!(last, first, "never compacted (grew to {grew_to} bytes)");
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index_repo(&repo, &fresh, &o, &Silent).expect("fresh index");
    let (got, want) = (contents(&data), contents(&fresh));
    assert!(want.len() > 3000, "{}", want.len());
    assert!(
        want.iter()
            .any(|l| l.contains("twice; a \\") && l.contains("\n") && l.contains('é')),
        "no documented class in the graph"
    );
    assert_eq!(got, want);
    // Empty strings stay empty strings (a NULL would drop out of the
    // concatenations above and of tools' comparisons alike).
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let nulls = rows(
        &store,
        "MATCH (s:Symbol) WHERE s.doc IS NULL OR s.signature IS NULL RETURN count(*) AS n",
    );
    assert_eq!(s(&nulls[0]["n"]), "0");
}

/// A server compacts between runs while answering; answers, `run_cypher` and
/// the next runs go on from the compacted graph.
#[test]
fn a_server_compacts_and_keeps_answering() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    write_tree(&repo, 1500);
    let data = tmp.path().join("data");
    let server = serve_paths(
        tmp,
        std::slice::from_ref(&repo),
        &[],
        &[
            ("CRUXE_COMPACT_GROWTH_MB", "1"),
            ("CRUXE_CHECKPOINT_AFTER_MS", "50"),
        ],
    );
    wait_ready(&server);
    let (first, _) = manifest(&data);
    let started = Instant::now();
    let mut round = 0;
    while manifest(&data).0 == first {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "never compacted after {round} rounds"
        );
        round += 1;
        write_big(&repo, 1500, round);
        wait_answered(&server, &[format!("edited_{round}")], 60);
        // The run's checkpoint (and the compaction after it) follow a pause.
        std::thread::sleep(Duration::from_millis(400));
    }
    // The next change is indexed into the compacted graph and answered.
    round += 1;
    write_big(&repo, 1500, round);
    wait_answered(&server, &[format!("edited_{round}")], 60);
    let report = client(json!({
        "transport": "http", "url": server.url(),
        "calls": [["get_symbol_hierarchy", {"symbol_name": format!("edited_{}", round - 1)}]],
    }));
    let r = results(&report);
    assert_eq!(
        r[0].0["error"]["code"], "symbol_not_found",
        "an earlier round's name is still found: {}",
        r[0].0
    );
    // run_cypher reads a snapshot of the compacted graph once it is finished.
    let started = Instant::now();
    loop {
        let v = call(
            &server,
            "run_cypher",
            json!({"query": format!("MATCH (s:Symbol) WHERE s.name = 'edited_{round}' RETURN count(*) AS n")}),
        );
        if v["rows"][0][0] == 1 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "run_cypher never saw round {round}: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (graph, built) = manifest(&data);
    assert!(file_len(&data, &graph) < 2 * built);
}

/// In a server, new work waiting makes a compaction give way (its copy is
/// dropped, nothing published, the live file untouched), unless the file has
/// grown past three times its built size: then it is compacted whatever waits.
#[test]
fn a_compaction_gives_way_to_new_work_until_the_file_is_three_times_its_size() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    write_tree(&repo, 1500);
    let data = DataDir::new(tmp.path().join("data"));
    // Runs that never compact themselves; the calls below do.
    let mut o = opts("py");
    o.graph.compact_growth_bytes = 256 << 20;
    index_repo(&repo, &data, &o, &Silent).expect("index");
    let mut compacting = small_graph();
    compacting.compact_growth_bytes = 1 << 20;
    let leftovers = |data: &DataDir, graph: &str| {
        std::fs::read_dir(data.root())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                (n.starts_with("graph-") && !n.starts_with(graph)) || n.starts_with(".compact-")
            })
            .collect::<Vec<_>>()
    };
    let mut round = 0;
    let mut gave_way = 0;
    loop {
        round += 1;
        assert!(round <= 30, "the file never reached three times its size");
        write_big(&repo, 1500, round);
        index_repo(&repo, &data, &o, &Silent).expect("re-index");
        let (graph, built) = manifest(data.root());
        let len = file_len(data.root(), &graph);
        if len < 2 * built {
            continue;
        }
        let live = data.open_graph(&compacting).expect("open");
        let asked = std::cell::Cell::new(0);
        // Work arrives before the copy starts, and once it is under way.
        let before = data
            .compact_if_outgrown(&live, &compacting, &|| {}, &|| true)
            .expect("compact");
        let during = data
            .compact_if_outgrown(&live, &compacting, &|| {}, &|| {
                asked.set(asked.get() + 1);
                asked.get() > 1
            })
            .expect("compact");
        drop(live);
        if len < 3 * built {
            assert!(!before && !during, "round {round}: did not give way");
            assert!(asked.get() > 1, "never asked during the copy");
            assert_eq!(manifest(data.root()).0, graph, "published anyway");
            assert!(
                leftovers(&data, &graph).is_empty(),
                "{:?}",
                leftovers(&data, &graph)
            );
            gave_way += 1;
            continue;
        }
        assert!(
            before,
            "round {round}: a file at {len} bytes, built at {built}, was not compacted"
        );
        assert!(
            gave_way > 0,
            "the file went from under twice to three times its size in one run"
        );
        let (now, _) = manifest(data.root());
        assert_ne!(now, graph);
        assert!(
            leftovers(&data, &now).is_empty(),
            "{:?}",
            leftovers(&data, &now)
        );
        break;
    }
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index_repo(&repo, &fresh, &o, &Silent).expect("fresh index");
    assert_eq!(contents(&data), contents(&fresh));
}
