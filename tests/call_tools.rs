//! The call-graph tools end to end: `find_references`, `get_call_graph`,
//! `find_implementations` and `analyze_impact` over the trap fixtures
//! (`fixtures/calls/*`, each served as its own repository) through a real
//! `cruxe serve` and the MCP Python SDK, and `cruxe refs`, `calls` and
//! `impact` as a user runs them.
//!
//! The answers are checked against the graph itself (its edges dumped with
//! `run_cypher` and walked here, breadth-first), so they test the tools, not
//! the resolver; and spot-checked on traps whose edges `expected.json` lists.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{copy_tree, cruxe, fixture, s, small_graph, stderr, stdout};
use crate::mcp::{Server, call, call_all, serve, wait_ready};

const LANGS: [&str; 4] = ["rust", "python", "typescript", "go"];

fn serve_all() -> Server {
    let server = serve(
        &["calls/rust", "calls/python", "calls/typescript", "calls/go"],
        &[],
        &[],
    );
    wait_ready(&server);
    server
}

/// Rows of a read-only query through `run_cypher`, as objects by column.
fn cypher(server: &Server, repo: &str, query: &str) -> Vec<BTreeMap<String, Value>> {
    let v = call(
        server,
        "run_cypher",
        json!({"repo": repo, "query": query, "limit": 10000, "max_tokens": 1_000_000}),
    );
    assert_eq!(v["truncated"], false, "{query}");
    let columns: Vec<String> = v["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(s)
        .collect();
    v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            columns
                .iter()
                .cloned()
                .zip(r.as_array().expect("row").iter().cloned())
                .collect()
        })
        .collect()
}

/// A call site: (from id, to id, line, col).
type Site = (String, String, i64, i64);

/// The repo's `CALLS` edges of every tier but `name`.
fn call_edges(server: &Server, repo: &str) -> Vec<(Site, String)> {
    cypher(
        server,
        repo,
        "MATCH (a)-[e:CALLS]->(b:Symbol) WHERE b.repo = $repo AND e.confidence <> 'name' \
         RETURN a.id AS a, b.id AS b, e.line AS line, e.col AS col, e.confidence AS confidence",
    )
    .into_iter()
    .map(|r| {
        (
            (
                s(&r["a"]),
                s(&r["b"]),
                r["line"].as_i64().expect("line"),
                r["col"].as_i64().expect("col"),
            ),
            s(&r["confidence"]),
        )
    })
    .collect()
}

/// Every node within `depth` edges of `root` along `next`, at its shortest
/// distance (the root left out, as a walk never returns its start).
fn bfs(root: &str, depth: usize, next: &HashMap<&str, Vec<&str>>) -> BTreeMap<String, usize> {
    let mut dist: BTreeMap<String, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([(root.to_string(), 0)]);
    let mut seen = HashSet::from([root.to_string()]);
    while let Some((n, d)) = queue.pop_front() {
        if d == depth {
            continue;
        }
        for m in next.get(n.as_str()).into_iter().flatten() {
            if seen.insert(m.to_string()) {
                dist.insert(m.to_string(), d + 1);
                queue.push_back((m.to_string(), d + 1));
            }
        }
    }
    dist
}

fn has_cycle(sites: &BTreeSet<Site>) -> bool {
    let nodes: BTreeSet<&str> = sites
        .iter()
        .flat_map(|(a, b, _, _)| [a.as_str(), b.as_str()])
        .collect();
    let next: HashMap<&str, Vec<&str>> =
        sites.iter().fold(HashMap::new(), |mut m, (a, b, _, _)| {
            m.entry(a.as_str()).or_default().push(b.as_str());
            m
        });
    nodes.iter().any(|n| {
        next.get(n)
            .into_iter()
            .flatten()
            .any(|m| m == n || bfs(m, nodes.len(), &next).contains_key(*n))
    })
}

#[test]
fn every_call_read_statement_prepares_for_every_depth_and_tier() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = cruxe::store::datadir::DataDir::new(tmp.path().join("data"));
    data.build_aside(&small_graph(), |_| Ok(()))
        .expect("empty graph");
    let store = data.open_graph(&small_graph()).expect("open");
    let templates = cruxe::store::graph::CALL_READ_QUERIES
        .iter()
        .filter(|(_, t)| t.contains("{depth}"))
        .count();
    let plain = cruxe::store::graph::CALL_READ_QUERIES.len() - templates;
    assert_eq!(templates, 5);
    let prepared = store
        .prepare_call_reads()
        .expect("every statement prepares");
    // Impact's walk goes to depth 30, the others' to 5; 7 tier cuts each.
    use cruxe::store::graph::GraphStore;
    let depths = (templates - 1) * GraphStore::MAX_CALL_DEPTH + GraphStore::MAX_IMPACT_DEPTH;
    assert_eq!(prepared, plain + depths * 7);
}

/// `get_call_graph` answers what a breadth-first walk of the repo's `CALLS`
/// edges answers: the same nodes at the same depths, the same call sites
/// among them, the same totals and cycles; for every function, callees of
/// every symbol that calls something, in all four languages.
#[test]
fn call_graph_agrees_with_a_walk_of_the_edges() {
    let server = serve_all();
    let mut checked = 0;
    for repo in LANGS {
        let edges = call_edges(&server, repo);
        assert!(edges.len() >= 20, "{repo}: {} call edges", edges.len());
        let sites: BTreeSet<Site> = edges.iter().map(|(s, _)| s.clone()).collect();
        let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut into: HashMap<&str, Vec<&str>> = HashMap::new();
        for (a, b, _, _) in &sites {
            out.entry(a).or_default().push(b);
            into.entry(b).or_default().push(a);
        }
        let symbols = cypher(
            &server,
            repo,
            "MATCH (s:Symbol) WHERE s.repo = $repo AND s.kind IN ['fn', 'method'] \
             RETURN s.id AS id, s.kind AS kind, s.qualified_name AS qn, s.path AS path",
        );
        // Callers of functions (methods may gain dispatch callers: below),
        // callees of anything that calls.
        let mut asks = Vec::new();
        for sym in &symbols {
            let id = s(&sym["id"]);
            let callers = s(&sym["kind"]) == "fn" && into.contains_key(id.as_str());
            let callees = out.contains_key(id.as_str());
            for (direction, wanted) in [("callers", callers), ("callees", callees)] {
                if wanted {
                    asks.push((id.clone(), direction));
                }
            }
        }
        let calls: Vec<(&str, Value)> = asks
            .iter()
            .map(|(id, direction)| {
                let sym = symbols.iter().find(|x| s(&x["id"]) == *id).expect("sym");
                (
                    "get_call_graph",
                    json!({"repo": repo, "symbol_name": sym["qn"], "path": sym["path"],
                           "direction": direction, "depth": 3, "limit": 2000}),
                )
            })
            .collect();
        for ((v, err), (id, direction)) in call_all(&server, &calls).into_iter().zip(&asks) {
            assert!(!err, "{repo} {id} {direction}: {v}");
            if s(&v["root"]["id"]) != *id {
                continue; // two definitions of one qualified name in a file
            }
            let next = if *direction == "callers" { &into } else { &out };
            let want = bfs(id, 3, next);
            let got: BTreeMap<String, usize> = v["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .filter(|n| n["depth"].as_u64() != Some(0))
                .map(|n| (s(&n["id"]), n["depth"].as_u64().expect("depth") as usize))
                .collect();
            assert_eq!(got, want, "{repo} {direction} of {id}: {v}");
            let mut set: BTreeSet<&str> = want.keys().map(String::as_str).collect();
            set.insert(id);
            let want_sites: BTreeSet<Site> = sites
                .iter()
                .filter(|(a, b, _, _)| set.contains(a.as_str()) && set.contains(b.as_str()))
                .cloned()
                .collect();
            let got_sites: BTreeSet<Site> = v["edges"]
                .as_array()
                .expect("edges")
                .iter()
                .map(|e| {
                    (
                        s(&e["from"]),
                        s(&e["to"]),
                        e["line"].as_i64().expect("line"),
                        e["col"].as_i64().expect("col"),
                    )
                })
                .collect();
            assert_eq!(got_sites, want_sites, "{repo} {direction} of {id}: {v}");
            assert_eq!(v["total_edges"], want_sites.len(), "{v}");
            assert_eq!(v["total_nodes"], want.len(), "{v}");
            assert_eq!(v["truncated"], false, "{v}");
            assert_eq!(v["cycles"], has_cycle(&want_sites), "{repo} {id}: {v}");
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} call graphs checked");
}

/// A symbol's uses in the graph: (its qualified name, its path, the sites as
/// (path, line, kind)).
type Uses = (String, String, BTreeSet<(String, i64, String)>);

/// `find_references` lists each use of a symbol the graph holds, once, with
/// its enclosing symbol and its source line.
#[test]
fn references_agree_with_the_edges_into_each_symbol() {
    let server = serve_all();
    let mut checked = 0;
    for repo in LANGS {
        let uses = cypher(
            &server,
            repo,
            "MATCH (a)-[e:CALLS|REFERENCES|IMPORTS]->(b:Symbol) WHERE b.repo = $repo \
             RETURN b.id AS target, b.qualified_name AS qn, b.path AS tpath, label(e) AS rel, \
                    e.kind AS kind, a.path AS path, e.line AS line, e.col AS col, \
                    label(a) = 'File' AS top",
        );
        let mut per: BTreeMap<String, Uses> = BTreeMap::new();
        for u in &uses {
            let kind = match s(&u["rel"]).as_str() {
                "CALLS" => "call".to_string(),
                "IMPORTS" => "import".to_string(),
                _ => s(&u["kind"]),
            };
            per.entry(s(&u["target"]))
                .or_insert_with(|| (s(&u["qn"]), s(&u["tpath"]), BTreeSet::new()))
                .2
                .insert((s(&u["path"]), u["line"].as_i64().expect("line"), kind));
        }
        let targets: Vec<(&String, &Uses)> = per.iter().collect();
        let calls: Vec<(&str, Value)> = targets
            .iter()
            .map(|(_, (qn, path, _))| {
                (
                    "find_references",
                    json!({"repo": repo, "symbol_name": qn, "path": path, "limit": 1000}),
                )
            })
            .collect();
        for ((v, err), (id, (qn, _, want))) in call_all(&server, &calls).into_iter().zip(&targets) {
            assert!(!err, "{repo} {qn}: {v}");
            if s(&v["symbol"]["symbol_id"]) != **id {
                continue; // a Rust type and its impl blocks share a qualified name
            }
            let refs = v["references"].as_array().expect("references");
            let got: BTreeSet<(String, i64, String)> = refs
                .iter()
                .filter(|r| r.get("via").is_none())
                .map(|r| {
                    (
                        s(&r["path"]),
                        r["line"].as_i64().expect("line"),
                        s(&r["kind"]),
                    )
                })
                .collect();
            assert_eq!(&got, want, "{repo} {qn}: {v}");
            assert_eq!(v["total"], refs.len(), "{v}");
            for r in refs {
                assert!(r["col"].as_i64().expect("col") >= 1, "{r}");
                let line = r["line"].as_i64().expect("line") as usize;
                let source =
                    std::fs::read_to_string(fixture(&format!("calls/{repo}")).join(s(&r["path"])))
                        .expect("fixture file");
                let want = source.lines().nth(line - 1).unwrap_or("").trim();
                assert_eq!(s(&r["text"]), want, "{repo} {qn}: {r}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} symbols checked");
}

/// Traps of the Rust fixture as the four tools answer them.
#[test]
fn the_tools_on_rust_traps() {
    let server = serve(&["calls/rust"], &[], &[]);
    wait_ready(&server);
    let names = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .expect("list")
            .iter()
            .map(|n| s(&n["qualified_name"]))
            .collect()
    };

    // Recursion: a self-edge from the function, a call from top-level code,
    // and one from a macro's template.
    let refs = call(
        &server,
        "find_references",
        json!({"symbol_name": "util::fact"}),
    );
    assert_eq!(refs["symbol"]["qualified_name"], "util::fact");
    assert_eq!(refs["total"], 4, "{refs}");
    assert!(
        refs["references"]
            .as_array()
            .expect("references")
            .iter()
            .any(|r| r["from"]["qualified_name"] == "templated::area_of"),
        "{refs}"
    );
    let top = &refs["references"][0];
    assert_eq!(top["path"], "src/lib.rs");
    assert_eq!(top["line"], 14);
    assert_eq!(
        top["from"],
        Value::Null,
        "top-level code has no enclosing symbol"
    );
    assert_eq!(top["text"], "pub const MAX_FACT: u64 = util::fact(4);");
    assert_eq!(top["col"], 33);
    assert_eq!(refs["next_cursor"], Value::Null);
    // Pages of one.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = call(
            &server,
            "find_references",
            json!({"symbol_name": "util::fact", "limit": 1, "cursor": cursor}),
        );
        assert_eq!(page["total"], 4);
        seen.push(page["references"][0].clone());
        cursor = page["next_cursor"].clone();
        assert_eq!(page["truncated"], !cursor.is_null());
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(Value::Array(seen), refs["references"]);

    let fact = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "util::fact", "direction": "both"}),
    );
    assert_eq!(fact["cycles"], true, "fact calls itself: {fact}");
    assert!(
        fact["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .any(|e| e["from"] == e["to"] && e["confidence"] == "scope"),
        "{fact}"
    );
    let even = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "is_even", "depth": 1}),
    );
    assert_eq!(
        names(&even, "nodes"),
        ["util::is_even", "report::numbers", "util::is_odd"]
    );
    assert_eq!(
        even["cycles"], true,
        "is_odd calls is_even, which calls is_odd: {even}"
    );
    let apply = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "util::apply", "direction": "both", "depth": 3}),
    );
    assert_eq!(apply["cycles"], false, "{apply}");

    // Field receivers (typed) and trait dispatch: callers of Circle::area
    // include the callers of Shape::area, labelled.
    let area = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "shapes::Circle::area", "depth": 1}),
    );
    let by_name: HashMap<String, &Value> = area["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| (s(&n["qualified_name"]), n))
        .collect();
    assert_eq!(by_name["report::Report::total"]["via"], Value::Null);
    assert_eq!(by_name["report::inline_calls"]["depth"], 1);
    assert_eq!(by_name["shapes::Shape::area"]["via"], "declaration");
    assert_eq!(by_name["report::area_of"]["via"], "dispatch");
    assert!(
        !by_name.contains_key("shapes::Square::area"),
        "same-named methods of other types are not callers: {area}"
    );
    let total = area["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .find(|e| e["from"] == by_name["report::Report::total"]["id"])
        .expect("Report::total's call");
    assert_eq!(total["confidence"], "typed");
    assert_eq!(total["line"], 32);

    // Below the dispatch tier, no declaration is followed.
    let typed = call(
        &server,
        "get_call_graph",
        json!({"symbol_name": "shapes::Circle::area", "depth": 1, "min_confidence": "typed"}),
    );
    assert_eq!(
        names(&typed, "nodes"),
        [
            "shapes::Circle::area",
            "globbed::through_static",
            "report::Report::total",
            "report::inline_calls",
            "report::held",
            "report::areas",
            "report::closures",
            "report::by_index",
            "report::via_root",
            "report::count",
            "report::matched",
            "templated::area_of",
            // The methods `macro_rules!` templates write are the callers.
            "templated::Dial::scaled",
            "templated::Gauge::area"
        ],
        "{typed}"
    );

    // Implementations, transitively, with their matching methods.
    let imps = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "Shape", "path": "src/shapes.rs"}),
    );
    let types: Vec<(String, String, i64, Vec<String>)> = imps["types"]
        .as_array()
        .expect("types")
        .iter()
        .map(|t| {
            (
                s(&t["qualified_name"]),
                s(&t["relation"]),
                t["depth"].as_i64().expect("depth"),
                t["methods"]
                    .as_array()
                    .expect("methods")
                    .iter()
                    .map(|m| s(&m["qualified_name"]))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            (
                "shapes::Solid".to_string(),
                "extends".to_string(),
                1,
                vec![]
            ),
            (
                "shapes::Circle".into(),
                "implements".into(),
                1,
                vec!["shapes::Circle::area".into(), "shapes::Circle::name".into()]
            ),
            (
                "shapes::Square".into(),
                "implements".into(),
                1,
                vec!["shapes::Square::area".into(), "shapes::Square::name".into()]
            ),
            // An impl a `macro_rules!` template writes.
            (
                "templated::Gauge".into(),
                "implements".into(),
                1,
                vec![
                    "templated::Gauge::area".into(),
                    "templated::Gauge::name".into()
                ]
            ),
        ],
        "{imps}"
    );
    let supers = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "shapes::Square", "direction": "supertypes"}),
    );
    assert_eq!(names(&supers, "types"), ["shapes::Shape", "shapes::Solid"]);
    let method = call(
        &server,
        "find_implementations",
        json!({"symbol_name": "shapes::Shape::area"}),
    );
    let methods: Vec<String> = method["types"]
        .as_array()
        .expect("types")
        .iter()
        .flat_map(|t| t["methods"].as_array().expect("methods").clone())
        .map(|m| s(&m["qualified_name"]))
        .collect();
    assert_eq!(
        methods,
        [
            "shapes::Circle::area",
            "shapes::Square::area",
            "templated::Gauge::area"
        ]
    );

    // Impact of a change, by distance, with the step toward it.
    let impact = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "util::fact"}),
    );
    let affected: Vec<(String, u64, String, String)> = impact["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| {
            (
                s(&a["qualified_name"]),
                a["distance"].as_u64().expect("distance"),
                s(&a["via"]["qualified_name"]),
                s(&a["via"]["relation"]),
            )
        })
        .collect();
    assert_eq!(
        affected,
        [
            (
                "src/lib.rs".to_string(),
                1,
                "util::fact".to_string(),
                "calls".to_string()
            ),
            // `pub const MAX_FACT: u64 = util::fact(4)`: its value is fact's.
            ("MAX_FACT".into(), 1, "util::fact".into(), "calls".into()),
            (
                "report::numbers::helper".into(),
                1,
                "util::fact".into(),
                "calls".into()
            ),
            // A macro's template calls it; the file invokes the macro.
            (
                "templated::area_of".into(),
                1,
                "util::fact".into(),
                "calls".into()
            ),
            (
                "report::numbers".into(),
                2,
                "report::numbers::helper".into(),
                "calls".into()
            ),
            (
                "src/templated.rs".into(),
                2,
                "templated::area_of".into(),
                "calls".into()
            ),
        ],
        "{impact}"
    );
    // What the macro writes (`fn unit_area`) has no symbol: its callers
    // (`shout`) are not seen.
    assert_eq!(impact["completeness"], "lower_bound", "{impact}");
    assert_eq!(
        impact["unproven_sites"][0]["reason"], "macro_items",
        "{impact}"
    );
    assert_eq!(
        impact["by_distance"],
        json!([{"distance": 1, "count": 4}, {"distance": 2, "count": 2}])
    );
    // A changed method: the callers of the trait method it implements too.
    let impact = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "shapes::Square::area", "depth": 1}),
    );
    let via: HashMap<String, String> = impact["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| (s(&a["qualified_name"]), s(&a["via"]["relation"])))
        .collect();
    assert_eq!(via["report::area_of"], "dispatch", "{impact}");
    assert_eq!(via["report::Report::total"], "calls", "{impact}");
    // A name two `#[cfg]` imports bind: the call is unresolved, the answer a
    // lower bound that says why.
    let impact = call(
        &server,
        "analyze_impact",
        json!({"symbol_name": "util::fast::checksum"}),
    );
    assert_eq!(impact["completeness"], "lower_bound", "{impact}");
    assert!(
        s(&impact["notes"][0]).contains("were not proven"),
        "{impact}"
    );
    assert_eq!(
        impact["unproven_sites"][0]["reason"], "unresolved",
        "{impact}"
    );
}

/// Python: calling a class runs its constructor (`constructs`), and a method
/// of a class declared in a test runs as that test (its pytest node id).
#[test]
fn impact_through_constructors_to_the_tests_around_them() {
    let server = serve_all();
    let impact = call(
        &server,
        "analyze_impact",
        json!({"repo": "python", "symbol_name": "geo.base.Entity.__init__", "depth": 12}),
    );
    let via: HashMap<String, (u64, String)> = impact["affected"]
        .as_array()
        .expect("affected")
        .iter()
        .map(|a| {
            let d = a["distance"].as_u64().expect("distance");
            (s(&a["qualified_name"]), (d, s(&a["via"]["relation"])))
        })
        .collect();
    // Entity.__init__ ← Shape.__init__ ← Circle.__init__ ← Circle(…) …
    assert_eq!(
        via["geo.shapes.Circle"],
        (3, "constructs".into()),
        "{impact}"
    );
    // … ← `class Ring(geo.Circle)` ← `Ring(2.0)` in a test.
    let runs = |v: &Value| -> Vec<String> {
        v["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .map(|t| s(&t["run"]))
            .collect()
    };
    assert!(
        runs(&impact).contains(&"tests/test_app.py::test_made".to_string()),
        "{impact}"
    );
    let impact = call(
        &server,
        "analyze_impact",
        json!({"repo": "python", "symbol_name": "tests.test_app.make_app"}),
    );
    let runs = runs(&impact);
    assert!(
        runs.contains(&"tests/test_app.py::test_nested".to_string()),
        "{impact}"
    );
    assert!(!runs.iter().any(|r| r.contains("Local")), "{runs:?}");
}

/// A nested function exists once the function around it runs: a change to
/// what a decorator's inner `wrapper` calls reaches the decorator
/// (`encloses`), and the walk goes on from there.
#[test]
fn impact_reaches_the_function_around_a_nested_one() {
    let server = serve_all();
    let impact = call(
        &server,
        "analyze_impact",
        json!({"repo": "python", "symbol_name": "geo.util.double"}),
    );
    let via = |qn: &str| -> Option<(u64, String)> {
        impact["affected"].as_array()?.iter().find_map(|a| {
            (a["qualified_name"] == qn).then(|| {
                let d = a["distance"].as_u64().expect("distance");
                (d, s(&a["via"]["relation"]))
            })
        })
    };
    assert_eq!(
        via("geo.util.traced.wrapper"),
        Some((1, "calls".into())),
        "{impact}"
    );
    // Through the function around it, or the `return wrapper` that hands
    // it out as a value: both are one step, and either may be shown.
    let (distance, relation) = via("geo.util.traced").expect("traced is affected");
    assert_eq!(distance, 2, "{impact}");
    assert!(
        relation == "encloses" || relation == "references",
        "{impact}"
    );
    assert_eq!(
        impact["affected"]
            .as_array()
            .expect("affected")
            .iter()
            .filter(|a| a["qualified_name"] == "geo.util.traced")
            .count(),
        1,
        "{impact}"
    );
}

/// Bad arguments get the contract's error codes.
#[test]
fn call_tools_refuse_bad_input_with_contract_codes() {
    let server = serve(&["calls/rust"], &[], &[]);
    wait_ready(&server);
    let calls = [
        ("get_call_graph", json!({"symbol_name": "area"})),
        (
            "get_call_graph",
            json!({"symbol_name": "util::fact", "depth": 6}),
        ),
        (
            "get_call_graph",
            json!({"symbol_name": "util::fact", "min_confidence": "guess"}),
        ),
        ("find_references", json!({"symbol_name": "no_such_thing"})),
        (
            "find_references",
            json!({"symbol_name": "util::fact", "cursor": "x"}),
        ),
        ("find_implementations", json!({"symbol_name": "MAX_FACT"})),
        ("analyze_impact", json!({})),
        (
            "analyze_impact",
            json!({"symbol_name": "util::fact", "paths": ["src/util.rs"]}),
        ),
        ("analyze_impact", json!({"paths": ["src/nope.rs"]})),
        ("analyze_impact", json!({"diff_base": "HEAD"})),
        ("analyze_impact", json!({"diff_base": "--output=/tmp/x"})),
        (
            "analyze_impact",
            json!({"symbol_name": "util::fact", "depth": 31}),
        ),
    ];
    let codes: Vec<String> = call_all(&server, &calls)
        .into_iter()
        .map(|(v, err)| {
            assert!(err, "{v}");
            s(&v["error"]["code"])
        })
        .collect();
    assert_eq!(
        codes,
        [
            "ambiguous_symbol",
            "invalid_input",
            "invalid_input",
            "symbol_not_found",
            "invalid_input",
            "invalid_input",
            "invalid_input",
            "invalid_input",
            "file_not_found",
            "invalid_input",
            "invalid_input",
            "invalid_input",
        ]
    );
    let (amb, _) = call_all(&server, &calls[..1]).remove(0);
    assert_eq!(
        amb["error"]["data"]["candidates"].as_array().map(Vec::len),
        Some(4)
    );
}

/// `find_implementations` in the other languages: Python and TypeScript base
/// classes, Go interfaces satisfied through an embedded struct's methods.
#[test]
fn implementations_across_languages() {
    let server = serve_all();
    // (qualified name, relation, methods as (name, inherited))
    type Found = Vec<(String, String, Vec<(String, bool)>)>;
    let types = |repo: &str, name: &str| -> Found {
        let v = call(
            &server,
            "find_implementations",
            json!({"repo": repo, "symbol_name": name}),
        );
        v["types"]
            .as_array()
            .expect("types")
            .iter()
            .map(|t| {
                (
                    s(&t["qualified_name"]),
                    s(&t["relation"]),
                    t["methods"]
                        .as_array()
                        .expect("methods")
                        .iter()
                        .map(|m| (s(&m["name"]), m.get("inherited_from").is_some()))
                        .collect(),
                )
            })
            .collect()
    };
    let py = types("python", "geo.base.Shape");
    let py_names: Vec<&str> = py.iter().map(|t| t.0.as_str()).collect();
    // `Ring` (a test's) extends `Circle` through the package's re-export.
    assert_eq!(
        py_names,
        [
            "geo.shapes.Circle",
            "geo.shapes.Square",
            "tests.test_app.Ring"
        ],
        "{py:?}"
    );
    let ring = &py[2].2;
    assert!(ring.contains(&("describe".to_string(), true)), "{py:?}");
    assert!(py.iter().all(|t| t.1 == "extends"));
    let ts = types("typescript", "src/shapes/base:Shape");
    let ts_names: BTreeSet<&str> = ts.iter().map(|t| t.0.as_str()).collect();
    for t in [
        "src/shapes/base:BaseShape",
        "src/shapes/circle:Circle",
        "src/shapes/circle:Square",
    ] {
        assert!(ts_names.contains(t), "{ts:?}");
    }
    let go = types("go", "example.com/geo/shapes.Shape");
    let circle = go
        .iter()
        .find(|t| t.0 == "example.com/geo/shapes.Circle")
        .unwrap_or_else(|| panic!("{go:?}"));
    assert_eq!(circle.1, "implements");
    assert!(
        circle.2.contains(&("Name".to_string(), true)),
        "Name is promoted from the embedded Base: {go:?}"
    );
    assert!(circle.2.contains(&("Area".to_string(), false)), "{go:?}");
}

/// The README's ad hoc queries on the call edges run and answer what the
/// Rust fixture holds.
#[test]
fn readme_call_queries_answer_on_the_rust_fixture() {
    let readme = include_str!("../README.md");
    let section = readme
        .split("## Calls and impact")
        .nth(1)
        .and_then(|s| s.split("```cypher").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("the section's cypher block");
    let queries: Vec<&str> = section.lines().filter(|l| l.starts_with("MATCH")).collect();
    assert_eq!(queries.len(), 4);
    let ix = crate::common::index_path(&fixture("calls/rust"), "rust");
    let first_column =
        |q: &str, col: &str| -> Vec<String> { ix.rows(q).iter().map(|r| s(&r[col])).collect() };
    assert_eq!(
        first_column(queries[0], "caller"),
        ["report::numbers", "util::is_odd"]
    );
    let never = first_column(queries[1], "never_called");
    assert!(never.contains(&"report::area_of".to_string()), "{never:?}");
    assert!(!never.contains(&"util::fact".to_string()), "{never:?}");
    assert_eq!(
        first_column(queries[2], "on_a_cycle"),
        ["util::fact", "util::is_even", "util::is_odd"]
    );
    assert_eq!(
        first_column(queries[3], "type"),
        [
            "shapes::Circle",
            "shapes::Solid",
            "shapes::Square",
            "templated::Gauge"
        ]
    );
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git");
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// `cruxe refs`, `calls` and `impact --diff` on a Python repository with
/// tests: impact prints the test files a change reaches, one per line.
#[test]
fn cli_refs_calls_and_impact_of_a_diff() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("geo");
    copy_tree(&fixture("calls/python"), &repo);
    std::fs::create_dir_all(repo.join("tests")).expect("tests dir");
    std::fs::write(
        repo.join("tests/test_util.py"),
        "from geo.util import fact\n\n\ndef test_fact():\n    assert fact(3) == 6\n",
    )
    .expect("test file");
    std::fs::write(
        repo.join("tests/test_double.py"),
        "from geo.util import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    )
    .expect("test file");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let data = tmp.path().join("data");
    let data_s = data.to_string_lossy().to_string();
    let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = cruxe(&["refs", "fact", "--path", "geo/util.py", "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("fn geo.util.fact (geo/util.py:4)\n"),
        "{text}"
    );
    assert!(text.contains("tests/test_util.py\n"), "{text}");
    assert!(
        text.contains(
            "\n  6:33   call    geo.util.fact              [scope]      return 1 if n <= 1 else n * fact(n - 1)\n"
        ),
        "{text}"
    );
    // One table: the columns line up across files.
    let tiers: Vec<usize> = text
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.find('[').expect("a tier"))
        .collect();
    assert_eq!(tiers.len(), 4, "{text}");
    assert!(tiers.iter().all(|&c| c == tiers[0]), "{text}");

    let o = cruxe(&["calls", "fact", "--callers", "--json", "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["root"]["qualified_name"], "geo.util.fact");
    assert!(
        v["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .any(|n| n["qualified_name"] == "tests.test_util.test_fact"),
        "{v}"
    );
    assert_eq!(v["metadata"]["repo"], "geo");

    let o = cruxe(&["calls", "area", "--data", &data_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("candidates"), "{}", stderr(&o));

    // Nothing changed yet: no test to run.
    let o = cruxe(&["impact", "--diff", "HEAD", "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");

    // Edit fact's body (same lines): its test is the one to run.
    let util = repo.join("geo/util.py");
    let before = std::fs::read_to_string(&util).expect("read");
    let after = before.replace(
        "return 1 if n <= 1 else n * fact(n - 1)",
        "return 1 if n < 2 else n * fact(n - 1)",
    );
    assert_ne!(before, after);
    std::fs::write(&util, after).expect("edit");
    let o = cruxe(&["impact", "--diff", "HEAD", "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "tests/test_util.py\n", "{}", stderr(&o));
    let o = cruxe(&["impact", "--diff", "HEAD", "--json", "--data", &data_s]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let changed: Vec<String> = v["changed"]
        .as_array()
        .expect("changed")
        .iter()
        .map(|c| s(&c["qualified_name"]))
        .collect();
    assert_eq!(changed, ["geo.util.fact"], "{v}");
    assert_eq!(
        v["tests"][0]["qualified_name"], "tests.test_util.test_fact",
        "{v}"
    );

    // A new untracked test file counts as changed, and is a test itself.
    std::fs::write(
        repo.join("tests/test_new.py"),
        "def test_nothing():\n    pass\n",
    )
    .expect("new file");
    let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cruxe(&["impact", "--diff", "HEAD", "--data", &data_s]);
    assert_eq!(
        stdout(&o),
        "tests/test_new.py\ntests/test_util.py\n",
        "{}",
        stderr(&o)
    );
    let o = cruxe(&["impact", "--diff", "no-such-ref", "--data", &data_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a commit"), "{}", stderr(&o));
}

/// `get_code_context` brings in what the best hits call and what calls them.
#[test]
fn code_context_adds_callers_and_callees_of_the_best_hits() {
    let server = serve(&["calls/rust"], &[], &[]);
    wait_ready(&server);
    let v = call(
        &server,
        "get_code_context",
        // Room for every hit of the fixture's `report` and what they add.
        json!({"query": "report numbers", "max_tokens": 8000}),
    );
    let items = v["context_items"].as_array().expect("items");
    let related: Vec<(String, String, String)> = items
        .iter()
        .filter(|i| i["relation"] == "callee" || i["relation"] == "caller")
        .map(|i| {
            (
                s(&i["qualified_name"]),
                s(&i["relation"]),
                s(&i["context_of"]),
            )
        })
        .collect();
    assert!(
        related.contains(&(
            "util::is_even".to_string(),
            "callee".to_string(),
            "report::numbers".to_string()
        )),
        "{v}"
    );
    assert!(
        related.contains(&(
            "util::fact".to_string(),
            "callee".to_string(),
            "report::numbers::helper".to_string()
        )),
        "{v}"
    );
    // A callee that is a hit already is not repeated.
    let helper = items
        .iter()
        .filter(|i| i["qualified_name"] == "report::numbers::helper")
        .count();
    assert_eq!(helper, 1, "{v}");
    // The graph's candidates rank after every hit: with the budget filled by
    // hits, none is read, and the total is the hits'.
    let hits = call(
        &server,
        "search_code",
        json!({"query": "report numbers", "limit": 100, "max_tokens": 100000}),
    );
    let hits = hits["total_found"].as_u64().expect("total");
    assert!(hits > 2, "{hits}");
    let small = call(
        &server,
        "get_code_context",
        json!({"query": "report numbers", "max_tokens": 60}),
    );
    let items = small["context_items"].as_array().expect("items");
    assert!(!items.is_empty() && small["truncated"] == true, "{small}");
    assert!(items.iter().all(|i| i.get("relation").is_none()), "{small}");
    assert_eq!(small["metadata"]["total_candidates"], hits, "{small}");
    // With room, the expanded candidates count too.
    let all = v["metadata"]["total_candidates"].as_u64().expect("total");
    assert!(all >= hits + related.len() as u64, "{v}");
}
