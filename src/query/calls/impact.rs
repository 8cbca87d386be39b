//! `analyze_impact`: what a change can break. The change is a symbol, a list
//! of changed files, or the working tree's git diff against a ref (its hunks
//! mapped to the innermost symbols around them). Kuzu walks everything that
//! calls, references, implements or extends each changed symbol, breadth-first
//! up to `depth` (`queries/calls/impact.cypher`); the answer ranks what it
//! reached by distance and lists the tests among it.
//!
//! A changed method that implements a declaration (a trait's, an
//! interface's, a base class's method) also affects the declaration's callers
//! (`via.relation: dispatch`). `name`-tier edges are left out unless asked
//! for; the answer is a `lower_bound` when one was left out, or when a site
//! names a changed symbol without proof (`UNRESOLVED`).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::answers::*;
use super::super::args::{LIST_TOKENS, clean_path, limit, max_tokens, non_empty, resolve_one};
use super::super::budget::keep_within;
use super::super::error::ToolError;
use super::super::inputs::ImpactInput;
use super::super::view::View;
use super::coverage;
use super::diff::{self, Change, FileChange};
use super::tests::{is_test_file, is_test_maker, is_test_symbol, run_id};
use super::{
    completeness, constructed_by, declarations_of, depth, dispatches, file_path_of, tiers,
};
use crate::store::catalog::Catalog;
use crate::store::graph::{GraphStore, LibraryCall, WalkBudget};

/// Nodes one walk may return: the answer's totals are exact below it.
const WALK_CAP: usize = 5_000;
/// Nodes and edges the walks of one answer may return in all
/// (`WalkBudget`): the largest real impacts measured (a 10k-file Rust
/// corpus) stay well below it; a hostile one stops here, `truncated`.
const WORK: usize = 200_000;

/// Rounds of steps past the walks' edges (`through_*`) one answer takes at
/// most: each round's walks are bounded by the answer's work budget too.
const MAX_ROUNDS: usize = 8;

/// How a dependent is reached, strongest first (the `via` picked when several
/// edges lead one step closer to the change).
const RELATIONS: [&str; 9] = [
    "calls",
    "dispatch",
    "overload",
    "constructs",
    "implements",
    "extends",
    "references",
    "encloses",
    "library",
];

/// A node an impact walk returned: (id, is a file, distance along every tier,
/// its edges as (target id, relationship, confidence)).
type Walked = (String, bool, i64, Vec<(String, &'static str, &'static str)>);

/// A node reached while the answer is made.
struct Reach {
    is_file: bool,
    distance: usize,
    /// How many starts reach it.
    starts: usize,
    /// Its own edges of the walked kinds: (target id, relationship).
    edges: Vec<(String, &'static str)>,
}

impl Reach {
    /// A symbol reached past the walk's edges (`through_*`), one step from
    /// `from` along `rel`.
    fn step(distance: usize, from: String, rel: &'static str) -> Reach {
        Reach {
            is_file: false,
            distance,
            starts: 1,
            edges: vec![(from, rel)],
        }
    }

    /// A node first reached at `distance`, with its edges along `allowed`.
    fn new(
        is_file: bool,
        distance: usize,
        edges: Vec<(String, &'static str, &'static str)>,
        allowed: &[&str],
    ) -> Reach {
        let edges = edges
            .into_iter()
            .filter(|(_, _, confidence)| allowed.contains(confidence))
            .map(|(to, rel, _)| (to, rel))
            .collect();
        Reach {
            is_file,
            distance,
            starts: 1,
            edges,
        }
    }
}

pub fn analyze_impact(
    c: &View,
    input: ImpactInput,
) -> Result<(ImpactAnswer, &'static str), ToolError> {
    let depth = depth(input.depth, 3, GraphStore::MAX_IMPACT_DEPTH)?;
    let limit = limit(input.limit, 200, 2000)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let (tiers, tier) = tiers(input.min_confidence);
    let cat = c.catalog()?;
    let mut notes: Vec<String> = Vec::new();
    let mut change = Change::default();
    changed_symbols(c, &cat, &input, &mut notes, &mut change)?;
    let changed = change.symbols.clone();
    // Read before the walks: a bad report is the caller's error, found fast.
    let report = read_report(c, input.coverage.as_deref())?;
    let changed_ids: HashSet<String> = changed.iter().map(|&i| cat.entry(i).id()).collect();

    // The walks start at the changed symbols and at the declarations changed
    // methods implement (whose callers may reach them), where anything
    // points at them at all (one hop, a tenth of a walk).
    let mut starts: Vec<String> = changed.iter().map(|&i| cat.entry(i).id()).collect();
    let mut declared: HashSet<String> = HashSet::new();
    let declarations = if dispatches(tiers) {
        declarations_of(c, &cat, &changed)?
    } else {
        Vec::new()
    };
    let stubs = changed.iter().flat_map(|&m| overloads(&cat, m));
    for d in declarations.into_iter().map(|(_, d)| d).chain(stubs) {
        let id = cat.entry(d).id();
        if !changed_ids.contains(&id) && declared.insert(id.clone()) {
            starts.push(id);
        }
    }
    let starts = with_dependents(c, &cat, &changed, starts)?;
    // A walk per start along every tier; the tiers asked for are applied
    // here, by a breadth-first walk over what came back (a node within reach
    // along some tiers is within reach along all of them, and so is every
    // node on the way): what only `name`-tier edges reach is counted, not
    // listed. One statement a start, where a second walk with the tiers cut
    // cost a quarter more.
    let all_tiers = crate::store::graph::GraphStore::CALL_TIERS.len();
    let allowed = &crate::store::graph::GraphStore::CALL_TIERS[..tiers];
    let work = WalkBudget::new(WORK);
    let skip: HashSet<String> = changed_ids.union(&declared).cloned().collect();
    let round = Round {
        depth,
        all_tiers,
        allowed,
        work: &work,
    };
    let Walks {
        mut reached,
        mut only_by_name,
        mut cut,
        unwalked,
    } = first_round(c, &starts, &skip, &round)?;
    cut |= past_edges(
        c,
        &cat,
        &mut reached,
        (&skip, &changed),
        (round, dispatches(tiers)),
    )?;
    only_by_name.retain(|id| !reached.contains_key(id));

    // Why the answer may be a lower bound.
    let mut lower: Vec<String> = name_only_note(only_by_name.len(), depth)
        .into_iter()
        .collect();
    // Every site no tier proved that could reach a changed or affected
    // symbol short of `depth` (its callers would be in the answer).
    let nodes = short_of_depth(&cat, &changed, &declared, &reached, depth);
    let mut unproven = completeness::into(
        c,
        &cat,
        &nodes,
        completeness::Into {
            kinds: &["call", "extends", "implements"],
            name_tier_left_out: tiers < all_tiers,
            values_hide_calls: true,
        },
    )?;
    lower.extend(unproven.note());
    lower.extend(cut_note(&work, cut, unwalked, starts.len()));
    // The walk stops at `depth`: what reaches a symbol there from further
    // away (a test three calls up) is in no list of this answer.
    let beyond = beyond_depth(c, &reached, depth)?;
    lower.extend(beyond_note(beyond, depth));
    let completeness = if unproven.is_exact() && !cut && beyond == 0 {
        "exact"
    } else {
        "lower_bound"
    };

    let affected = affected_rows(c, &cat, &reached, (&changed_ids, &declared));

    let by_distance = by_distance(&affected);
    let changed_rows: Vec<ChangedSymbol> = changed.iter().map(|&i| changed_row(&cat, i)).collect();
    let mut files = files_of(&changed_rows, &affected);
    let mut tests = tests_of(c, &cat, &changed_rows, &affected, &files);
    let (tests_from, tests_completeness) = report.as_ref().map_or(("graph", completeness), |r| {
        coverage::select(c, &cat, r, &change).apply(&mut tests, completeness, &mut notes)
    });
    let (total_affected, total_files, total_tests) = (affected.len(), files.len(), tests.len());
    let total_changed = changed_rows.len();
    let mut changed_rows = changed_rows;
    let mut affected = affected;
    affected.truncate(limit);
    // Why the answer is a lower bound leads the notes.
    notes.splice(0..0, lower);
    let total_notes = notes.len();
    let lists = (&mut notes, &mut unproven.sites, &mut tests);
    fit(
        c,
        budget,
        lists,
        (&mut changed_rows, &mut affected, &mut files),
    );
    let truncated = cut
        || affected.len() < total_affected
        || files.len() < total_files
        || tests.len() < total_tests
        || changed_rows.len() < total_changed
        || notes.len() < total_notes;
    let body = ImpactAnswer {
        changed: changed_rows,
        affected,
        by_distance,
        files,
        tests,
        completeness: completeness.into(),
        tests_from: tests_from.into(),
        tests_completeness: tests_completeness.into(),
        unproven: unproven.count,
        unproven_sites: unproven.sites,
        notes,
        total_changed,
        total_affected,
        total_files,
        total_tests,
        totals_exact: !cut,
        truncated,
        depth,
        min_confidence: tier.into(),
        metadata: Metadata::default(),
    };
    Ok((body, if truncated { "truncated" } else { "complete" }))
}

/// The distance from `start` of each node of its walk along the edges of the
/// `allowed` tiers only, up to `depth` (a node out of reach is left out).
fn within(start: &str, walk: &[Walked], allowed: &[&str], depth: usize) -> HashMap<String, usize> {
    let mut pointing: HashMap<&str, Vec<&str>> = HashMap::new();
    for (id, _, _, edges) in walk {
        for (to, _, confidence) in edges {
            if allowed.contains(confidence) {
                pointing.entry(to.as_str()).or_default().push(id.as_str());
            }
        }
    }
    let mut dist: HashMap<String, usize> = HashMap::from([(start.to_string(), 0)]);
    let mut queue = std::collections::VecDeque::from([(start, 0usize)]);
    while let Some((n, d)) = queue.pop_front() {
        if d == depth {
            continue;
        }
        for &m in pointing.get(n).into_iter().flatten() {
            if !dist.contains_key(m) {
                dist.insert(m.to_string(), d + 1);
                queue.push_back((m, d + 1));
            }
        }
    }
    dist.remove(start);
    dist
}

/// The `starts` (symbol ids) that anything points at: a hop per symbol, or,
/// for a file with many changed symbols, one statement for the whole file.
fn with_dependents(
    c: &View,
    cat: &Catalog,
    changed: &[usize],
    starts: Vec<String>,
) -> Result<Vec<String>, ToolError> {
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in changed {
        *per_file.entry(cat.entry(i).path()).or_default() += 1;
    }
    let whole: Vec<&str> = per_file
        .into_iter()
        .filter(|(_, n)| *n > SYMBOLS_PER_HOP)
        .map(|(path, _)| path)
        .collect();
    let mut known: HashSet<String> = HashSet::new();
    let mut pointed: HashSet<String> = HashSet::new();
    if !whole.is_empty() {
        let files: Vec<String> = whole
            .iter()
            .map(|p| crate::store::graph::file_id(&c.repo, &c.ref_name, p))
            .collect();
        pointed.extend(
            c.graph
                .files_dependents(files)
                .map_err(ToolError::internal)?
                .into_iter()
                .flatten(),
        );
        known.extend(
            changed
                .iter()
                .filter(|&&i| whole.contains(&cat.entry(i).path()))
                .map(|&i| cat.entry(i).id()),
        );
    }
    let ask: Vec<String> = starts
        .iter()
        .filter(|id| !known.contains(*id))
        .cloned()
        .collect();
    let counts = c
        .graph
        .dependents_count(ask.clone())
        .map_err(ToolError::internal)?;
    pointed.extend(
        ask.into_iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|(id, _)| id),
    );
    Ok(starts
        .into_iter()
        .filter(|id| pointed.contains(id))
        .collect())
}

/// Each dependent with the step it takes toward the change (`via`), nearest
/// first, then most reached.
fn affected_rows(
    c: &View,
    cat: &Catalog,
    reached: &HashMap<String, Reach>,
    (changed_ids, declared): (&HashSet<String>, &HashSet<String>),
) -> Vec<AffectedSymbol> {
    let distance_of = |id: &str| -> Option<usize> {
        if changed_ids.contains(id) || declared.contains(id) {
            Some(0)
        } else {
            reached.get(id).map(|r| r.distance)
        }
    };
    let mut affected: Vec<(AffectedSymbol, usize)> = Vec::new();
    for (id, r) in reached {
        let via = r
            .edges
            .iter()
            .filter_map(|(to, rel)| {
                let d = distance_of(to).filter(|d| *d < r.distance)?;
                let rel = if declared.contains(to) && *rel == "CALLS" {
                    "dispatch".to_string()
                } else {
                    rel_name(rel)
                };
                Some((r.distance - d, to, rel))
            })
            .min_by_key(|(steps, to, rel)| (*steps, RELATIONS.iter().position(|x| x == rel), *to));
        let via = match via.and_then(|(_, to, rel)| Some((cat.by_id(to)?, rel))) {
            Some((t, relation)) => {
                let e = cat.entry(t);
                Via {
                    name: e.name().to_string(),
                    qualified_name: e.qualified_name().to_string(),
                    relation,
                }
            }
            None => continue,
        };
        let Some(row) = affected_row(c, cat, id, r, via) else {
            continue;
        };
        affected.push((row, r.starts));
    }
    affected.sort_by(|(a, an), (b, bn)| {
        (
            a.distance,
            std::cmp::Reverse(*an),
            &a.path,
            a.line_start,
            &a.id,
        )
            .cmp(&(
                b.distance,
                std::cmp::Reverse(*bn),
                &b.path,
                b.line_start,
                &b.id,
            ))
    });
    affected.into_iter().map(|(a, _)| a).collect()
}

/// How a further round of walks goes: as deep as the first, along its tiers.
#[derive(Clone, Copy)]
struct Round<'w> {
    depth: usize,
    all_tiers: usize,
    allowed: &'w [&'static str],
    work: &'w std::sync::Arc<WalkBudget>,
}

/// The walks from the starts, every tier followed, each node at its least
/// distance along the tiers `allowed` (`within`); `skip` is the change
/// itself. With what only `name`-tier edges reach, whether a walk was cut,
/// and how many were cut or not run.
fn first_round(
    c: &View,
    starts: &[String],
    skip: &HashSet<String>,
    round: &Round<'_>,
) -> Result<Walks, ToolError> {
    let walks = c
        .graph
        .impact_walks(
            starts.to_vec(),
            (round.depth, round.all_tiers, WALK_CAP),
            round.work,
        )
        .map_err(ToolError::internal)?;
    let mut cut = false;
    let mut unwalked = 0;
    let mut only_by_name: HashSet<String> = HashSet::new();
    let mut reached: HashMap<String, Reach> = HashMap::new();
    for (start, (walk, walk_cut)) in starts.iter().zip(walks) {
        cut |= walk.len() >= WALK_CAP || walk_cut;
        unwalked += usize::from(walk_cut);
        let distances = within(start, &walk, round.allowed, round.depth);
        for (id, is_file, _, edges) in walk {
            if skip.contains(&id) {
                continue;
            }
            let Some(&d) = distances.get(&id) else {
                only_by_name.insert(id);
                continue;
            };
            match reached.get_mut(&id) {
                Some(r) => {
                    r.distance = r.distance.min(d);
                    r.starts += 1;
                }
                None => {
                    reached.insert(id, Reach::new(is_file, d, edges, round.allowed));
                }
            }
        }
    }
    Ok(Walks {
        reached,
        only_by_name,
        cut,
        unwalked,
    })
}

/// What the first round of walks reached (`first_round`).
struct Walks {
    reached: HashMap<String, Reach>,
    /// Reached only along `name`-tier edges below the tiers asked for.
    only_by_name: HashSet<String>,
    cut: bool,
    /// Walks cut or not run for the work budget.
    unwalked: usize,
}

/// A reached method that overrides or implements a supertype's runs where
/// that declaration is called (`self.format_options()` in a base class runs a
/// subclass's): the declaration is reached one step further (`dispatch`), and
/// so is what reaches it, within the depth; a constructor's class likewise
/// (`constructs`: calling the class runs it). Whether a walk was cut.
fn through_overrides(
    c: &View,
    cat: &Catalog,
    reached: &mut HashMap<String, Reach>,
    from: From<'_>,
    round: Round<'_>,
) -> Result<bool, ToolError> {
    let From { skip, changed, .. } = from;
    let mut methods: Vec<usize> = from
        .symbols(cat, reached, round.depth)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    methods.sort_unstable();
    let mut starts: Vec<(String, usize)> = Vec::new();
    let mut more: Vec<(usize, usize, &'static str, usize)> = declarations_of(c, cat, &methods)?
        .into_iter()
        .map(|(m, d)| (m, d, "DISPATCH", 1))
        .collect();
    more.extend(methods.iter().flat_map(|&m| {
        overloads(cat, m)
            .into_iter()
            .map(move |d| (m, d, "OVERLOAD", 0))
    }));
    // A constructor runs where its class is called (`Option(…)` runs
    // `Option.__init__`): the class is reached one step further.
    let constructors = methods.iter().chain(changed).copied();
    more.extend(constructors.filter_map(|m| {
        let class = constructed_by(cat, m)?;
        Some((m, class, "CONSTRUCTS", 1))
    }));
    for (m, d, rel, step) in more {
        let (m_id, d_id) = (cat.entry(m).id(), cat.entry(d).id());
        if skip.contains(&d_id) || reached.contains_key(&d_id) {
            continue;
        }
        let distance = match reached.get(&m_id) {
            Some(r) => r.distance + step,
            None if changed.contains(&m) => step,
            None => round.depth,
        };
        reached.insert(d_id.clone(), Reach::step(distance, m_id, rel));
        if distance < round.depth {
            starts.push((d_id, distance));
        }
    }
    walk_further(c, reached, skip, &starts, round)
}

/// What the walks reached leads on past their edges (an override to its
/// declaration, a value to its module-level holder, a nested function to the
/// function that makes it), and what those reach may again: rounds until none
/// adds a symbol. Whether a walk was cut.
fn past_edges(
    c: &View,
    cat: &Catalog,
    reached: &mut HashMap<String, Reach>,
    (skip, changed): (&HashSet<String>, &[usize]),
    (round, dispatch): (Round<'_>, bool),
) -> Result<bool, ToolError> {
    let mut cut = false;
    // Each round steps from what is new to it (reached since, or nearer now).
    let mut seen: HashMap<String, usize> = HashMap::new();
    for n in 0..MAX_ROUNDS {
        let fresh: HashSet<String> = reached
            .iter()
            .filter(|(id, r)| seen.get(*id) != Some(&r.distance))
            .map(|(id, _)| id.clone())
            .collect();
        if n > 0 && fresh.is_empty() {
            break;
        }
        seen.extend(reached.iter().map(|(id, r)| (id.clone(), r.distance)));
        let from = From {
            skip,
            changed: if n == 0 { changed } else { &[] },
            fresh: &fresh,
        };
        if dispatch {
            cut |= through_overrides(c, cat, reached, from, round)?;
        }
        cut |= through_module_values(c, cat, reached, from, round)?;
        cut |= through_enclosing(c, cat, reached, from, round)?;
        cut |= through_library(c, cat, reached, from, round)?;
    }
    Ok(cut)
}

/// Where a round of steps past the walks' edges starts (`past_edges`).
#[derive(Clone, Copy)]
struct From<'f> {
    /// The change itself: never reached.
    skip: &'f HashSet<String>,
    /// The changed symbols, in the first round (later ones step from what
    /// was reached only).
    changed: &'f [usize],
    /// What the walks reached that is new to this round.
    fresh: &'f HashSet<String>,
}

impl From<'_> {
    /// The symbols (catalog entries) new to this round short of `depth`,
    /// each with its distance.
    fn symbols(
        &self,
        cat: &Catalog,
        reached: &HashMap<String, Reach>,
        depth: usize,
    ) -> Vec<(usize, usize)> {
        reached
            .iter()
            .filter(|(id, r)| !r.is_file && r.distance < depth && self.fresh.contains(*id))
            .filter_map(|(id, r)| Some((cat.by_id(id)?, r.distance)))
            .collect()
    }

    /// `symbols`, and the changed symbols at distance 0.
    fn symbols_and_changed(
        &self,
        cat: &Catalog,
        reached: &HashMap<String, Reach>,
        depth: usize,
    ) -> Vec<(usize, usize)> {
        let mut out = self.symbols(cat, reached, depth);
        out.extend(self.changed.iter().map(|&i| (i, 0)));
        out
    }
}

/// Walks on from `starts` (each with its distance), adding what they reach
/// within the depth to `reached`. Whether a walk was cut.
fn walk_further(
    c: &View,
    reached: &mut HashMap<String, Reach>,
    skip: &HashSet<String>,
    starts: &[(String, usize)],
    round: Round<'_>,
) -> Result<bool, ToolError> {
    if starts.is_empty() {
        return Ok(false);
    }
    let ids: Vec<String> = starts.iter().map(|(id, _)| id.clone()).collect();
    let walks = c
        .graph
        .impact_walks(ids, (round.depth, round.all_tiers, WALK_CAP), round.work)
        .map_err(ToolError::internal)?;
    let mut cut = false;
    for ((start, base), (walk, walk_cut)) in starts.iter().zip(walks) {
        cut |= walk.len() >= WALK_CAP || walk_cut;
        let distances = within(start, &walk, round.allowed, round.depth - base);
        for (id, is_file, _, edges) in walk {
            let Some(&d) = distances.get(&id) else {
                continue;
            };
            if skip.contains(&id) {
                continue;
            }
            let distance = base + d;
            match reached.get_mut(&id) {
                Some(r) => r.distance = r.distance.min(distance),
                None => {
                    reached.insert(id, Reach::new(is_file, distance, edges, round.allowed));
                }
            }
        }
    }
    Ok(cut)
}

/// A file's top-level code that calls or references what the walk reached
/// runs where it stands: in a module-level value's initializer (`stdout =
/// cached(get_stdout)`, `engine = once(build)`), that value depends on it, and so does whatever uses the value. Such values are
/// reached one step past their file, and walked on from. Whether a walk was
/// cut.
fn through_module_values(
    c: &View,
    cat: &Catalog,
    reached: &mut HashMap<String, Reach>,
    from: From<'_>,
    round: Round<'_>,
) -> Result<bool, ToolError> {
    // Every reached file, each round: what its lines touch may be new (the
    // lines are read once an answer, `each_cached`).
    let From { skip, changed, .. } = from;
    let files: Vec<(String, usize)> = reached
        .iter()
        .filter(|(_, r)| r.is_file && r.distance < round.depth)
        .map(|(id, r)| (id.clone(), r.distance))
        .collect();
    if files.is_empty() {
        return Ok(false);
    }
    let ids: Vec<String> = files.iter().map(|(id, _)| id.clone()).collect();
    let lines = c.graph.files_lines_into(ids).map_err(ToolError::internal)?;
    let mut starts: Vec<(String, usize)> = Vec::new();
    for ((file, _), into) in files.iter().zip(lines) {
        // What the file's lines touch of the walk, and how far that is.
        let hit: Vec<(String, i64, &'static str, usize)> = into
            .into_iter()
            .filter_map(|(to, line, rel)| {
                let d = match reached.get(&to) {
                    Some(r) => r.distance,
                    None if skip.contains(&to) => 0,
                    None => return None,
                };
                Some((to, line, rel, d))
            })
            .collect();
        if hit.is_empty() {
            continue;
        }
        for v in cat.in_file(file_path_of(c, file)) {
            let e = cat.entry(v);
            if cat.parent(v).is_some() || !is_module_value(e.kind()) {
                continue;
            }
            let Some((to, _, rel, d)) = hit
                .iter()
                .filter(|(_, l, _, _)| e.line_start() <= *l && *l <= e.line_end())
                .min_by_key(|(_, _, _, d)| *d)
            else {
                continue;
            };
            let id = e.id();
            if skip.contains(&id) || reached.contains_key(&id) || changed.contains(&v) {
                continue;
            }
            let distance = d + 1;
            reached.insert(id.clone(), Reach::step(distance, to.clone(), rel));
            if distance < round.depth {
                starts.push((id, distance));
            }
        }
    }
    walk_further(c, reached, skip, &starts, round)
}

/// A function defined inside another (a Python inner `def`, a decorator's
/// wrapper, a method of a class declared in a function) exists only once the
/// function around it runs, and runs where that function's result or its
/// effects go: `@group.command()` calls `Group.command`, which returns its
/// inner `decorator`, which the decorated definition then runs. So the
/// nearest function around a reached one is reached one step further
/// (`encloses`), and walked on from. Whether a walk was cut.
fn through_enclosing(
    c: &View,
    cat: &Catalog,
    reached: &mut HashMap<String, Reach>,
    from: From<'_>,
    round: Round<'_>,
) -> Result<bool, ToolError> {
    let From { skip, changed, .. } = from;
    let mut inner = from.symbols_and_changed(cat, reached, round.depth);
    inner.sort_unstable();
    let mut starts: Vec<(String, usize)> = Vec::new();
    for (i, d) in inner {
        let Some(outer) = enclosing_function(cat, i) else {
            continue;
        };
        let id = cat.entry(outer).id();
        if skip.contains(&id) || reached.contains_key(&id) || changed.contains(&outer) {
            continue;
        }
        let distance = d + 1;
        reached.insert(
            id.clone(),
            Reach::step(distance, cat.entry(i).id(), "ENCLOSES"),
        );
        if distance < round.depth {
            starts.push((id, distance));
        }
    }
    walk_further(c, reached, skip, &starts, round)
}

/// Library code calls the repo back through the objects the repo hands it. A
/// method of a class whose base is a library's may run inside any call that
/// base answers on an instance of the class, when the library may call it:
/// it overrides the base's method of its name (it calls `super().open(…)`),
/// the runtime calls it by name (`__iter__`), or nothing in the repo calls
/// it (a hook: `Handler.handle`; not a getter, which reads run). A method the
/// runtime calls on an object (`__call__`) may also run inside any call a
/// library base answers on a class that holds such an object (`application:
/// App`, which werkzeug's `Client` calls). Those calls (`UNRESOLVED` of kind `library`, kept per
/// receiver class) are reached one step further (`library`), and walked on
/// from. They stay unproven: such methods are `outside_override`, so the
/// answer is a lower bound. Whether a walk was cut.
fn through_library(
    c: &View,
    cat: &Catalog,
    reached: &mut HashMap<String, Reach>,
    from: From<'_>,
    round: Round<'_>,
) -> Result<bool, ToolError> {
    let skip = from.skip;
    let methods = from.symbols_and_changed(cat, reached, round.depth);
    // Class → the methods reached in it (distance, entry), and whether the
    // library surely may call them (held objects' runtime-called methods).
    let mut classes: BTreeMap<usize, Vec<(usize, usize, bool)>> = BTreeMap::new();
    let mut called_by_name: Vec<(usize, usize, usize)> = Vec::new();
    for (m, d) in methods {
        let Some(class) = cat.parent(m).filter(|&p| cat.entry(p).kind() == "class") else {
            continue;
        };
        if cat.entry(m).kind() != "method" {
            continue;
        }
        let runtime = completeness::runtime_calls(cat, m);
        classes.entry(class).or_default().push((d, m, runtime));
        if runtime {
            called_by_name.push((class, d, m));
        }
    }
    if !called_by_name.is_empty() {
        let ids = called_by_name
            .iter()
            .map(|&(k, _, _)| cat.entry(k).id())
            .collect();
        let holders = c.graph.holders(ids).map_err(ToolError::internal)?;
        for (&(_, d, m), found) in called_by_name.iter().zip(holders) {
            for (id, kind) in found {
                let Some(h) = cat.by_id(&id) else { continue };
                // A field's class holds what the field does.
                let h = if kind == "field" {
                    cat.parent(h)
                } else {
                    Some(h)
                };
                if let Some(h) = h.filter(|&h| cat.entry(h).kind() == "class") {
                    classes.entry(h).or_default().push((d, m, true));
                }
            }
        }
    }
    if classes.is_empty() {
        return Ok(false);
    }
    let names: Vec<String> = classes
        .keys()
        .map(|&k| cat.entry(k).qualified_name().to_string())
        .collect();
    let calls = c
        .graph
        .library_calls(&c.repo, &c.ref_name, &names)
        .map_err(ToolError::internal)?;
    let mut starts: Vec<(String, usize)> = Vec::new();
    for (found, callers) in classes.into_values().zip(calls) {
        if callers.is_empty() {
            continue;
        }
        let (handed, based): (Vec<LibraryCall>, Vec<LibraryCall>) =
            callers.into_iter().partition(|l| l.handed);
        let based_best = match based.is_empty() {
            true => None,
            false => library_may_call(c, cat, &found, &based)?,
        };
        let handed_best = handed_may_call(cat, &found);
        for (best, call) in based
            .into_iter()
            .map(|l| (based_best, l))
            .chain(handed.into_iter().map(|l| (handed_best, l)))
        {
            let Some((d, m)) = best else { continue };
            // A library's constructor keeps what it is given
            // (`super().__init__(app)`): the calls back come from its other
            // methods. An object handed to one is the library's to call back
            // for as long as it lives (`Base.__init__(self, loader=l)`), as
            // one handed to `Signer(…)` is.
            let constructs = !call.handed
                && (call.callee.ends_with(".__init__") || call.callee.ends_with(".constructor"));
            if constructs || skip.contains(&call.from) || reached.contains_key(&call.from) {
                continue;
            }
            let distance = d + 1;
            let mut r = Reach::step(distance, cat.entry(m).id(), "LIBRARY");
            r.is_file = call.is_file;
            reached.insert(call.from.clone(), r);
            if distance < round.depth && !call.is_file {
                starts.push((call.from, distance));
            }
        }
    }
    walk_further(c, reached, skip, &starts, round)
}

/// The nearest of a class's reached methods (distance, entry) that a library
/// handed an instance may call (`through_library`): its public methods and the
/// runtime's (`sure`), not accessors.
fn handed_may_call(cat: &Catalog, found: &[(usize, usize, bool)]) -> Option<(usize, usize)> {
    found
        .iter()
        .filter(|&&(_, m, sure)| {
            sure || (!cat.entry(m).name().starts_with('_') && !completeness::is_accessor(cat, m))
        })
        .map(|&(d, m, _)| (d, m))
        .min()
}

/// The nearest of a class's reached methods (distance, entry) that its
/// library base may call (`through_library`), given the calls that base
/// answers on the class's instances.
fn library_may_call(
    c: &View,
    cat: &Catalog,
    found: &[(usize, usize, bool)],
    callers: &[LibraryCall],
) -> Result<Option<(usize, usize)>, ToolError> {
    let overrides = |m: usize| {
        let (id, name) = (cat.entry(m).id(), cat.entry(m).name());
        callers.iter().any(|LibraryCall { from, callee, .. }| {
            *from == id
                && (callee.strip_prefix("super().") == Some(name)
                    || callee.strip_prefix("super.") == Some(name))
        })
    };
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    for &(d, m, sure) in found {
        if sure || overrides(m) {
            best = Some(best.map_or((d, m), |b| b.min((d, m))));
        } else if !completeness::is_accessor(cat, m) {
            open.push((d, m));
        }
    }
    // A method nothing in the repo points at is there for the library.
    let ids = open.iter().map(|&(_, m)| cat.entry(m).id()).collect();
    let counts = c.graph.dependents_count(ids).map_err(ToolError::internal)?;
    for (&(d, m), n) in open.iter().zip(counts) {
        if n == 0 {
            best = Some(best.map_or((d, m), |b| b.min((d, m))));
        }
    }
    Ok(best)
}

/// The nearest function or method around entry `i`, past classes (a method of
/// a class declared in a function is made by that function).
fn enclosing_function(cat: &Catalog, i: usize) -> Option<usize> {
    if !matches!(cat.entry(i).kind(), "fn" | "method" | "class") {
        return None;
    }
    let mut up = cat.parent(i)?;
    loop {
        match cat.entry(up).kind() {
            "fn" | "method" => return Some(up),
            "class" => up = cat.parent(up)?,
            _ => return None,
        }
    }
}

/// Kinds of a module-level definition that holds a value computed where it
/// stands.
fn is_module_value(kind: &str) -> bool {
    matches!(kind, "var" | "variable" | "const" | "static" | "let")
}

/// The other definitions of the function or method at `m` under its qualified
/// name in its file: Python `@overload` stubs and TS overload signatures, where
/// a call may have been tied to a stub rather than to the body that runs.
fn overloads(cat: &Catalog, m: usize) -> Vec<usize> {
    let e = cat.entry(m);
    if !matches!(e.kind(), "fn" | "method")
        || !matches!(e.language(), "python" | "typescript" | "tsx" | "javascript")
    {
        return Vec::new();
    }
    let mut same = cat.named(e.name());
    same.retain(|&j| {
        let o = cat.entry(j);
        j != m
            && o.kind() == e.kind()
            && o.path() == e.path()
            && o.qualified_name() == e.qualified_name()
    });
    same
}

/// How many of the symbols reached at `depth` (the walk's last step) are
/// pointed at themselves, by anything: the walk went no further. Past
/// `FRONTIER_ASKED` of them, all count (asking costs a hop each).
fn beyond_depth(
    c: &View,
    reached: &HashMap<String, Reach>,
    depth: usize,
) -> Result<usize, ToolError> {
    let mut last: Vec<String> = reached
        .iter()
        .filter(|(_, r)| !r.is_file && r.distance == depth)
        .map(|(id, _)| id.clone())
        .collect();
    if last.len() > FRONTIER_ASKED {
        return Ok(last.len());
    }
    last.sort_unstable();
    let counts = c
        .graph
        .dependents_count(last)
        .map_err(ToolError::internal)?;
    Ok(counts.into_iter().filter(|&n| n > 0).count())
}

/// The most symbols at the walk's last step whose own dependents are asked.
const FRONTIER_ASKED: usize = 2000;

/// Changed symbols of one file above which their dependents are found with
/// one statement for the file rather than a hop each.
const SYMBOLS_PER_HOP: usize = 8;

/// The coverage report `coverage` names, if any.
fn read_report(c: &View, path: Option<&str>) -> Result<Option<coverage::Report>, ToolError> {
    path.map(|p| coverage::Report::read(&c.root(), non_empty("coverage", p)?))
        .transpose()
}

/// Why an answer leaves out what only `name`-tier edges reach.
fn name_only_note(count: usize, depth: usize) -> Option<String> {
    (count > 0).then(|| format!(
        "edges resolved only by a unique name (tier `name`) reach {count} more symbol(s) within depth {depth}; pass min_confidence: name to follow them"
    ))
}

/// Why an answer stopped at `depth` with callers beyond it.
fn beyond_note(beyond: usize, depth: usize) -> Option<String> {
    (beyond > 0).then(|| format!(
        "{beyond} symbol(s) at depth {depth} are reached from further away: their callers and tests are not listed; ask for a greater depth (at most {})",
        GraphStore::MAX_IMPACT_DEPTH
    ))
}

/// The changed symbols the input names, in position order, into `change`
/// with what the diff says of them.
fn changed_symbols(
    c: &View,
    cat: &Catalog,
    input: &ImpactInput,
    notes: &mut Vec<String>,
    change: &mut Change,
) -> Result<(), ToolError> {
    let given = [
        input.symbol_name.is_some(),
        input.paths.is_some(),
        input.diff_base.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(ToolError::invalid_input(
            "pass exactly one of `symbol_name`, `paths` and `diff_base`",
        ));
    }
    if input.path.is_some() && input.symbol_name.is_none() {
        return Err(ToolError::invalid_input(
            "`path` goes with `symbol_name`; changed files go in `paths`",
        ));
    }
    let mut out = Vec::new();
    if let Some(name) = &input.symbol_name {
        let name = non_empty("symbol_name", name)?;
        let path = super::super::args::clean_opt_path(input.path.as_deref())?;
        out.push(resolve_one(c, cat, name, path.as_deref())?);
    } else if let Some(paths) = &input.paths {
        if paths.is_empty() {
            return Err(ToolError::invalid_input("`paths` is empty"));
        }
        let mut indexed = 0;
        let mut unindexed: Vec<String> = Vec::new();
        for p in paths {
            let p = clean_path(p)?;
            if c.file(&p)?.is_none() {
                unindexed.push(p);
                continue;
            }
            indexed += 1;
            out.extend(
                cat.in_file(&p)
                    .into_iter()
                    .filter(|&i| cat.entry(i).kind() != "impl"),
            );
        }
        if indexed == 0 {
            let first = clean_path(&paths[0])?;
            return Err(ToolError::file_not_found(&first, &c.repo, &c.ref_name));
        }
        if !unindexed.is_empty() {
            let shown: Vec<&str> = unindexed.iter().take(5).map(String::as_str).collect();
            let more = unindexed.len() - shown.len();
            notes.push(format!(
                "{} of the paths are not indexed files: {}{}",
                unindexed.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    } else if let Some(base) = &input.diff_base {
        let base = non_empty("diff_base", base)?;
        for file in diff::changes(&c.root(), base)? {
            out.extend(diffed(c, cat, (&file, base), notes, change)?);
            change.files.push(file);
        }
    }
    cat.sort_by_position(&mut out);
    out.dedup();
    change.symbols = out;
    Ok(())
}

/// The symbols one file's change touches: every symbol of an added file, else
/// the innermost symbol around each changed line (lines only deleted: the
/// innermost symbol holding both lines either side).
fn diffed(
    c: &View,
    cat: &Catalog,
    (change, base): (&FileChange, &str),
    notes: &mut Vec<String>,
    found: &mut Change,
) -> Result<Vec<usize>, ToolError> {
    if change.deleted {
        notes.push(format!(
            "{} was deleted: what called into it is not in the index any more",
            change.path
        ));
        return Ok(Vec::new());
    }
    let Some(file) = c.file(&change.path)? else {
        return Ok(Vec::new());
    };
    if let Ok((_, stale)) = super::super::args::read_source(&c.root(), &file)
        && stale
    {
        notes.push(format!(
            "{} changed since it was indexed: its lines may not match its symbols",
            change.path
        ));
        let base_hash =
            diff::base_bytes(&c.root(), base, &change.path).map(|b| crate::model::content_hash(&b));
        if base_hash.as_deref() == Some(file.content_hash.as_str()) {
            found.indexed_base.insert(change.path.clone());
        } else {
            found.indexed_neither.push(change.path.clone());
        }
    }
    let symbols: Vec<usize> = cat
        .in_file(&change.path)
        .into_iter()
        .filter(|&i| cat.entry(i).kind() != "impl")
        .collect();
    if change.added {
        return Ok(symbols);
    }
    let innermost = |lines: &[i64]| -> Option<usize> {
        symbols
            .iter()
            .copied()
            .filter(|&i| {
                let e = cat.entry(i);
                lines
                    .iter()
                    .all(|&l| e.line_start() <= l && l <= e.line_end())
            })
            .min_by_key(|&i| {
                let e = cat.entry(i);
                (
                    e.line_end() - e.line_start(),
                    std::cmp::Reverse(e.line_start()),
                )
            })
    };
    let mut out = Vec::new();
    let mut held = |lines: &[i64]| match innermost(lines) {
        Some(i) => out.push(i),
        None => found.outside.push((change.path.clone(), lines[0])),
    };
    for h in &change.hunks {
        if h.deletion {
            held(&[h.start, h.end]);
        } else {
            for line in h.start..=h.end {
                held(&[line]);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A relationship's name as `via` says it.
/// The changed symbols, the declarations they implement and every symbol
/// reached short of `depth`: what an unproven site must not reach for the
/// answer to be exact.
fn short_of_depth(
    cat: &Catalog,
    changed: &[usize],
    declared: &HashSet<String>,
    reached: &HashMap<String, Reach>,
    depth: usize,
) -> Vec<usize> {
    let mut nodes: Vec<usize> = changed.to_vec();
    nodes.extend(declared.iter().filter_map(|id| cat.by_id(id)));
    nodes.extend(
        reached
            .iter()
            .filter(|(_, r)| !r.is_file && r.distance < depth)
            .filter_map(|(id, _)| cat.by_id(id)),
    );
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// How many affected symbols at each distance.
fn by_distance(affected: &[AffectedSymbol]) -> Vec<DistanceCount> {
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    for a in affected {
        *counts.entry(a.distance).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(distance, count)| DistanceCount { distance, count })
        .collect()
}

/// Fits every list to the budget: the notes first (at most an eighth), the
/// unproven sites (an eighth), the tests to run (at most half of what is
/// left), the changed symbols (a third of the rest), the affected symbols,
/// and their files.
fn fit(
    c: &View,
    budget: usize,
    (notes, sites, tests): (&mut Vec<String>, &mut Vec<UnprovenSite>, &mut Vec<TestHit>),
    (changed, affected, files): (
        &mut Vec<ChangedSymbol>,
        &mut Vec<AffectedSymbol>,
        &mut Vec<ImpactFile>,
    ),
) {
    let mut used = keep_within(&c.tokens, notes, budget / 8);
    used += keep_within(&c.tokens, sites, budget / 8);
    used += keep_within(&c.tokens, tests, budget.saturating_sub(used) / 2);
    used += keep_within(&c.tokens, changed, budget.saturating_sub(used) / 3);
    used += keep_within(&c.tokens, affected, budget.saturating_sub(used));
    keep_within(&c.tokens, files, budget.saturating_sub(used));
}

/// Why walks that were cut make the answer a lower bound.
fn cut_note(work: &WalkBudget, cut: bool, unwalked: usize, walks: usize) -> Option<String> {
    if work.ran_out() {
        Some(format!(
            "the walks reached this answer's work budget ({WORK} nodes and edges): {unwalked} of {walks} walks were cut or not run; ask for fewer paths or a smaller depth"
        ))
    } else if cut {
        Some(format!(
            "a walk reached more than {WALK_CAP} nodes and was cut"
        ))
    } else {
        None
    }
}

/// A changed symbol's row.
fn changed_row(cat: &Catalog, i: usize) -> ChangedSymbol {
    let e = cat.entry(i);
    ChangedSymbol {
        symbol_id: e.id(),
        name: e.name().to_string(),
        qualified_name: e.qualified_name().to_string(),
        kind: e.kind().to_string(),
        path: e.path().to_string(),
        line_start: e.line_start(),
        line_end: e.line_end(),
    }
}

fn rel_name(rel: &str) -> String {
    match rel {
        "CALLS" => "calls",
        "REFERENCES" => "references",
        "IMPLEMENTS" => "implements",
        "EXTENDS" => "extends",
        "DISPATCH" => "dispatch",
        "OVERLOAD" => "overload",
        "CONSTRUCTS" => "constructs",
        "ENCLOSES" => "encloses",
        "LIBRARY" => "library",
        other => other,
    }
    .to_string()
}

fn affected_row(c: &View, cat: &Catalog, id: &str, r: &Reach, via: Via) -> Option<AffectedSymbol> {
    if r.is_file {
        let path = file_path_of(c, id);
        return Some(AffectedSymbol {
            id: id.to_string(),
            name: path.rsplit('/').next().unwrap_or(path).to_string(),
            qualified_name: path.to_string(),
            kind: "file".into(),
            path: path.to_string(),
            line_start: 1,
            distance: r.distance,
            via,
            is_test: is_test_file(path),
        });
    }
    let e = cat.entry(cat.by_id(id)?);
    Some(AffectedSymbol {
        id: id.to_string(),
        name: e.name().to_string(),
        qualified_name: e.qualified_name().to_string(),
        kind: e.kind().to_string(),
        path: e.path().to_string(),
        line_start: e.line_start(),
        distance: r.distance,
        is_test: is_test_symbol(e.kind(), e.name(), e.qualified_name(), e.path())
            || is_test_file(e.path()),
        via,
    })
}

/// The files of the changed and affected symbols, nearest first.
fn files_of(changed: &[ChangedSymbol], affected: &[AffectedSymbol]) -> Vec<ImpactFile> {
    let mut files: BTreeMap<&str, ImpactFile> = BTreeMap::new();
    let file = |path: &str| ImpactFile {
        path: path.to_string(),
        changed: 0,
        affected: 0,
        distance: usize::MAX,
        is_test: is_test_file(path),
    };
    for s in changed {
        let f = files.entry(&s.path).or_insert_with(|| file(&s.path));
        f.changed += 1;
        f.distance = 0;
    }
    for a in affected {
        let f = files.entry(&a.path).or_insert_with(|| file(&a.path));
        f.affected += 1;
        f.distance = f.distance.min(a.distance);
    }
    let mut out: Vec<ImpactFile> = files.into_values().collect();
    out.sort_by(|a, b| (a.distance, &a.path).cmp(&(b.distance, &b.path)));
    out
}

/// The tests among the changed and affected symbols, and the test files with
/// none of their functions listed, nearest first. A function nested in a
/// test (a helper, a closure) stands for the test around it: that is what a
/// runner can run.
fn tests_of(
    c: &View,
    cat: &Catalog,
    changed: &[ChangedSymbol],
    affected: &[AffectedSymbol],
    files: &[ImpactFile],
) -> Vec<TestHit> {
    let mut out: Vec<TestHit> = Vec::new();
    let mut listed: HashSet<(String, Option<String>)> = HashSet::new();
    let mut add = |out: &mut Vec<TestHit>, id: &str, distance: usize| {
        let Some(i) = cat.by_id(id).map(|i| outermost_test(cat, i)) else {
            return;
        };
        let e = cat.entry(i);
        if is_test_maker(e.kind(), e.qualified_name(), e.path()) {
            // Tests a macro writes have no symbol: the module it is written
            // in stands for them (`cargo test -- tests::`).
            if listed.insert((e.path().to_string(), Some(e.qualified_name().to_string()))) {
                out.push(TestHit {
                    path: e.path().to_string(),
                    name: None,
                    qualified_name: Some(e.qualified_name().to_string()),
                    line_start: Some(e.line_start()),
                    distance,
                    run: run_id(c, cat, e.path(), Some(i)),
                });
            }
            return;
        }
        if !is_test_symbol(e.kind(), e.name(), e.qualified_name(), e.path()) {
            return;
        }
        if !listed.insert((e.path().to_string(), Some(e.qualified_name().to_string()))) {
            return;
        }
        out.push(TestHit {
            path: e.path().to_string(),
            name: Some(e.name().to_string()),
            qualified_name: Some(e.qualified_name().to_string()),
            line_start: Some(e.line_start()),
            distance,
            run: run_id(c, cat, e.path(), Some(i)),
        });
    };
    for s in changed {
        add(&mut out, &s.symbol_id, 0);
    }
    for a in affected {
        if a.kind != "file" {
            add(&mut out, &a.id, a.distance);
        }
    }
    let paths: HashSet<String> = out.iter().map(|t| t.path.clone()).collect();
    for f in files {
        if f.is_test && !paths.contains(&f.path) {
            out.push(TestHit {
                path: f.path.clone(),
                name: None,
                qualified_name: None,
                line_start: None,
                distance: f.distance,
                run: run_id(c, cat, &f.path, None),
            });
        }
    }
    out.sort_by(|a, b| {
        (a.distance, &a.path, a.line_start).cmp(&(b.distance, &b.path, b.line_start))
    });
    out
}

/// The outermost function or method around entry `i` in its file (itself
/// when none encloses it): a test's nested helper is run by running the test.
fn outermost_test(cat: &Catalog, i: usize) -> usize {
    let mut at = i;
    let mut up = i;
    // Past classes too: a method of a class declared in a test is the test's.
    while let Some(p) = cat.parent(up) {
        if matches!(cat.entry(p).kind(), "fn" | "method") {
            at = p;
        }
        up = p;
    }
    at
}
