//! `find_implementations`: the types that implement or extend a trait,
//! interface or class (transitively, through `IMPLEMENTS` and `EXTENDS`), or
//! the reverse, each with its methods that match the other side's by name.
//! Asked of a method, it answers the same-named methods of those types.

use std::collections::HashSet;

use super::super::answers::*;
use super::super::args::{
    LIST_TOKENS, clean_opt_path, dir_of, limit, max_tokens, non_empty, resolve_one,
};
use super::super::budget::{fitting, keep_within};
use super::super::error::ToolError;
use super::super::inputs::{ImplDirection, ImplementationsInput};
use super::super::view::View;
use super::{TYPE_KINDS, completeness, member_sep, members_named, owners};
use crate::store::catalog::Catalog;

pub fn find_implementations(
    c: &View,
    input: ImplementationsInput,
) -> Result<(ImplementationsAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let limit = limit(input.limit, 100, 1000)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let cat = c.catalog()?;
    let asked = resolve_one(c, &cat, name, path.as_deref())?;
    let a = cat.entry(asked);
    // A method is asked through its type, for its name alone.
    let (types, method): (Vec<usize>, Option<&str>) = if TYPE_KINDS.contains(&a.kind()) {
        (vec![asked], None)
    } else if matches!(a.kind(), "method" | "fn") {
        (owners(&cat, asked), Some(a.name()))
    } else {
        return Err(ToolError::invalid_input(format!(
            "`{}` is a {}; find_implementations takes a trait, interface, class, struct or one of their methods",
            a.qualified_name(),
            a.kind()
        )));
    };
    let ids: Vec<String> = types.iter().map(|&t| cat.entry(t).id()).collect();
    let walks = match input.direction {
        ImplDirection::Implementations => c.graph.subtypes(ids),
        ImplDirection::Supertypes => c.graph.supertypes(ids),
    }
    .map_err(ToolError::internal)?;

    // The names a related type's methods must have to match.
    let wanted: Vec<String> = match method {
        Some(m) => vec![m.to_string()],
        None => method_names(c, &cat, asked)?,
    };
    let mut found: Vec<(usize, i64, String)> = Vec::new();
    let mut listed = HashSet::new();
    for (id, depth, rels) in walks.into_iter().flatten() {
        let Some(t) = cat.by_id(&id) else { continue };
        if !listed.insert(t) {
            continue;
        }
        let relation = if rels.iter().any(|r| r == "IMPLEMENTS") {
            "implements"
        } else {
            "extends"
        };
        found.push((t, depth, relation.to_string()));
    }
    found.sort_by(|a, b| {
        let (x, y) = (cat.entry(a.0), cat.entry(b.0));
        (a.1, x.path(), x.line_start()).cmp(&(b.1, y.path(), y.line_start()))
    });
    let mut out: Vec<ImplementingType> = Vec::new();
    for (t, depth, relation) in found {
        let methods = matching(c, &cat, t, &wanted, &types)?;
        // Asked of a method: only the types that have it.
        if method.is_some() && methods.is_empty() {
            continue;
        }
        let e = cat.entry(t);
        out.push(ImplementingType {
            symbol_id: e.id(),
            name: e.name().to_string(),
            qualified_name: e.qualified_name().to_string(),
            kind: e.kind().to_string(),
            path: e.path().to_string(),
            line_start: e.line_start(),
            relation,
            depth,
            methods,
        });
    }
    // A clause naming one of these types that no tier proved could be a
    // subtype's (implementations); a supertype outside the repository is not
    // listed (supertypes).
    let mut unproven = match input.direction {
        ImplDirection::Implementations => {
            let mut nodes = types.clone();
            nodes.extend(out.iter().filter_map(|t| cat.by_id(&t.symbol_id)));
            completeness::into(
                c,
                &cat,
                &nodes,
                completeness::Into {
                    kinds: &["extends", "implements"],
                    name_tier_left_out: false,
                    values_hide_calls: false,
                },
            )?
        }
        ImplDirection::Supertypes => {
            let mut nodes = types.clone();
            nodes.extend(out.iter().filter_map(|t| cat.by_id(&t.symbol_id)));
            completeness::outside_supertypes(c, &cat, &nodes)
        }
    };
    let total = out.len();
    out.truncate(limit);
    let listed = keep_within(&c.tokens, &mut unproven.sites, budget / 8);
    out.truncate(fitting(&c.tokens, &out, budget - listed));
    let truncated = out.len() < total;
    let body = ImplementationsAnswer {
        symbol: SymbolRef::from(a),
        direction: match input.direction {
            ImplDirection::Implementations => "implementations",
            ImplDirection::Supertypes => "supertypes",
        }
        .into(),
        types: out,
        total,
        completeness: unproven.completeness().into(),
        unproven: unproven.count,
        unproven_sites: unproven.sites,
        truncated,
        metadata: Metadata::default(),
    };
    Ok((body, if truncated { "truncated" } else { "complete" }))
}

/// The names of the methods of the type at entry `t`: its children, its Rust
/// impl blocks' children, and (Go) the methods with its receiver declared in
/// other files of its package.
fn method_names(c: &View, cat: &Catalog, t: usize) -> Result<Vec<String>, ToolError> {
    let e = cat.entry(t);
    let mut starts = vec![e.id()];
    if e.language() == "rust" {
        starts.extend(
            cat.named(e.name())
                .into_iter()
                .filter(|&i| {
                    let x = cat.entry(i);
                    x.kind() == "impl" && x.qualified_name() == e.qualified_name()
                })
                .map(|i| cat.entry(i).id()),
        );
    }
    let mut names: Vec<String> = Vec::new();
    let walks = c.graph.descendants(starts).map_err(ToolError::internal)?;
    for n in walks.iter().flatten().filter(|n| n.depth == 1) {
        if let Some(i) = cat.by_id(&n.id)
            && matches!(cat.entry(i).kind(), "method" | "fn")
        {
            names.push(cat.entry(i).name().to_string());
        }
    }
    if e.language() == "go" {
        let prefix = format!("{}{}", e.qualified_name(), member_sep("go"));
        let dir = dir_of(e.path());
        for f in cat.files().iter().filter(|f| dir_of(&f.path) == dir) {
            for i in cat.in_file(&f.path) {
                let m = cat.entry(i);
                if m.kind() == "method" && m.qualified_name().starts_with(&prefix) {
                    names.push(m.name().to_string());
                }
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// The methods of the type at entry `t` named as in `names`: its own, else
/// those of a type it extends (Go embedding, a base class) other than the
/// `asked` types themselves.
fn matching(
    c: &View,
    cat: &Catalog,
    t: usize,
    names: &[String],
    asked: &[usize],
) -> Result<Vec<Member>, ToolError> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        let own = members_named(cat, t, n);
        if own.is_empty() {
            missing.push(n.as_str());
        }
        out.extend(own.into_iter().map(|m| member(cat, m, None)));
    }
    if !missing.is_empty() {
        let bases = c
            .graph
            .supertypes(vec![cat.entry(t).id()])
            .map_err(ToolError::internal)?;
        for n in missing {
            let inherited = bases
                .iter()
                .flatten()
                .filter(|(_, _, rels)| rels.iter().all(|r| r == "EXTENDS"))
                .filter_map(|(id, _, _)| cat.by_id(id))
                .filter(|b| !asked.contains(b))
                .find_map(|b| members_named(cat, b, n).first().map(|&m| (b, m)));
            if let Some((b, m)) = inherited {
                out.push(member(cat, m, Some(cat.entry(b).qualified_name())));
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.line_start).cmp(&(&b.path, b.line_start)));
    Ok(out)
}

fn member(cat: &Catalog, m: usize, inherited_from: Option<&str>) -> Member {
    let e = cat.entry(m);
    Member {
        symbol_id: e.id(),
        name: e.name().to_string(),
        qualified_name: e.qualified_name().to_string(),
        kind: e.kind().to_string(),
        path: e.path().to_string(),
        line_start: e.line_start(),
        inherited_from: inherited_from.map(str::to_string),
    }
}
