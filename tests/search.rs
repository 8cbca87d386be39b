//! The search index beside the graph: written by the index run, changed files
//! replaced (not the whole index), and a stale index detected by its tag.

use std::path::Path;

use cruxe::index::{Silent, index_repo};
use cruxe::store::catalog::{self, Catalog};
use cruxe::store::datadir::DataDir;
use cruxe::store::search::{self, EntryMaps, Filters, SearchIndex};

use crate::common::{copy_tree, fixture, opts, small_graph};

fn names(data: &DataDir, query: &str) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let cat: Catalog = catalog::load(&store, "py", "test").expect("catalog");
    let index = SearchIndex::open_dir(&data.search_dir("py", "test")).expect("search index");
    index
        .search(&cat, query, &Filters::default(), 5)
        .expect("search")
        .iter()
        .map(|h| cat.entry(h.entry).qualified_name().to_string())
        .collect()
}

fn tag_matches_graph(data: &DataDir) -> bool {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let indexed_at = store.ref_indexed_at("py", "test").expect("query");
    indexed_at.is_some() && search::read_tag(&data.search_dir("py", "test")) == indexed_at
}

/// The Python fixture copied to a scratch dir and indexed: (scratch, repo, data).
fn indexed_fixture() -> (tempfile::TempDir, std::path::PathBuf, DataDir) {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let data = DataDir::new(tmp.path().join("data"));
    index_repo(&repo, &data, &opts("py"), &Silent).expect("index");
    (tmp, repo, data)
}

#[test]
fn the_index_run_keeps_the_search_index_in_step_with_the_graph() {
    let (_tmp, repo, data) = indexed_fixture();
    assert!(tag_matches_graph(&data));
    assert_eq!(
        names(&data, "user service")[0],
        "services.user_service.UserService"
    );

    // Rename a class and re-index: its file's documents are replaced.
    let file = repo.join("services/user_service.py");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(
        &file,
        text.replace("class UserService", "class AccountService"),
    )
    .expect("write");
    // The body is indexed too: a word only in a body is found.
    std::fs::write(
        repo.join("auth/extra.py"),
        "def rotate(keys):\n    return sorted(keys, key=lambda k: k.zebrafish_epoch)\n",
    )
    .expect("write");
    index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
    assert!(tag_matches_graph(&data));
    let found = names(&data, "account service");
    assert_eq!(found[0], "services.user_service.AccountService");
    assert!(
        !names(&data, "user service")
            .iter()
            .any(|q| q.ends_with(".UserService"))
    );
    assert_eq!(names(&data, "zebrafish epoch")[0], "auth.extra.rotate");

    // An edit inside a body that keeps every position and property (same
    // length) still replaces that symbol's document, and only that one is
    // rewritten: the others of the file stay as they were.
    let before = SearchIndex::open_dir(&data.search_dir("py", "test"))
        .expect("search index")
        .symbol_ids()
        .expect("ids");
    let extra = repo.join("auth/extra.py");
    let text = std::fs::read_to_string(&extra).expect("read");
    std::fs::write(
        &extra,
        text.replace("zebrafish", "quagganox") + "\n\ndef other():\n    return 1\n",
    )
    .expect("write");
    index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
    assert!(tag_matches_graph(&data));
    assert!(names(&data, "zebrafish").is_empty());
    assert_eq!(names(&data, "quagganox")[0], "auth.extra.rotate");
    let after = SearchIndex::open_dir(&data.search_dir("py", "test"))
        .expect("search index")
        .symbol_ids()
        .expect("ids");
    assert_eq!(after.len(), before.len() + 1, "one document per symbol");

    // A deleted file's documents go.
    std::fs::remove_file(repo.join("auth/extra.py")).expect("rm");
    index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
    assert!(names(&data, "zebrafish epoch").is_empty());
}

#[test]
fn a_stale_search_index_is_rebuilt_by_the_next_run() {
    let (_tmp, repo, data) = indexed_fixture();
    // As if a run had been killed between the graph's commit and the search
    // index's: the index misses a change and its tag is the old one.
    let dir = data.search_dir("py", "test");
    let index = SearchIndex::open_dir(&dir).expect("open");
    index
        .write(
            true,
            &[],
            std::iter::empty::<(&cruxe::store::graph::SymbolRow, &str)>(),
        )
        .expect("empty the index");
    search::write_tag(&dir, "1999-01-01T00:00:00Z").expect("tag");
    drop(index);
    assert!(!tag_matches_graph(&data));
    index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
    assert!(tag_matches_graph(&data));
    assert_eq!(
        names(&data, "user service")[0],
        "services.user_service.UserService"
    );
    assert!(Path::new(&dir).is_dir());
}

#[test]
fn incremental_runs_keep_the_search_index_to_a_few_segments() {
    let (tmp, repo, data) = indexed_fixture();
    let dir = data.search_dir("py", "test");
    let segments = || {
        SearchIndex::open_dir(&dir)
            .expect("open")
            .segment_count()
            .expect("count")
    };
    assert_eq!(segments(), 1, "a rebuild leaves one segment");

    // Each run writes a segment of its own; without merges there would be 13.
    let file = repo.join("auth/grow.py");
    let mut text = String::new();
    for k in 0..12 {
        text.push_str(&format!("def grown_{k}():\n    return {k}\n\n"));
        std::fs::write(&file, &text).expect("write");
        index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
        assert!(segments() <= 6, "run {k}: {} segments", segments());
    }
    // Merged segments lose nothing: the index holds what a rebuild gives.
    let kept = SearchIndex::open_dir(&dir)
        .expect("open")
        .symbol_ids()
        .expect("ids");
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index_repo(&repo, &fresh, &opts("py"), &Silent).expect("index");
    let rebuilt = SearchIndex::open_dir(&fresh.search_dir("py", "test"))
        .expect("open")
        .symbol_ids()
        .expect("ids");
    assert_eq!(kept, rebuilt);
    assert_eq!(names(&data, "grown 11")[0], "auth.grow.grown_11");
}

/// A server opens a ref's search index again after each change and patches
/// its catalog: the index's maps of ids to catalog entries for the segments
/// the change left are brought up to date by the patch (`EntryMaps`), not
/// made again, and a search then names what a fresh catalog and map name.
#[test]
fn entry_maps_patched_with_the_catalog_name_what_fresh_ones_name() {
    let (_tmp, repo, data) = indexed_fixture();
    // Enough files that a change of three leaves the main segment unmerged.
    for k in 0..60 {
        std::fs::write(
            repo.join(format!("auth/gen_{k}.py")),
            format!("def gen_fn_{k}():\n    return {k}\n\n\nclass GenKind{k}:\n    pass\n"),
        )
        .expect("write");
    }
    index_repo(&repo, &data, &opts("py"), &Silent).expect("index");
    let dir = data.search_dir("py", "test");
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let before: Catalog = catalog::load(&store, "py", "test").expect("catalog");
    drop(store);
    let maps = std::sync::Arc::new(EntryMaps::default());
    let hits = |index: &SearchIndex, cat: &Catalog| -> Vec<(String, String)> {
        index
            .search(cat, "gen fn", &Filters::default(), 200)
            .expect("search")
            .iter()
            .map(|h| {
                let e = cat.entry(h.entry);
                (e.qualified_name().to_string(), e.path().to_string())
            })
            .collect()
    };
    let first = SearchIndex::open_dir(&dir)
        .expect("open")
        .with_entry_maps(maps.clone());
    assert_eq!(hits(&first, &before).len(), 120, "each function and class");
    drop(first);

    // An edit (a function renamed), a deletion and an addition.
    std::fs::write(
        repo.join("auth/gen_3.py"),
        "def gen_fn_renamed():\n    return 3\n",
    )
    .expect("edit");
    std::fs::remove_file(repo.join("auth/gen_5.py")).expect("delete");
    std::fs::write(
        repo.join("auth/gen_new.py"),
        "def gen_fn_new():\n    return 0\n",
    )
    .expect("add");
    let r = index_repo(&repo, &data, &opts("py"), &Silent).expect("re-index");
    let changes = r
        .changes
        .as_ref()
        .expect("an in-place run reports its changes");
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let patched = before.apply(changes, &store).expect("patch");
    let loaded: Catalog = catalog::load(&store, "py", "test").expect("catalog");
    drop(store);

    let reopened = SearchIndex::open_dir(&dir)
        .expect("open")
        .with_entry_maps(maps.clone());
    assert!(
        reopened.segment_count().expect("count") > 1,
        "the main segment was merged"
    );
    let kept = reopened.entry_maps_of(&patched).expect("maps");
    assert_eq!(maps.patched(), 1, "the main segment's map was patched");
    let made = SearchIndex::open_dir(&dir)
        .expect("open")
        .entry_maps_of(&patched)
        .expect("maps");
    assert_eq!(kept, made);
    let mut found = hits(&reopened, &patched);
    let mut fresh = hits(&SearchIndex::open_dir(&dir).expect("open"), &loaded);
    // Equal scores are ordered by entry, and a patch appends its entries.
    found.sort();
    fresh.sort();
    assert_eq!(found, fresh);
    let names: Vec<&str> = found.iter().map(|(q, _)| q.as_str()).collect();
    assert!(names.contains(&"auth.gen_3.gen_fn_renamed"));
    assert!(names.contains(&"auth.gen_new.gen_fn_new"));
    assert!(!names.contains(&"auth.gen_5.gen_fn_5"));
    assert!(!names.contains(&"auth.gen_3.gen_fn_3"));
    assert!(names.contains(&"auth.gen_4.gen_fn_4"));
}

/// A full build that waits for its search writer before loading its nodes
/// (`search_then_load`, as under a small `--memory-mb`) writes the same index:
/// tagged with the graph's run, answering the same searches.
#[test]
fn a_build_that_settles_the_search_writer_first_writes_the_same_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("py");
    copy_tree(&fixture("python"), &repo);
    let data = DataDir::new(tmp.path().join("data"));
    let settled = cruxe::index::IndexOptions {
        search_then_load: true,
        ..opts("py")
    };
    index_repo(&repo, &data, &settled, &Silent).expect("index");
    assert!(tag_matches_graph(&data));
    let (_other, _, beside) = indexed_fixture();
    let ids = |d: &DataDir| {
        SearchIndex::open_dir(&d.search_dir("py", "test"))
            .expect("open")
            .symbol_ids()
            .expect("ids")
    };
    assert!(!ids(&data).is_empty());
    assert_eq!(ids(&data), ids(&beside));
    assert_eq!(
        names(&data, "user service")[0],
        "services.user_service.UserService"
    );
}
