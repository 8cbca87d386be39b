//! Every fixture's symbols as stored in the real graph: kind, qualified name, line
//! range, structural parent, visibility, signature and doc. Snapshots hold the full
//! listing (reviewed by hand); the asserts pin the spec's scenarios explicitly.

use crate::common::{Indexed, index_fixture, s};

/// One line per symbol, ordered by file and position, parent taken from CONTAINS.
fn listing(ix: &Indexed) -> String {
    let rows = ix.rows(
        "MATCH (p)-[:CONTAINS]->(s:Symbol) \
         RETURN s.path AS path, s.line_start AS ls, s.line_end AS le, s.kind AS kind, \
                s.qualified_name AS qn, label(p) AS pl, \
                CASE WHEN label(p) = 'File' THEN p.path ELSE p.qualified_name END AS parent, \
                s.visibility AS vis, s.signature AS sig, s.doc AS doc \
         ORDER BY path, ls, qn",
    );
    rows.iter()
        .map(|r| {
            let doc = s(&r["doc"]);
            let doc = doc.lines().next().unwrap_or("");
            format!(
                "{}:{}-{} {} {} <- {}:{} [{}] `{}`{}",
                s(&r["path"]),
                s(&r["ls"]),
                s(&r["le"]),
                s(&r["kind"]),
                s(&r["qn"]),
                s(&r["pl"]),
                s(&r["parent"]),
                s(&r["vis"]),
                s(&r["sig"]),
                if doc.is_empty() {
                    String::new()
                } else {
                    format!(" /// {doc}")
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// (kind, parent qualified name or file path) of the symbol with this qualified name.
fn one(ix: &Indexed, qn: &str) -> (String, String, i64, i64) {
    let rows = ix.rows(&format!(
        "MATCH (p)-[:CONTAINS]->(s:Symbol {{qualified_name: '{qn}'}}) \
         RETURN s.kind AS kind, CASE WHEN label(p) = 'File' THEN p.path ELSE p.qualified_name END AS parent, \
                s.line_start AS ls, s.line_end AS le"
    ));
    assert_eq!(rows.len(), 1, "exactly one symbol {qn}, got {rows:?}");
    let r = &rows[0];
    (
        s(&r["kind"]),
        s(&r["parent"]),
        r["ls"].as_i64().unwrap_or(-1),
        r["le"].as_i64().unwrap_or(-1),
    )
}

#[test]
fn rust_symbols() {
    let ix = index_fixture("rust");
    assert_eq!(ix.report.files, 6);
    assert_eq!(ix.report.diagnostics, vec![]);
    insta::assert_snapshot!("rust_symbols", listing(&ix));
    // impl AuthHandler { fn validate } → validate is a method of the impl.
    assert_eq!(
        one(&ix, "auth::handler::AuthHandler::validate"),
        ("method".into(), "auth::handler::AuthHandler".into(), 15, 17)
    );
    // Same name in two files: the free fn `validate` sits in its file.
    assert_eq!(
        one(&ix, "auth::jwt::validate"),
        ("fn".into(), "src/auth/jwt.rs".into(), 25, 27)
    );
    assert_eq!(
        one(&ix, "inner::deep::nested_fn"),
        ("fn".into(), "inner::deep".into(), 16, 16)
    );
    assert_eq!(
        one(&ix, "user::UserService::delete::matches"),
        ("fn".into(), "user::UserService::delete".into(), 15, 17)
    );
}

#[test]
fn python_symbols() {
    let ix = index_fixture("python");
    assert_eq!(ix.report.files, 5);
    insta::assert_snapshot!("python_symbols", listing(&ix));
    assert_eq!(
        one(&ix, "auth.handler.AuthHandler.validate"),
        ("method".into(), "auth.handler.AuthHandler".into(), 14, 15)
    );
    // Decorators belong to the definition.
    assert_eq!(
        one(&ix, "auth.handler.AuthHandler.ready"),
        ("method".into(), "auth.handler.AuthHandler".into(), 10, 12)
    );
    assert_eq!(
        one(&ix, "services.user_service.UserService.Config.describe"),
        (
            "method".into(),
            "services.user_service.UserService.Config".into(),
            7,
            8
        )
    );
    assert_eq!(
        one(&ix, "services.user_service.UserService.create.normalize"),
        (
            "fn".into(),
            "services.user_service.UserService.create".into(),
            11,
            12
        )
    );
    assert_eq!(one(&ix, "main.main"), ("fn".into(), "main.py".into(), 1, 2));
}

#[test]
fn typescript_symbols() {
    let ix = index_fixture("typescript");
    assert_eq!(ix.report.files, 4);
    insta::assert_snapshot!("typescript_symbols", listing(&ix));
    assert_eq!(
        one(&ix, "src/router:Router.add"),
        ("method".into(), "src/router:Router".into(), 10, 12)
    );
    // Class fields: one holding an arrow function is a method, others fields.
    assert_eq!(
        one(&ix, "src/router:Router.lookup"),
        ("method".into(), "src/router:Router".into(), 19, 19)
    );
    assert_eq!(
        one(&ix, "src/router:Router.routes"),
        ("field".into(), "src/router:Router".into(), 5, 5)
    );
    assert_eq!(
        one(&ix, "src/router:makeRouter"),
        ("fn".into(), "src/router.ts".into(), 36, 38)
    );
    assert_eq!(
        one(&ix, "src/router:Internal.helper"),
        ("fn".into(), "src/router:Internal".into(), 41, 43)
    );
    assert_eq!(
        one(&ix, "src/util:Cache.get"),
        ("method".into(), "src/util:Cache".into(), 7, 9)
    );
}

#[test]
fn go_symbols() {
    let ix = index_fixture("go");
    assert_eq!(ix.report.files, 4);
    insta::assert_snapshot!("go_symbols", listing(&ix));
    // A method's parent is its receiver type when the type is in the same file.
    assert_eq!(
        one(&ix, "example.com/shop/auth.AuthHandler.Validate"),
        (
            "method".into(),
            "example.com/shop/auth.AuthHandler".into(),
            11,
            16
        )
    );
    // … and the file otherwise, still named after its type.
    assert_eq!(
        one(&ix, "example.com/shop/auth.AuthHandler.Issuer"),
        ("method".into(), "auth/claims.go".into(), 9, 11)
    );
    assert_eq!(
        one(&ix, "example.com/shop/services.Store.Save"),
        (
            "method".into(),
            "example.com/shop/services.Store".into(),
            11,
            11
        )
    );
}

#[test]
fn stable_ids_survive_line_moves() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("r");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::write(repo.join("a.py"), "def f(x):\n    return x\n").expect("write");
    let data = cruxe::store::datadir::DataDir::new(tmp.path().join("data"));
    let o = crate::common::opts("r");
    let stable = |data: &cruxe::store::datadir::DataDir| {
        let store = data
            .open_graph_read_only(&crate::common::small_graph())
            .expect("open");
        let rows = crate::common::rows(
            &store,
            "MATCH (s:Symbol {name:'f'}) RETURN s.stable_id AS sid, s.line_start AS ls",
        );
        (s(&rows[0]["sid"]), rows[0]["ls"].as_i64().unwrap_or(0))
    };
    cruxe::index::index_repo(&repo, &data, &o, &cruxe::index::Silent).expect("index");
    let (before, l1) = stable(&data);
    std::fs::write(repo.join("a.py"), "\n\n\ndef f(x):\n    return x\n").expect("write");
    cruxe::index::index_repo(&repo, &data, &o, &cruxe::index::Silent).expect("index");
    let (after, l2) = stable(&data);
    assert_eq!((l1, l2), (1, 4));
    assert_eq!(before, after);
    assert!(
        before.starts_with("b3:") && before.len() == 3 + 64,
        "{before}"
    );
}

/// Issue 19: valid TypeScript that tree-sitter-typescript 0.23.2 misreads is
/// read again (`extract::recover`) and loses no declaration; the report says
/// per file what was recovered.
#[test]
fn typescript_the_grammar_misreads_keeps_every_declaration() {
    let ix = index_fixture("typescript-misparse");
    let top: Vec<String> = ix
        .rows(
            "MATCH (f:File)-[:CONTAINS]->(s:Symbol) RETURN s.path AS p, s.name AS n, s.kind AS k, s.line_start AS l ORDER BY p, l",
        )
        .iter()
        .map(|r| format!("{}:{} {} {}", s(&r["p"]), s(&r["l"]), s(&r["k"]), s(&r["n"])))
        .collect();
    for want in [
        "signatures.ts:4 interface Handler",
        "signatures.ts:13 type Later",
        "signatures.ts:14 const later",
        "signatures.ts:15 fn laterFn",
        "modifiers.ts:3 class Base",
        "modifiers.ts:6 class Derived",
        "modifiers.ts:10 type AfterModifiers",
        "ambient.ts:3 const version",
        "ambient.ts:4 var mutableFlag",
        "ambient.ts:5 var globalThing",
        "ambient.ts:6 fn declaredFn",
    ] {
        assert!(
            top.iter().any(|t| t == want),
            "{want} missing from {top:#?}"
        );
    }
    let r = &ix.report;
    assert_eq!(r.syntax_error_files, 0, "{:?}", r.diagnostics);
    // Lost before: Later, later, laterFn; AfterModifiers.
    assert_eq!(r.recovered_declarations, 4, "{r:?}");
    let said: Vec<&str> = r.diagnostics.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        said,
        ["modifiers.ts", "signatures.ts"],
        "{:?}",
        r.diagnostics
    );
    assert!(
        r.diagnostics
            .iter()
            .all(|d| d.problem.contains("recovered")),
        "{:?}",
        r.diagnostics
    );
    // A re-run parses nothing and reports the same: it is stored per file.
    let again = cruxe::index::index_repo(
        &crate::common::fixture("typescript-misparse"),
        &ix.data,
        &crate::common::opts("typescript-misparse"),
        &cruxe::index::Silent,
    )
    .expect("re-index");
    assert_eq!(again.parsed, 0);
    assert_eq!(again.recovered_declarations, 4);
    assert_eq!(again.recovered_files, 2);
    let problems = |r: &cruxe::index::IndexReport| -> Vec<(String, String)> {
        r.diagnostics
            .iter()
            .map(|d| (d.path.clone(), d.problem.clone()))
            .collect()
    };
    assert_eq!(problems(&again), problems(r));
}
