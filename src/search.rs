//! Ranked symbol search: the only module that speaks to Tantivy.
//!
//! A ref's search index is built from its symbol catalog (so it always matches the
//! graph state the catalog was loaded from) in RAM, on first use after an index
//! run. Identifiers are split before Tantivy sees them (`parseHTTPRequest_v2` →
//! `parse http request v2` plus the whole identifier), so a query for "http
//! request" finds `parseHTTPRequest`. Fields are boosted name ≫ qualified name >
//! signature > doc > path; the score is then adjusted with what only the graph
//! knows: exact name matches first, definitions over tests and vendored code, and
//! symbols many files import above leaf helpers of the same name.

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, TantivyDocument, Term};

use crate::catalog::Catalog;

#[derive(Debug, thiserror::Error)]
#[error("search index error: {0}")]
pub struct SearchError(String);

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError(e.to_string())
    }
}

/// Field boosts: name ≫ qualified name > signature > doc > path.
const BOOSTS: [(&str, f32); 5] = [
    ("name", 8.0),
    ("qualified_name", 3.0),
    ("signature", 2.0),
    ("doc", 1.0),
    ("path", 0.5),
];

pub struct SearchIndex {
    reader: IndexReader,
    text: Vec<(Field, f32)>,
    language: Field,
    kind: Field,
}

/// Filters of a search.
#[derive(Debug, Clone, Default)]
pub struct Filters<'a> {
    pub language: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub path_prefix: Option<&'a str>,
}

/// One hit: the catalog index of the symbol and its final score.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub entry: usize,
    pub score: f32,
}

/// Identifier-aware terms: words split at non-alphanumerics, lower→upper case
/// changes and acronym ends (`HTTPRequest` → `http request`), lower-cased; each identifier longer than one part is kept whole too.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if ident.is_empty() {
            continue;
        }
        let parts = split_identifier(ident);
        if parts.len() > 1 {
            out.push(ident.to_lowercase());
        }
        out.extend(parts);
    }
    out
}

/// Adjacent query words run together (and all of them, for three or more).
fn joined_words(query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut out: Vec<String> = words.windows(2).map(|w| w.concat()).collect();
    if words.len() > 2 {
        out.push(words.concat());
    }
    out
}

fn split_identifier(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some(&prev) = cur.chars().last().as_ref() {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase));
            if boundary {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.into_iter().map(|p| p.to_lowercase()).collect()
}

impl SearchIndex {
    /// Indexes every symbol of `cat`.
    pub fn build(cat: &Catalog) -> Result<SearchIndex, SearchError> {
        let mut sb = Schema::builder();
        // Terms are produced by `terms` and joined by spaces; Tantivy's whitespace
        // tokenizer only has to split them again.
        let text_opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("whitespace")
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let text: Vec<(Field, f32)> = BOOSTS
            .iter()
            .map(|(name, boost)| (sb.add_text_field(name, text_opts.clone()), *boost))
            .collect();
        let language = sb.add_text_field("language", STRING);
        let kind = sb.add_text_field("kind", STRING);
        let entry = sb.add_u64_field("entry", FAST);
        let index = Index::create_in_ram(sb.build());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let mut writer =
            index.writer_with_num_threads::<TantivyDocument>(threads, (32 << 20) * threads)?;
        for i in 0..cat.len() {
            let row = &cat.entry(i).row;
            let mut doc = TantivyDocument::default();
            let values = [
                &row.name,
                &row.qualified_name,
                &row.signature,
                &row.doc,
                &row.path,
            ];
            for ((field, _), value) in text.iter().zip(values) {
                doc.add_text(*field, terms(value).join(" "));
            }
            doc.add_text(language, &row.language);
            doc.add_text(kind, &row.kind);
            doc.add_u64(entry, i as u64);
            writer.add_document(doc)?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(SearchIndex {
            reader,
            text,
            language,
            kind,
        })
    }

    /// The best `limit` symbols for `query`, best first.
    pub fn search(
        &self,
        cat: &Catalog,
        query: &str,
        filters: &Filters<'_>,

        limit: usize,
    ) -> Result<Vec<Hit>, SearchError> {
        let words = terms(query);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for w in &words {
            for (field, boost) in &self.text {
                let tq = TermQuery::new(
                    Term::from_field_text(*field, w),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), *boost)),
                ));
            }
        }
        // Words typed apart often name one lower-case identifier: "url parse" →
        // `urlparse`, "context manager" → `contextmanager`.
        for joined in joined_words(query) {
            for (field, boost) in self.text.iter().take(2) {
                let tq = TermQuery::new(
                    Term::from_field_text(*field, &joined),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), *boost)),
                ));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        for (field, value) in [(self.language, filters.language), (self.kind, filters.kind)] {
            if let Some(v) = value {
                let tq = TermQuery::new(Term::from_field_text(field, v), IndexRecordOption::Basic);
                clauses.push((Occur::Must, Box::new(tq)));
            }
        }
        let searcher = self.reader.searcher();
        // Rank more than asked for: the graph adjustments below reorder the head.
        let fetch = (limit * 4).max(50);
        let top = searcher.search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(fetch).order_by_score(),
        )?;
        let query_lower = query.trim().to_lowercase();
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let column = searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("entry")?;
            let Some(entry) = column.first(addr.doc_id) else {
                continue;
            };
            let entry = entry as usize;
            let row = &cat.entry(entry).row;
            if let Some(prefix) = filters.path_prefix
                && !(row.path == prefix || row.path.starts_with(&format!("{prefix}/")))
            {
                continue;
            }
            let mut s = score;
            if row.name.to_lowercase() == query_lower
                || row.qualified_name.to_lowercase() == query_lower
            {
                s *= 3.0;
            }
            if crate::tools::is_secondary_path(&row.path) {
                s *= 0.5;
            }
            if row.kind == "impl" {
                s *= 0.9;
            }
            let n = cat.imported_by(entry);
            if n > 0 {
                s *= 1.0 + 0.15 * (1.0 + n as f32).ln();
            }
            hits.push(Hit { entry, score: s });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry.cmp(&b.entry)));
        hits.truncate(limit);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn identifiers_split_into_words_and_keep_the_whole() {
        assert_eq!(
            terms("parseHTTPRequest_v2"),
            ["parsehttprequest_v2", "parse", "http", "request", "v2"]
        );
        assert_eq!(
            terms("snake_case path/to/file.rs"),
            ["snake_case", "snake", "case", "path", "to", "file", "rs"]
        );
        assert_eq!(terms("Router"), ["router"]);
    }
}
