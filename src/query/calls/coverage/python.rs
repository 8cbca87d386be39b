//! coverage.py's JSON report, read as a stream: a report of a large suite is
//! hundreds of megabytes (click's 1,600 tests: 225 MB, each line's contexts
//! written out as strings, three times over), so each context is interned as
//! it is read and only the per-line test indexes are kept.
//!
//! The parts read: `meta.show_contexts`; per file, `contexts` (line → the
//! contexts that ran it) and `functions` (each function's lines, the module's
//! own under the empty name). Everything else is skipped unread.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{Interner, Report, relative};

/// Reads the report from `input`.
pub(super) fn read(input: impl Read, root: &str) -> Result<Report, String> {
    let mut b = Builder {
        report: Report::empty(true),
        ids: Interner::default(),
        root,
        show_contexts: false,
        no_functions: false,
    };
    let mut de = serde_json::Deserializer::from_reader(input);
    Top(&mut b)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| format!("is not a coverage.py JSON report: {e}"))?;
    if !b.show_contexts {
        return Err("has no per-test contexts: record it with `pytest --cov \
             --cov-context=test` and write it with `coverage json --show-contexts`"
            .into());
    }
    if b.no_functions {
        return Err("lists no functions per file: write it with coverage.py 7.5 or later".into());
    }
    b.report.tests = b.ids.names;
    Ok(b.report)
}

struct Builder<'r> {
    report: Report,
    ids: Interner,
    root: &'r str,
    show_contexts: bool,
    /// A file had no `functions` (coverage.py before 7.5).
    no_functions: bool,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    show_contexts: bool,
}

#[derive(Deserialize)]
struct Region {
    #[serde(default)]
    executed_lines: Vec<i64>,
    #[serde(default)]
    missing_lines: Vec<i64>,
}

/// A map visited with the builder at hand: `key` is told each key and reads
/// its value.
fn each_key<'de, A: MapAccess<'de>>(
    mut map: A,
    mut key: impl FnMut(&mut A, String) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    while let Some(k) = map.next_key::<String>()? {
        key(&mut map, k)?;
    }
    Ok(())
}

macro_rules! map_seed {
    ($name:ident, $what:literal, |$self_:ident, $map:ident| $body:block) => {
        impl<'de> DeserializeSeed<'de> for $name<'_, '_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_map(self)
            }
        }
        impl<'de> Visitor<'de> for $name<'_, '_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($what)
            }
            fn visit_map<A: MapAccess<'de>>($self_, $map: A) -> Result<(), A::Error> $body
        }
    };
}

/// The report's top level.
struct Top<'a, 'r>(&'a mut Builder<'r>);
map_seed!(Top, "a coverage.py JSON report", |self, map| {
    each_key(map, |m, k| match k.as_str() {
        "meta" => {
            self.0.show_contexts = m.next_value::<Meta>()?.show_contexts;
            Ok(())
        }
        "files" => m.next_value_seed(Files(&mut *self.0)),
        _ => m.next_value::<IgnoredAny>().map(drop),
    })
});

/// `files`: path → the file's report.
struct Files<'a, 'r>(&'a mut Builder<'r>);
map_seed!(Files, "the report's files", |self, map| {
    each_key(map, |m, path| {
        let path = relative(&path, self.0.root);
        m.next_value_seed(File(&mut *self.0, path))
    })
});

/// One file's report.
struct File<'a, 'r>(&'a mut Builder<'r>, String);
map_seed!(File, "a file's report", |self, map| {
    let mut lines: HashMap<i64, Vec<u32>> = HashMap::new();
    let mut body: Option<HashSet<i64>> = None;
    each_key(map, |m, k| match k.as_str() {
        "contexts" => m.next_value_seed(Lines(&mut self.0.ids, &mut lines)),
        "functions" => {
            let functions = m.next_value::<HashMap<String, Region>>()?;
            body = Some(
                functions
                    .into_iter()
                    .filter(|(name, _)| !name.is_empty())
                    .flat_map(|(_, r)| r.executed_lines.into_iter().chain(r.missing_lines))
                    .collect(),
            );
            Ok(())
        }
        _ => m.next_value::<IgnoredAny>().map(drop),
    })?;
    let Self(b, path) = self;
    match body {
        Some(body) => {
            if let Some(bodies) = b.report.bodies.as_mut() {
                bodies.insert(path.clone(), body);
            }
        }
        None => b.no_functions = true,
    }
    b.report.lines.insert(path, lines);
    Ok(())
});

/// `contexts`: line → the contexts that ran it, interned.
struct Lines<'a, 'b>(&'a mut Interner, &'b mut HashMap<i64, Vec<u32>>);
map_seed!(Lines, "a file's contexts by line", |self, map| {
    each_key(map, |m, line| {
        let tests = m.next_value_seed(Ids(&mut *self.0))?;
        if let Ok(line) = line.parse::<i64>() {
            self.1.insert(line, tests);
        }
        Ok(())
    })
});

/// One line's contexts: pytest node ids with their phase (`|run`).
struct Ids<'a>(&'a mut Interner);
impl<'de> DeserializeSeed<'de> for Ids<'_> {
    type Value = Vec<u32>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u32>, D::Error> {
        d.deserialize_seq(self)
    }
}
impl<'de> Visitor<'de> for Ids<'_> {
    type Value = Vec<u32>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of contexts")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
        let mut out = Vec::new();
        while let Some(context) = seq.next_element::<std::borrow::Cow<'de, str>>()? {
            out.push(self.0.index(node_id(&context)));
        }
        Ok(out)
    }
}

/// A pytest node id from a coverage.py context: the phase
/// (`|run`, `|setup`) and the parameters (`[1-a]`) dropped.
fn node_id(context: &str) -> &str {
    let id = context.split('|').next().unwrap_or(context);
    id.split('[').next().unwrap_or(id)
}
