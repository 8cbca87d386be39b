//! The MCP tools as the transports call them: each resolves the call's repo
//! and ref to a `query::View`, runs the query, and wraps its typed answer (or its
//! error) with protocol v1 metadata, made here for every tool. `run_cypher` and
//! `index_status` answer from the service itself.
//!
//! Architecture invariant: no transport here. `server.rs` calls these functions
//! on a blocking thread and wraps what they return as MCP tool results.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::model::cancel::Cancel;
use crate::query::answers::*;
use crate::query::args::{LIST_TOKENS, limit, max_tokens, non_empty};
use crate::query::budget::fitting;
use crate::query::cypher;
use crate::query::error::ToolError;
pub use crate::query::inputs::*;
use crate::query::view::View;
use crate::query::{calls, context, hierarchy, locate, outline, related, search, tree};
use crate::service::{IndexingStatus, Served, Service};

pub const PROTOCOL_VERSION: &str = "1.0";

// Inputs

/// What a tool call answers: the JSON object and whether it is an error.
pub struct Reply {
    pub body: Value,
    pub is_error: bool,
}

/// The answer to arguments that do not match a tool's input schema.
pub fn invalid_arguments(svc: &Service, message: &str) -> Value {
    finish::<ErrorAnswer>(
        svc,
        None,
        None,
        Err(ToolError::invalid_input(format!(
            "{message}; see the tool's input schema (tools/list)"
        ))),
    )
    .body
}

/// The answer to a call that did not run to its end (its deadline passed, its
/// client cancelled it): the error envelope with its metadata.
pub fn stopped(svc: &Service, e: ToolError) -> Value {
    finish::<ErrorAnswer>(svc, None, None, Err(e)).body
}

/// The view a call on `repo`/`ref_name` reads, or why there is none.
fn view<'a>(
    svc: &'a Service,
    cancel: &Cancel,
    repo: Option<&str>,
    ref_name: Option<&str>,
) -> Result<View<'a>, ToolError> {
    if svc.replica.as_ref().is_some_and(|r| r.generation == 0) {
        return Err(ToolError::no_generation());
    }
    let served = svc
        .repo(repo)
        .cloned()
        .ok_or_else(|| ToolError::repo_not_found(repo, svc.repo_names()))?;
    let ref_name = ref_name
        .filter(|r| !r.is_empty())
        .unwrap_or(&served.ref_name)
        .to_string();
    let not_ready =
        |s: &Served| ToolError::index_not_ready(&s.name, s.status().as_str(), s.error().as_deref());
    let Some(graph) = served.store.graph() else {
        return Err(not_ready(&served));
    };
    let refs: Vec<String> = served
        .store
        .refs()
        .into_iter()
        .filter(|r| r.repo == served.name)
        .map(|r| r.ref_name)
        .collect();
    if !refs.contains(&ref_name) {
        if ref_name == served.ref_name && served.status() != IndexingStatus::Ready {
            return Err(not_ready(&served));
        }
        return Err(ToolError::ref_not_indexed(&served.name, &ref_name, refs));
    }
    let root = served.source_root(&ref_name);
    let (s1, g1, r1) = (served.clone(), graph.clone(), ref_name.clone());
    let (s2, g2, r2, root2) = (
        served.clone(),
        graph.clone(),
        ref_name.clone(),
        root.clone(),
    );
    // The catalog and search loads above use the graph as it is: one call's
    // deadline must not cut a load other calls wait for too.
    Ok(View::new(
        served.name.clone(),
        ref_name,
        Arc::new(graph.with_cancel(cancel.clone())),
        svc.shared.clone(),
        root,
        Box::new(move || Ok(s1.store.catalog(&g1, &s1.name, &r1)?)),
        Box::new(move || {
            s2.store
                .search(&g2, &s2.name, &r2, Some(&root2))
                .map_err(ToolError::internal)
        }),
    ))
}

/// How long an answer waits for the catalog of an index run that committed
/// while it was made (the service swaps it in right after the commit).
const CATCH_UP: Duration = Duration::from_secs(5);

/// A query's answer for the call: its view, its outcome, its metadata. When
/// an index run committed while the answer was made (its rows and the graph's
/// structure could be of two states), it waits for the run's catalog and is
/// made again on a fresh view. One still of two states at the deadline says
/// it is partial.
fn answer<T: Answer>(
    svc: &Service,
    cancel: &Cancel,
    repo: &Option<String>,
    ref_name: &Option<String>,
    query: impl Fn(&View) -> Result<(T, &'static str), ToolError>,
) -> Reply {
    let deadline = Instant::now() + CATCH_UP;
    let out = loop {
        let v = match view(svc, cancel, repo.as_deref(), ref_name.as_deref()) {
            Ok(v) => v,
            Err(e) => break Err(e),
        };
        let out = query(&v);
        if !v.behind() {
            break out;
        }
        // Waiting costs nothing: thirty-two callers making their answers
        // again every few milliseconds starved the run they waited for.
        let served = svc.repo(repo.as_deref());
        while Instant::now() < deadline
            && !cancel.is_cancelled()
            && !served.is_some_and(|s| s.store.caught_up(&v.repo, &v.ref_name))
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        if Instant::now() >= deadline || cancel.is_cancelled() {
            break out.map(|(answer, _)| (answer, "partial"));
        }
    };
    finish(svc, repo.as_deref(), ref_name.as_deref(), out)
}

pub fn get_symbol_hierarchy(svc: &Service, input: HierarchyInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        hierarchy::get_symbol_hierarchy(v, input.clone())
    })
}

pub fn find_related_symbols(svc: &Service, input: RelatedInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        related::find_related_symbols(v, input.clone())
    })
}

pub fn locate_symbol(svc: &Service, input: LocateInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        locate::locate_symbol(v, input.clone())
    })
}

pub fn get_file_outline(svc: &Service, input: OutlineInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        outline::get_file_outline(v, input.clone())
    })
}

pub fn explore_tree(svc: &Service, input: ExploreInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        tree::explore_tree(v, input.clone())
    })
}

pub fn get_node(svc: &Service, input: NodeInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        tree::get_node(v, input.clone())
    })
}

pub fn search_code(svc: &Service, input: SearchInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        search::search_code(v, input.clone())
    })
}

pub fn get_code_context(svc: &Service, input: ContextInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        context::get_code_context(v, input.clone())
    })
}

pub fn find_references(svc: &Service, input: ReferencesInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        calls::find_references(v, input.clone())
    })
}

pub fn get_call_graph(svc: &Service, input: CallGraphInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        calls::get_call_graph(v, input.clone())
    })
}

pub fn find_implementations(svc: &Service, input: ImplementationsInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        calls::find_implementations(v, input.clone())
    })
}

pub fn analyze_impact(svc: &Service, input: ImpactInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    answer(svc, cancel, &repo, &rf, |v| {
        calls::analyze_impact(v, input.clone())
    })
}

/// Fills protocol v1 metadata for an answer about `repo`/`ref`: the one place it
/// is made, for answers and errors alike.
fn fill_protocol(
    p: &mut ProtocolMeta,
    svc: &Service,
    repo: Option<&str>,
    ref_name: Option<&str>,
    completeness: &str,
) {
    let served = svc.repo(repo);
    // No repo named on a server of several (`index_status` of them all): the
    // envelope speaks for every repo, at its least ready.
    let all: Vec<&Arc<crate::service::Served>> = match (served, repo) {
        (Some(s), _) => vec![s],
        (None, None) => svc.repos.iter().collect(),
        (None, Some(_)) => Vec::new(),
    };
    let status = all
        .iter()
        .map(|s| s.status())
        .min_by_key(|s| match s {
            IndexingStatus::Failed => 0,
            IndexingStatus::NotIndexed => 1,
            IndexingStatus::Indexing => 2,
            IndexingStatus::Ready => 3,
        })
        .unwrap_or(IndexingStatus::NotIndexed);
    let has_graph = !all.is_empty() && all.iter().all(|s| s.store.graph().is_some());
    let freshness = match (p.freshness_override, served) {
        (Some(f), _) => f,
        (None, Some(s)) => s.freshness(ref_name.unwrap_or(&s.ref_name)).as_str(),
        (None, None) if !all.is_empty() => {
            let fresh = all
                .iter()
                .all(|s| s.freshness(&s.ref_name).as_str() == "fresh");
            if fresh { "fresh" } else { "stale" }
        }
        (None, None) => "stale",
    };
    p.cruxe_protocol_version = PROTOCOL_VERSION.to_string();
    p.freshness_status = freshness.to_string();
    p.indexing_status = status.as_str().to_string();
    p.result_completeness = completeness.to_string();
    p.repo = served.map(|s| s.name.clone()).or(repo.map(str::to_string));
    p.ref_name = ref_name
        .map(str::to_string)
        .or(served.map(|s| s.ref_name.clone()));
    p.schema_status = if has_graph {
        "compatible"
    } else {
        "not_indexed"
    }
    .to_string();
    if let Some(r) = svc.replica.as_ref().filter(|r| r.generation > 0) {
        p.generation = Some(r.generation);
        p.published_at = r.published_at.clone();
        p.generations_behind = Some(r.status.newest().saturating_sub(r.generation));
    }
}

/// Wraps a tool's outcome: the answer gets its protocol metadata; an error
/// becomes the envelope (`error` and `metadata`).
fn finish<T: Answer>(
    svc: &Service,
    repo: Option<&str>,
    ref_name: Option<&str>,
    out: Result<(T, &'static str), ToolError>,
) -> Reply {
    match out {
        Ok((mut answer, completeness)) => {
            fill_protocol(answer.protocol(), svc, repo, ref_name, completeness);
            Reply {
                body: to_json(&answer),
                is_error: false,
            }
        }
        Err(e) => {
            let mut answer = ErrorAnswer {
                error: ErrorBody {
                    code: e.code.to_string(),
                    message: e.message,
                    data: e.data,
                },
                metadata: Metadata::default(),
            };
            fill_protocol(answer.protocol(), svc, repo, ref_name, "partial");
            Reply {
                body: to_json(&answer),
                is_error: true,
            }
        }
    }
}

/// An answer as the JSON object the transports send.
fn to_json(answer: &impl serde::Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or_else(|e| {
        json!({"error": {"code": "internal_error", "message": format!("internal error: {e}"), "data": {}}})
    })
}

// Shared shapes and input checks

pub fn run_cypher(svc: &Service, input: CypherInput, cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let c = view(svc, cancel, repo.as_deref(), rf.as_deref())?;
        let served = svc
            .repo(repo.as_deref())
            .ok_or_else(|| ToolError::repo_not_found(repo.as_deref(), svc.repo_names()))?;
        let query = non_empty("query", &input.query)?;
        if query.len() > MAX_CYPHER_BYTES {
            return Err(ToolError::invalid_input(format!(
                "the query is {} bytes; at most {MAX_CYPHER_BYTES} are accepted",
                query.len()
            )));
        }
        let max_rows = limit(input.limit, 100, svc.cfg.max_rows)?;
        let mut params: Vec<(String, Value)> = input
            .params
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        if let Some(why) = cypher::param_error(&params) {
            return Err(ToolError::invalid_input(why));
        }
        cypher::bind_scope(query, &mut params, &c.repo, &c.ref_name);
        let store = &served.store;
        let request = cypher::Request {
            query: query.to_string(),
            params,
            max_rows,
            timeout_ms: svc.cfg.query_timeout_ms,
            max_bytes: store.cypher.limits().max_answer_bytes,
        };
        let (answer, source) = store
            .cypher
            .run(&request, cancel)
            .map_err(ToolError::adhoc)?;
        let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
        let mut rows = answer.rows;
        let cut = fitting(&c.tokens, &rows, budget);
        let truncated = answer.truncated || cut < rows.len();
        rows.truncate(cut);
        let behind = source.version != store.version();
        let mut body = CypherAnswer {
            columns: answer.columns,
            row_count: rows.len(),
            rows,
            truncated,
            snapshot_behind: behind,
            metadata: Metadata::default(),
        };
        // Read from a snapshot older than what the other tools read: say so.
        if behind {
            body.metadata.protocol.freshness_override = Some("syncing");
        }
        Ok((body, if truncated { "truncated" } else { "complete" }))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// Longest `run_cypher` query accepted.
const MAX_CYPHER_BYTES: usize = 64 * 1024;

pub fn index_status(svc: &Service, input: StatusInput, _cancel: &Cancel) -> Reply {
    let (repo, rf) = (input.repo.clone(), input.ref_name.clone());
    let out = (|| {
        let repos: Vec<&Arc<Served>> = match repo.as_deref() {
            Some(name) => vec![
                svc.repo(Some(name))
                    .ok_or_else(|| ToolError::repo_not_found(Some(name), svc.repo_names()))?,
            ],
            None => svc.repos.iter().collect(),
        };
        let list: Vec<RepoStatus> = repos.iter().map(|s| repo_status(svc, s)).collect();
        Ok((
            StatusAnswer {
                repos: list,
                metadata: Metadata::default(),
            },
            "complete",
        ))
    })();
    finish(svc, repo.as_deref(), rf.as_deref(), out)
}

/// One served repo as `index_status` shows it.
fn repo_status(svc: &Service, s: &Served) -> RepoStatus {
    let (phase, done, total) = s.progress.snapshot();
    let status = s.status();
    let refs = s
        .store
        .refs()
        .into_iter()
        .filter(|r| r.repo == s.name)
        .map(|r| RefStatusAnswer {
            source: if r.ref_name == s.ref_name {
                "working_tree"
            } else {
                "git"
            }
            .into(),
            freshness_status: s.freshness(&r.ref_name).as_str().into(),
            ref_name: r.ref_name,
            commit: r.commit,
            last_indexed: r.indexed_at,
            files: r.files,
            symbols: r.symbols,
            import_edges: r.import_edges,
            unresolved_imports: r.unresolved_imports,
        })
        .collect();
    RepoStatus {
        repo: s.name.clone(),
        root: s.root.to_string_lossy().into_owned(),
        data_dir: s.store.data.root().to_string_lossy().into_owned(),
        default_ref: s.ref_name.clone(),
        // A replica watches no tree: it follows the store.
        watching: svc.cfg.watch && svc.replica.is_none() && s.watch_error().is_none(),
        cypher_sandbox: s.store.cypher.sandbox(),
        watch_error: s.watch_error(),
        indexing_status: status.as_str().into(),
        error: s.error(),
        job: (status == IndexingStatus::Indexing).then_some(JobStatus { phase, done, total }),
        last_run: s.last_run().map(|l| LastRun {
            parsed_files: l.parsed,
            removed_files: l.removed,
            diagnostics: l.diagnostics,
            seconds: (l.seconds * 1000.0).round() / 1000.0,
        }),
        refs,
    }
}
