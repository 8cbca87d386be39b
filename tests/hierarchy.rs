//! User Story 2 through the library API the MCP tools will call: ancestor chains
//! (leaf → file) and descendant trees from the real graph.

use cruxe::query::nav::{self, NavError, Scope};

use crate::common::index_fixture;

fn scope(repo: &str) -> Scope<'_> {
    Scope {
        repo,
        ref_name: "test",
    }
}

fn chain(ix: &crate::common::Indexed, repo: &str, name: &str, path: Option<&str>) -> Vec<String> {
    let store = ix.store();
    let sym = nav::resolve(&store, &scope(repo), name, path).expect("resolve");
    let anc = nav::ancestors(&store, &sym).expect("ancestors");
    let mut out: Vec<String> = anc
        .chain
        .iter()
        .map(|(s, d)| format!("{d}:{}:{}", s.kind, s.name))
        .collect();
    out.push(format!("file:{}", anc.file_path));
    out
}

#[test]
fn rust_method_ancestors_reach_the_file() {
    let ix = index_fixture("rust");
    // Acceptance scenario 1: validate (method) → AuthHandler (impl) → file root.
    assert_eq!(
        chain(&ix, "rust", "validate", Some("src/auth/handler.rs")),
        vec![
            "0:method:validate",
            "1:impl:AuthHandler",
            "file:src/auth/handler.rs"
        ]
    );
}

#[test]
fn ancestors_by_qualified_name_and_path() {
    let ix = index_fixture("rust");
    assert_eq!(
        chain(
            &ix,
            "rust",
            "auth::handler::AuthHandler::validate",
            Some("src/auth/handler.rs")
        ),
        vec![
            "0:method:validate",
            "1:impl:AuthHandler",
            "file:src/auth/handler.rs"
        ]
    );
    assert_eq!(
        chain(&ix, "rust", "nested_fn", None),
        vec![
            "0:fn:nested_fn",
            "1:mod:deep",
            "2:mod:inner",
            "file:src/lib.rs"
        ]
    );
}

#[test]
fn top_level_function_has_chain_of_one() {
    let ix = index_fixture("python");
    assert_eq!(
        chain(&ix, "python", "main", Some("main.py")),
        vec!["0:fn:main", "file:main.py"]
    );
}

#[test]
fn python_nested_function_chain() {
    let ix = index_fixture("python");
    assert_eq!(
        chain(&ix, "python", "normalize", None),
        vec![
            "0:fn:normalize",
            "1:method:create",
            "2:class:UserService",
            "file:services/user_service.py"
        ]
    );
}

#[test]
fn go_method_parent_is_receiver_type() {
    let ix = index_fixture("go");
    assert_eq!(
        chain(&ix, "go", "AuthHandler.Validate", Some("auth/handler.go")),
        vec![
            "0:method:Validate",
            "1:struct:AuthHandler",
            "file:auth/handler.go"
        ]
    );
}

#[test]
fn descendants_of_user_service_list_three_methods() {
    for (repo, path) in [
        ("rust", "src/user.rs"),
        ("python", "services/user_service.py"),
        ("typescript", "src/services/userService.ts"),
        ("go", "services/user.go"),
    ] {
        let ix = index_fixture(repo);
        let store = ix.store();
        let sym = nav::resolve(&store, &scope(repo), "UserService", Some(path))
            .unwrap_or_else(|e| panic!("{repo}: {e}"));
        let tree = nav::descendants(&store, &scope(repo), &sym).expect("descendants");
        // Direct members; a Rust struct's members sit in its impl block.
        let members: Vec<&nav::TreeNode<cruxe::store::graph::SymbolRow>> = tree
            .children
            .iter()
            .flat_map(|c| {
                if c.symbol.kind == "impl" {
                    c.children.iter().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        let methods: Vec<(&str, &str)> = members
            .iter()
            .filter(|c| c.symbol.kind == "method")
            .map(|c| (c.symbol.name.as_str(), c.symbol.kind.as_str()))
            .collect();
        assert_eq!(methods.len(), 3, "{repo}: {methods:?}");
        let names: Vec<String> = methods.iter().map(|m| m.0.to_lowercase()).collect();
        assert_eq!(names, vec!["create", "find", "delete"], "{repo}");
    }
}

#[test]
fn descendants_are_a_tree_with_depths() {
    let ix = index_fixture("python");
    let store = ix.store();
    let sym = nav::resolve(&store, &scope("python"), "UserService", None).expect("resolve");
    let tree = nav::descendants(&store, &scope("python"), &sym).expect("descendants");
    let config = tree
        .children
        .iter()
        .find(|c| c.symbol.name == "Config")
        .expect("nested class Config");
    assert_eq!(config.depth, 1);
    assert_eq!(config.children.len(), 1);
    assert_eq!(config.children[0].symbol.name, "describe");
    assert_eq!(config.children[0].depth, 2);
    let create = tree
        .children
        .iter()
        .find(|c| c.symbol.name == "create")
        .expect("create");
    assert_eq!(create.children[0].symbol.name, "normalize");
    assert_eq!(tree.size(), 7);
}

#[test]
fn unknown_and_ambiguous_symbols() {
    let ix = index_fixture("rust");
    let store = ix.store();
    match nav::resolve(&store, &scope("rust"), "no_such_symbol", None) {
        Err(NavError::SymbolNotFound { ref_name, .. }) => assert_eq!(ref_name, "test"),
        other => panic!("expected not found, got {other:?}"),
    }
    // `validate` is a method of AuthHandler (handler.rs) and a free fn (jwt.rs).
    match nav::resolve(&store, &scope("rust"), "validate", None) {
        Err(NavError::Ambiguous { candidates, .. }) => {
            let mut qns: Vec<String> = candidates
                .iter()
                .map(|c| c.qualified_name.clone())
                .collect();
            qns.sort();
            assert_eq!(
                qns,
                vec![
                    "auth::handler::AuthHandler::validate",
                    "auth::jwt::validate"
                ]
            );
        }
        other => panic!("expected ambiguous, got {other:?}"),
    }
    // A path scopes the search: `validate_token` only in jwt.rs.
    let s = nav::resolve(
        &store,
        &scope("rust"),
        "validate_token",
        Some("src/auth/jwt.rs"),
    )
    .expect("scoped");
    assert_eq!(s.qualified_name, "auth::jwt::validate_token");
    assert!(matches!(
        nav::resolve(
            &store,
            &scope("rust"),
            "validate_token",
            Some("src/user.rs")
        ),
        Err(NavError::SymbolNotFound { .. })
    ));
}
