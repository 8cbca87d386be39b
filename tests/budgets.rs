//! Bounded answers (issue 19): the tools whose answers can be long keep to a
//! token budget, counted as a model would (o200k_base over the text the
//! client gets), say when they are cut, and page through the rest with a
//! cursor, losing nothing and repeating nothing. Through a real `cruxe serve`
//! and the MCP Python SDK, on a repository built here.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;

use crate::mcp::{Server, client, results, serve_paths, wait_ready};

/// Results of tool calls with the text each came as (`content[0].text`).
fn call_texts(server: &Server, calls: &[(&str, Value)]) -> Vec<(Value, String)> {
    let report = client(json!({
        "transport": "http",
        "url": server.url(),
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
    }));
    let texts = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["text"].as_str().expect("text").to_string());
    results(&report)
        .into_iter()
        .zip(texts)
        .map(|((v, err), text)| {
            assert!(!err, "{v}");
            (v, text)
        })
        .collect()
}

fn one(server: &Server, tool: &str, args: Value) -> (Value, String) {
    call_texts(server, &[(tool, args)]).remove(0)
}

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_ordinary(text).len()
}

/// A Go repository with one long file (a type with 300 tab-indented methods,
/// ~1.8k lines), sixty packages of small files, and a minified bundle whose
/// one line is 60 KB.
fn repo(root: &Path) -> String {
    let mut big = String::from(
        "package server\n\n// Server serves.\ntype Server struct {\n\tname string\n}\n\n",
    );
    for i in 0..300 {
        big.push_str(&format!(
            "// Handle{i} handles route {i}.\nfunc (s *Server) Handle{i}(w Writer, r *Request) error {{\n\tif r.Path != \"/r{i}\" {{\n\t\treturn errNotFound\n\t}}\n\ts.Log(\"r{i}\")\n\treturn w.Write(s.name)\n}}\n\n"
        ));
    }
    big.push_str("// Log logs.\nfunc (s *Server) Log(msg string) {}\n");
    std::fs::create_dir_all(root.join("server")).expect("mkdir");
    std::fs::write(root.join("server/handlers.go"), &big).expect("write");
    for p in 0..60 {
        let dir = root.join(format!("pkg/p{p:02}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..5 {
            std::fs::write(
                dir.join(format!("f{f}.go")),
                format!("package p{p:02}\n\nfunc Alpha{f}() int {{\n\treturn {f}\n}}\n\nfunc Beta{f}() int {{\n\treturn Alpha{f}()\n}}\n"),
            )
            .expect("write");
        }
    }
    std::fs::create_dir_all(root.join("web")).expect("mkdir");
    let bundle: String = (0..400)
        .map(|i| format!("export const k{i}=(a)=>a+{i};"))
        .collect();
    std::fs::write(root.join("web/bundle.ts"), bundle).expect("write");
    let mut shapes = String::from("export interface Shape {\n  area(): number;\n}\n");
    for i in 0..40 {
        shapes.push_str(&format!(
            "export class Shape{i} implements Shape {{\n  area(): number {{\n    return {i};\n  }}\n}}\n"
        ));
    }
    std::fs::write(root.join("web/shapes.ts"), shapes).expect("write");
    std::fs::write(root.join("go.mod"), "module example.com/big\n\ngo 1.22\n").expect("write");
    big
}

/// The server, and the long file's text.
fn serve_repo() -> (Server, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("big");
    let big = repo(&root);
    let server = serve_paths(tmp, &[root], &[], &[]);
    wait_ready(&server);
    (server, big)
}

/// Symbol ids of an outline page in pre-order, each with the id its parent has
/// (from the nesting, or `parent` for a node whose parent was on an earlier page).
fn flatten(
    nodes: &[Value],
    parent: Option<&str>,
    id: &str,
    out: &mut Vec<(String, Option<String>)>,
) {
    for n in nodes {
        let me = n[id].as_str().expect("id").to_string();
        let p = n["parent"]
            .as_str()
            .map(str::to_string)
            .or(parent.map(str::to_string));
        out.push((me.clone(), p));
        flatten(
            n["children"].as_array().map_or(&[][..], Vec::as_slice),
            Some(&me),
            id,
            out,
        );
    }
}

/// Every page of a paged tool, the first called with `args`: each within
/// `budget` tokens plus what it costs with no items (`items` emptied), its
/// `returned` (under `meta`, the JSON pointer prefix) true. Returns the pages
/// and their nodes in order, each once, each parent before its children.
#[allow(clippy::too_many_arguments)]
fn page_through(
    server: &Server,
    bpe: &CoreBPE,
    tool: &str,
    args: Value,
    meta: &str,
    items: &str,
    id: &str,
    budget: usize,
) -> (Vec<Value>, Vec<(String, Option<String>)>) {
    let mut pages = Vec::new();
    let mut seen: Vec<(String, Option<String>)> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = args.clone();
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (v, text) = one(server, tool, args);
        let mut bare = v.clone();
        bare[items] = json!([]);
        assert!(tokens(bpe, &text) <= budget + tokens(bpe, &bare.to_string()));
        let mut page = Vec::new();
        flatten(v[items].as_array().expect("items"), None, id, &mut page);
        let returned = v
            .pointer(&format!("{meta}/returned"))
            .and_then(Value::as_u64);
        assert_eq!(Some(page.len() as u64), returned, "{v}");
        assert!(!page.is_empty());
        seen.extend(page);
        cursor = v
            .pointer(&format!("{meta}/next_cursor"))
            .and_then(Value::as_str)
            .map(str::to_string);
        pages.push(v);
        if cursor.is_none() {
            break;
        }
    }
    let mut before = HashSet::new();
    for (node, parent) in &seen {
        if let Some(p) = parent {
            assert!(
                before.contains(p.as_str()),
                "{node}'s parent {p} not seen first"
            );
        }
        assert!(before.insert(node.as_str()), "{node} came twice");
    }
    (pages, seen)
}

#[test]
fn long_answers_keep_to_their_budget_and_page_through_the_rest() {
    let (server, source) = serve_repo();
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");

    // get_file_outline: the default page stays within 4,000 tokens plus what
    // the answer costs with no symbols.
    let (first, text) = one(
        &server,
        "get_file_outline",
        json!({"path": "server/handlers.go"}),
    );
    let total = first["symbol_count"].as_u64().expect("count") as usize;
    assert!(total > 300, "{total}");
    assert_eq!(first["truncated"], true);
    assert_eq!(first["metadata"]["result_completeness"], "truncated");
    let mut bare = first.clone();
    bare["symbols"] = json!([]);
    let overhead = tokens(&bpe, &bare.to_string());
    assert!(
        tokens(&bpe, &text) <= 4000 + overhead,
        "{}",
        tokens(&bpe, &text)
    );
    assert!(first.get("qualified_name").is_none());
    // Paged at 1,500 tokens: every symbol once, in source order, under its parent.
    let args = json!({"path": "server/handlers.go", "max_tokens": 1500});
    let (pages, seen) = page_through(
        &server,
        &bpe,
        "get_file_outline",
        args,
        "",
        "symbols",
        "symbol_id",
        1500,
    );
    assert!(pages.len() > 3, "{}", pages.len());
    assert_eq!(pages.last().expect("a page")["truncated"], false);
    assert_eq!(seen.len(), total);
    fn starts(nodes: &[Value], out: &mut Vec<i64>) {
        for n in nodes {
            out.push(n["line_start"].as_i64().expect("line"));
            starts(n["children"].as_array().map_or(&[][..], Vec::as_slice), out);
        }
    }
    let mut lines = Vec::new();
    for v in &pages {
        starts(v["symbols"].as_array().expect("symbols"), &mut lines);
    }
    assert!(
        lines.windows(2).all(|w| w[0] <= w[1]),
        "not in source order"
    );

    // get_node pages a long file by whole lines; the pages put together are the file.
    let (v, text) = one(
        &server,
        "get_node",
        json!({"node_id": "file:server/handlers.go"}),
    );
    assert_eq!(v["truncated"], true);
    let mut bare = v.clone();
    bare["content"] = json!("");
    assert!(tokens(&bpe, &text) <= 4000 + tokens(&bpe, &bare.to_string()) + 2);
    let mut got: Vec<String> = Vec::new();
    let mut line = 1;
    loop {
        let (v, _) = one(
            &server,
            "get_node",
            json!({"node_id": "file:server/handlers.go", "line_start": line, "max_tokens": 3000}),
        );
        assert_eq!(v["content_line_start"], line);
        let content = v["content"].as_str().expect("content");
        assert!(tokens(&bpe, &json!(content).to_string()) <= 3000);
        got.extend(content.split('\n').map(str::to_string));
        assert_eq!(
            got.len() as i64,
            v["content_line_end"].as_i64().expect("end")
        );
        match v["next_line"].as_i64() {
            Some(n) => line = n,
            None => break,
        }
    }
    assert_eq!(got, source.lines().collect::<Vec<_>>());
    // A range asked for, and one outside the node.
    let (v, _) = one(
        &server,
        "get_node",
        json!({"node_id": "file:server/handlers.go", "line_start": 9, "line_end": 11}),
    );
    assert_eq!(
        v["content"],
        source
            .lines()
            .skip(8)
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(v["next_line"], Value::Null);
    let r = crate::mcp::call_all(
        &server,
        &[(
            "get_node",
            json!({"node_id": "file:server/handlers.go", "line_start": 99999}),
        )],
    );
    assert!(r[0].1, "{}", r[0].0);
    assert_eq!(r[0].0["error"]["code"], "invalid_input");
    // A 60 KB line is cut, and says so.
    let (v, _) = one(
        &server,
        "get_node",
        json!({"node_id": "file:web/bundle.ts", "max_tokens": 300}),
    );
    assert_eq!(v["truncated"], true);
    let content = v["content"].as_str().expect("content");
    assert!(
        !content.is_empty() && content.len() < 5000,
        "{}",
        content.len()
    );
    assert!(tokens(&bpe, &json!(content).to_string()) <= 300);
    // A directory's entries page like lines; `children` follows `content`.
    let (v, _) = one(
        &server,
        "get_node",
        json!({"node_id": "dir:pkg", "max_tokens": 60}),
    );
    assert_eq!(v["truncated"], true);
    let entries: Vec<&str> = v["content"].as_str().expect("c").lines().collect();
    assert_eq!(v["children"], json!(entries));
    assert!(!entries.is_empty() && entries.len() < 60, "{entries:?}");

    // explore_tree, everything at full detail: pages within budget, every node once.
    let args =
        json!({"pattern": ".", "max_depth": 0, "detail": "max", "limit": 300, "max_tokens": 8000});
    let (pages, seen) = page_through(
        &server,
        &bpe,
        "explore_tree",
        args,
        "/meta",
        "tree",
        "node_id",
        8000,
    );
    assert!(
        pages
            .iter()
            .all(|v| v["meta"]["returned"].as_u64() <= Some(300))
    );
    let last = pages.last().expect("a page");
    assert_eq!(last["meta"]["total_exact"], true);
    assert_eq!(last["meta"]["truncated"], false);
    let total = last["meta"]["total_nodes"].as_u64().expect("total") as usize;
    // 3 top directories, 60 packages, 302 files, 600 + 302 + 400 symbols.
    assert!(total > 1300, "{total}");
    assert_eq!(seen.len(), total);
}

/// One answer cut to `budget`: within it (as a model counts the text) plus
/// what the answer costs with `items` emptied, not empty, and `truncated`.
fn cut_to(bpe: &CoreBPE, v: &Value, text: &str, items: &str, budget: usize) -> usize {
    let mut bare = v.clone();
    bare[items] = json!([]);
    let (used, fixed) = (tokens(bpe, text), tokens(bpe, &bare.to_string()));
    assert!(used <= budget + fixed, "{used} > {budget} + {fixed}: {v}");
    assert_eq!(v["truncated"], true, "{v}");
    assert_eq!(v["metadata"]["result_completeness"], "truncated");
    let n = v[items].as_array().expect("items").len();
    assert!(n > 0, "{v}");
    n
}

#[test]
fn list_tools_take_max_tokens_and_say_truncated_with_the_exact_total() {
    let (server, _) = serve_repo();
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    let calls = [
        (
            "search_code",
            json!({"query": "handles route", "limit": 200, "max_tokens": 600}),
        ),
        (
            "locate_symbol",
            json!({"name": "Alpha0", "limit": 100, "max_tokens": 400}),
        ),
        (
            "get_call_graph",
            json!({"symbol_name": "Log", "depth": 1, "max_tokens": 700}),
        ),
        (
            "analyze_impact",
            json!({"symbol_name": "Log", "depth": 1, "max_tokens": 700}),
        ),
        (
            "find_implementations",
            json!({"symbol_name": "Shape", "path": "web/shapes.ts", "max_tokens": 500}),
        ),
        (
            "run_cypher",
            json!({"query": "MATCH (s:Symbol) RETURN s.name AS name, s.signature AS sig", "limit": 1000, "max_tokens": 300}),
        ),
        (
            "search_code",
            json!({"query": "handles route", "limit": 200}),
        ),
    ];
    let got = call_texts(&server, &calls);
    let (v, t) = &got[0];
    let n = cut_to(&bpe, v, t, "results", 600);
    assert_eq!(v["total_found"], 200, "{v}");
    assert!(n < 200);
    let (v, t) = &got[1];
    let n = cut_to(&bpe, v, t, "results", 400);
    assert_eq!(v["total_found"], 60, "every package defines Alpha0: {v}");
    assert!(n < 60);
    // The call graph keeps the nearest edges and only the nodes they reach.
    let (v, t) = &got[2];
    let mut bare = v.clone();
    bare["edges"] = json!([]);
    bare["nodes"] = json!([]);
    assert!(tokens(&bpe, t) <= 700 + tokens(&bpe, &bare.to_string()));
    assert_eq!(v["truncated"], true);
    assert_eq!(v["total_edges"], 300, "{v}");
    let edges = v["edges"].as_array().expect("edges");
    assert!(!edges.is_empty() && edges.len() < 300);
    let ends: HashSet<&str> = edges
        .iter()
        .flat_map(|e| {
            [
                e["from"].as_str().expect("from"),
                e["to"].as_str().expect("to"),
            ]
        })
        .collect();
    let nodes: HashSet<&str> = v["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ends, nodes,
        "nodes are the root and the ends of the edges kept"
    );
    // Impact: the tests, the affected symbols and their files share the budget.
    let (v, t) = &got[3];
    let mut bare = v.clone();
    for list in ["affected", "files", "tests"] {
        bare[list] = json!([]);
    }
    assert!(
        tokens(&bpe, t) <= 700 + tokens(&bpe, &bare.to_string()),
        "{v}"
    );
    assert_eq!(v["truncated"], true);
    assert_eq!(v["total_affected"], 300, "{v}");
    let n = v["affected"].as_array().expect("affected").len();
    assert!(n > 0 && n < 300, "{n}");
    let (v, t) = &got[4];
    let n = cut_to(&bpe, v, t, "types", 500);
    assert_eq!(v["total"], 40, "{v}");
    assert!(n < 40);
    let (v, t) = &got[5];
    let n = cut_to(&bpe, v, t, "rows", 300);
    assert_eq!(v["row_count"], n);
    // The default budget is 4,000 tokens.
    let (v, t) = &got[6];
    cut_to(&bpe, v, t, "results", 4000);

    // find_references pages within the budget, every reference once.
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"symbol_name": "Log", "max_tokens": 800});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (v, t) = one(&server, "find_references", args);
        let mut bare = v.clone();
        bare["references"] = json!([]);
        assert!(tokens(&bpe, &t) <= 800 + tokens(&bpe, &bare.to_string()));
        assert_eq!(v["total"], 300);
        for r in v["references"].as_array().expect("refs") {
            assert!(
                seen.insert((r["path"].to_string(), r["line"].to_string())),
                "{r} twice"
            );
        }
        pages += 1;
        cursor = v["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            assert_eq!(v["truncated"], false);
            break;
        }
    }
    assert_eq!(seen.len(), 300);
    assert!(pages > 2, "{pages}");

    // get_symbol_hierarchy pages a type's descendants.
    let args = json!({"symbol_name": "Server", "direction": "descendants", "max_tokens": 1500});
    let (pages, seen) = page_through(
        &server,
        &bpe,
        "get_symbol_hierarchy",
        args,
        "",
        "hierarchy",
        "symbol_id",
        1500,
    );
    assert!(pages.len() > 2, "{}", pages.len());
    assert_eq!(
        seen.len() as u64,
        pages[0]["chain_length"].as_u64().expect("total")
    );
    assert!(
        seen.len() > 300,
        "the type and its 301 methods: {}",
        seen.len()
    );
}

/// A Go module of 3,000 files: `Hub` and 3,000 callers of it, each in a file of
/// its own; an interface `Shape` that 300 of them also implement. Committed,
/// then every file edited (a diff of 3,000 files against HEAD).
fn diffed_repo(root: &Path) {
    std::fs::create_dir_all(root).expect("mkdir");
    std::fs::write(root.join("go.mod"), "module big\n\ngo 1.21\n").expect("go.mod");
    std::fs::write(
        root.join("hub.go"),
        "package big\n\n// Shape has an area.\ntype Shape interface {\n\tArea() int\n}\n\n// Hub is called by everyone.\nfunc Hub() int {\n\treturn 1\n}\n",
    )
    .expect("hub");
    let file = |i: usize, extra: &str| {
        let mut text = format!(
            "package big\n\n// Caller{i} calls the hub.\nfunc Caller{i}() int {{\n\t{extra}return Hub()\n}}\n"
        );
        if i.is_multiple_of(10) {
            text.push_str(&format!(
                "\n// T{i} is a shape.\ntype T{i} struct{{}}\n\n// Area of T{i}.\nfunc (t T{i}) Area() int {{\n\treturn Caller{i}()\n}}\n"
            ));
        }
        text
    };
    for i in 0..3000 {
        std::fs::write(root.join(format!("c{i:04}.go")), file(i, "")).expect("write");
    }
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    for i in 0..3000 {
        std::fs::write(root.join(format!("c{i:04}.go")), file(i, "_ = Hub()\n\t")).expect("edit");
    }
}

/// Lists that are summaries of a fixed size, not results: an impact's count
/// per distance (at most `depth` entries), a query's column names.
const SUMMARIES: [&str; 2] = ["by_distance", "columns"];

/// The answer's top-level lists of results emptied: what it costs besides
/// its items.
fn bare(v: &Value) -> Value {
    let mut b = v.clone();
    if let Some(map) = b.as_object_mut() {
        for (key, field) in map.iter_mut() {
            if field.is_array() && !SUMMARIES.contains(&key.as_str()) {
                *field = json!([]);
            }
        }
    }
    b
}

fn items(v: &Value) -> usize {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !SUMMARIES.contains(&k.as_str()))
                .filter_map(|(_, v)| v.as_array())
                .map(Vec::len)
                .sum()
        })
        .unwrap_or(0)
}

/// Every answer of every tool that takes `max_tokens`, on a repository with a
/// 3,000-file diff, at budgets from tiny to the default: its items (every
/// top-level list, `changed` and `files` and `notes` included) fit the
/// budget, and what is left besides them is small. get_node's content is
/// counted whole.
#[test]
fn every_answer_of_every_tool_stays_within_max_tokens_on_a_3000_file_diff() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("big");
    diffed_repo(&root);
    // As many paths as an argument holds (8 KiB).
    let paths: Vec<String> = (0..700).map(|i| format!("c{i:04}.go")).collect();
    let server = serve_paths(tmp, &[root], &[], &[]);
    wait_ready(&server);
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    let tools: Vec<(&str, Value)> = vec![
        ("analyze_impact", json!({"diff_base": "HEAD"})),
        ("analyze_impact", json!({"paths": paths})),
        ("analyze_impact", json!({"symbol_name": "Hub", "depth": 2})),
        ("find_references", json!({"symbol_name": "Hub"})),
        (
            "get_call_graph",
            json!({"symbol_name": "Hub", "direction": "both", "depth": 3}),
        ),
        ("find_implementations", json!({"symbol_name": "Shape"})),
        (
            "find_related_symbols",
            json!({"symbol_name": "Hub", "scope": "package"}),
        ),
        ("get_code_context", json!({"query": "caller calls the hub"})),
        (
            "get_code_context",
            json!({"query": "shape area", "strategy": "depth"}),
        ),
        ("search_code", json!({"query": "caller", "limit": 200})),
        ("locate_symbol", json!({"name": "Area", "limit": 500})),
        ("get_file_outline", json!({"path": "c0010.go"})),
        (
            "get_symbol_hierarchy",
            json!({"symbol_name": "T10", "direction": "descendants"}),
        ),
        (
            "explore_tree",
            json!({"pattern": ".", "max_depth": 3, "detail": "max"}),
        ),
        ("get_node", json!({"node_id": "file:hub.go"})),
        (
            "run_cypher",
            json!({"query": "MATCH (s:Symbol) RETURN s.name AS n, s.signature AS sig", "limit": 5000}),
        ),
    ];
    for budget in [60usize, 500, 4000] {
        let calls: Vec<(&str, Value)> = tools
            .iter()
            .map(|(t, a)| {
                let mut a = a.clone();
                a["max_tokens"] = json!(budget);
                (*t, a)
            })
            .collect();
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
        for (((tool, args), (v, err)), text) in calls.iter().zip(results(&report)).zip(texts) {
            if err {
                // A page that could hold nothing is refused, saying what would.
                assert_eq!(
                    v["error"]["code"], "invalid_max_tokens",
                    "{tool} {args}: {v}"
                );
                let needed = v["error"]["data"]["needed"].as_u64().expect("needed");
                assert!(needed as usize > budget, "{v}");
                continue;
            }
            let used = tokens(&bpe, &text);
            if *tool == "get_node" {
                assert!(used <= budget + 400, "{tool} at {budget}: {used} tokens");
                continue;
            }
            let fixed = tokens(&bpe, &bare(&v).to_string());
            let n = items(&v);
            assert!(
                used <= budget + fixed + n,
                "{tool} {args} at {budget}: {used} tokens > {budget} + {fixed} + {n}"
            );
            assert!(
                fixed <= 700,
                "{tool} {args}: {fixed} tokens outside its lists: {}",
                bare(&v)
            );
        }
    }
}
