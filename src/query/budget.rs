//! What an answer costs an agent, in tokens (CONTRACT section 3): an item's
//! estimate is the larger of the spec's `ceil(words × 1.3)` over its compact
//! JSON and the number of tokens the `o200k_base` BPE makes of that same JSON.
//! The word formula alone counts almost nothing in tab-indented code, where
//! `\t` and `\n` are escapes inside JSON strings, not whitespace.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// The BPE, loaded on first use: its ranks ship inside the `tiktoken-rs`
/// crate, and decoding them takes a fraction of a second, which a command that
/// never counts tokens should not pay. A service holds one and lends it to
/// every answer through its `View`.
#[derive(Default)]
pub struct Tokenizer {
    bpe: OnceLock<Option<CoreBPE>>,
}

impl Tokenizer {
    /// Loads the BPE now (a server does this at start, off the request path).
    pub fn warm(&self) {
        self.bpe();
    }

    fn bpe(&self) -> Option<&CoreBPE> {
        self.bpe
            .get_or_init(|| match tiktoken_rs::o200k_base() {
                Ok(bpe) => Some(bpe),
                Err(e) => {
                    tracing::warn!("the o200k_base tokenizer did not load ({e}); token counts fall back to bytes");
                    None
                }
            })
            .as_ref()
    }

    /// The contract's estimate of one item.
    pub fn estimate<T: serde::Serialize + ?Sized>(&self, item: &T) -> usize {
        let json = serde_json::to_string(item).unwrap_or_default();
        self.estimate_json(&json)
    }

    /// The estimate of an item already written as compact JSON.
    pub fn estimate_json(&self, json: &str) -> usize {
        words_estimate(json).max(self.count(json))
    }

    /// The estimate of an item's compact JSON when it may fit `room`; `None`
    /// when it certainly does not: a lower bound, found in one scan, exceeds
    /// `room`, and the BPE is not run. An answer filling its budget tries
    /// many items that do not fit; this keeps them cheap.
    pub fn estimate_within(&self, json: &str, room: usize) -> Option<usize> {
        if words_estimate(json).max(pieces_at_least(json)) > room {
            return None;
        }
        Some(self.estimate_json(json))
    }

    /// How many tokens `o200k_base` makes of `text`. Never fewer than it makes:
    /// if the tokenizer is missing or fails on the text (its regex has a
    /// backtracking limit), the byte count, which no BPE exceeds.
    pub fn count(&self, text: &str) -> usize {
        let Some(bpe) = self.bpe() else {
            return text.len();
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            bpe.encode_ordinary(text).len()
        }))
        .unwrap_or(text.len())
    }
}

/// A lower bound of the tokens `o200k_base` makes of `text`: its
/// pre-tokenizer never puts two runs of ASCII letters that a character other
/// than a letter separates into one piece (save an English contraction's
/// `'s`, `'re`…: a run after an apostrophe is not counted), nor letters and
/// digits, and it cuts digits into pieces of at most three; every piece is at
/// least one token. Other characters join the run they touch, which can only
/// count fewer.
pub fn pieces_at_least(text: &str) -> usize {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Letters,
        Digits(usize),
    }
    let mut pieces = 0;
    let mut run = Run::None;
    let mut after_apostrophe = false;
    for &b in text.as_bytes() {
        let next = if b.is_ascii_alphabetic() || b >= 0x80 {
            Run::Letters
        } else if b.is_ascii_digit() {
            match run {
                Run::Digits(n) => Run::Digits(n + 1),
                _ => Run::Digits(1),
            }
        } else {
            Run::None
        };
        match next {
            Run::Letters if run != Run::Letters && !(after_apostrophe && b < 0x80) => pieces += 1,
            Run::Digits(n) if n % 3 == 1 => pieces += 1,
            _ => {}
        }
        after_apostrophe = b == b'\'';
        run = next;
    }
    pieces
}

/// The spec's formula: `ceil(words × 1.3)`, words being the whitespace-separated
/// pieces of the text.
pub fn words_estimate(json: &str) -> usize {
    (json.split_whitespace().count() * 13).div_ceil(10)
}

/// A node of a nested answer (explore_tree's tree, a file's outline) that is
/// cut into pages: flattened in pre-order, a page is the nodes from a cursor
/// on that fit a token budget, nested again. A node whose parent is on an
/// earlier page is a root of its page and names that parent.
pub trait Paged: serde::Serialize + Sized {
    fn take_children(&mut self) -> Vec<Self>;
    fn push_child(&mut self, child: Self);
    /// What a child on a later page calls this node in its `parent`.
    fn page_id(&self) -> String;
    fn set_parent(&mut self, parent: String);
}

/// A budget no answer comes near (the command line's: a terminal pays no
/// tokens). Its items are not counted at all.
pub const UNBOUNDED: usize = 1 << 48;

/// How many of the leading `items` of a list answer fit `max_tokens`, each
/// costing its estimate and a comma, and what they use of it. A list tool
/// cuts its answer there and says `truncated`, keeping its exact total.
fn fit<T: serde::Serialize>(tokens: &Tokenizer, items: &[T], max_tokens: usize) -> (usize, usize) {
    if max_tokens >= UNBOUNDED {
        return (items.len(), 0);
    }
    let mut used = 0;
    for (n, item) in items.iter().enumerate() {
        let json = serde_json::to_string(item).unwrap_or_default();
        match tokens.estimate_within(&json, max_tokens.saturating_sub(used)) {
            Some(cost) if used + cost < max_tokens => used += cost + 1,
            _ => return (n, used),
        }
    }
    (items.len(), used)
}

/// How many of the leading `items` fit `max_tokens` (see [`fit`]).
pub fn fitting<T: serde::Serialize>(tokens: &Tokenizer, items: &[T], max_tokens: usize) -> usize {
    fit(tokens, items, max_tokens).0
}

/// Keeps the leading `items` that fit `room` (see [`fit`]); what they use of it.
pub fn keep_within<T: serde::Serialize>(
    tokens: &Tokenizer,
    items: &mut Vec<T>,
    room: usize,
) -> usize {
    let (kept, used) = fit(tokens, items, room);
    items.truncate(kept);
    used
}

/// One page of a nested answer.
pub struct Page<T> {
    pub roots: Vec<T>,
    /// Nodes on this page, and in the whole answer.
    pub returned: usize,
    pub total: usize,
    /// The cursor of the next page: the pre-order position of its first node.
    pub next: Option<usize>,
    /// When the page holds no node though some were left: what the first of
    /// them costs alone (the budget that would hold it).
    pub needed: Option<usize>,
}

/// What a node costs beside its own fields: its place in its parent's
/// `children` list (`"children":[…]`, a comma).
const NESTING_TOKENS: usize = 3;

/// The page of `roots` that starts at pre-order position `from` and holds as
/// many nodes as fit `max_tokens` (each node's estimate without its children,
/// plus its nesting) and `max_nodes`.
pub fn page<T: Paged>(
    tokens: &Tokenizer,
    roots: Vec<T>,
    from: usize,
    max_tokens: usize,
    max_nodes: usize,
) -> Page<T> {
    fn flatten<T: Paged>(mut n: T, parent: Option<usize>, flat: &mut Vec<(T, Option<usize>)>) {
        let children = n.take_children();
        let me = flat.len();
        flat.push((n, parent));
        for c in children {
            flatten(c, Some(me), flat);
        }
    }
    let mut flat = Vec::new();
    for r in roots {
        flatten(r, None, &mut flat);
    }
    let total = flat.len();
    let mut nodes: Vec<(T, Option<usize>)> = flat.drain(from.min(total)..).collect();
    // `flat` now holds the earlier pages' nodes: the parents a node may name.
    let mut used = 0;
    let mut end = 0;
    let mut needed = None;
    for (n, parent) in nodes.iter_mut() {
        if end == max_nodes {
            break;
        }
        if let Some(p) = parent.filter(|&p| p < from) {
            n.set_parent(flat[p].0.page_id());
        }
        let cost = if max_tokens >= UNBOUNDED {
            0
        } else {
            tokens.estimate(n) + NESTING_TOKENS
        };
        if used + cost > max_tokens {
            if end == 0 {
                needed = Some(cost);
            }
            break;
        }
        used += cost;
        end += 1;
    }
    nodes.truncate(end);
    // Nested again: the open ancestors of the node being placed, innermost last.
    let mut out: Vec<T> = Vec::new();
    let mut open: Vec<(usize, T)> = Vec::new();
    let close = |open: &mut Vec<(usize, T)>, out: &mut Vec<T>| {
        if let Some((_, done)) = open.pop() {
            match open.last_mut() {
                Some((_, parent)) => parent.push_child(done),
                None => out.push(done),
            }
        }
    };
    for (k, (n, parent)) in nodes.into_iter().enumerate() {
        let at = from + k;
        let on_page = parent.filter(|&p| p >= from);
        while open.last().is_some_and(|(i, _)| Some(*i) != on_page) {
            close(&mut open, &mut out);
        }
        open.push((at, n));
    }
    while !open.is_empty() {
        close(&mut open, &mut out);
    }
    Page {
        roots: out,
        returned: end,
        total,
        next: (from + end < total).then_some(from + end),
        needed,
    }
}

/// How many of the leading `lines` fit `max_tokens` as one JSON string (the
/// lines joined by newlines): counted line by line, then checked whole.
pub fn lines_that_fit(tokens: &Tokenizer, lines: &[&str], max_tokens: usize) -> usize {
    let mut used = 2; // the string's quotes
    let mut n = 0;
    for line in lines {
        let escaped = serde_json::to_string(line).unwrap_or_default();
        let inner = escaped
            .get(1..escaped.len().saturating_sub(1))
            .unwrap_or("");
        let cost = tokens.estimate_json(inner) + 1; // the newline
        if used + cost > max_tokens {
            break;
        }
        used += cost;
        n += 1;
    }
    // Tokens can merge across lines, rarely split more: check the whole.
    while n > 0 && tokens.estimate(&lines[..n].join("\n")) > max_tokens {
        n -= 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::{Page, Paged, Tokenizer, lines_that_fit, page, words_estimate};
    use serde_json::json;

    #[derive(serde::Serialize, Clone, Debug, PartialEq)]
    struct N {
        id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        children: Vec<N>,
    }

    impl Paged for N {
        fn take_children(&mut self) -> Vec<N> {
            std::mem::take(&mut self.children)
        }
        fn push_child(&mut self, child: N) {
            self.children.push(child);
        }
        fn page_id(&self) -> String {
            self.id.clone()
        }
        fn set_parent(&mut self, parent: String) {
            self.parent = Some(parent);
        }
    }

    fn n(id: &str, children: Vec<N>) -> N {
        N {
            id: id.into(),
            parent: None,
            children,
        }
    }

    /// a(b(c, d), e(f)), g
    fn forest() -> Vec<N> {
        vec![
            n(
                "a",
                vec![
                    n("b", vec![n("c", vec![]), n("d", vec![])]),
                    n("e", vec![n("f", vec![])]),
                ],
            ),
            n("g", vec![]),
        ]
    }

    #[test]
    fn a_page_that_fits_is_the_whole_tree() {
        let t = Tokenizer::default();
        let p = page(&t, forest(), 0, 10_000, 100);
        assert_eq!((p.returned, p.total, p.next), (7, 7, None));
        assert_eq!(p.roots, forest());
    }

    #[test]
    fn pages_resume_in_pre_order_and_name_parents_left_behind() {
        let t = Tokenizer::default();
        let mut seen = Vec::new();
        let mut from = 0;
        let mut pages = 0;
        loop {
            let Page { roots, next, .. } = page(&t, forest(), from, 10_000, 3);
            fn ids(ns: &[N], out: &mut Vec<String>) {
                for x in ns {
                    out.push(x.id.clone());
                    ids(&x.children, out);
                }
            }
            ids(&roots, &mut seen);
            if pages == 1 {
                // d's parent b was on page 0; e's parent a too; f is under e.
                assert_eq!(roots[0].id, "d");
                assert_eq!(roots[0].parent.as_deref(), Some("b"));
                assert_eq!(roots[1].id, "e");
                assert_eq!(roots[1].parent.as_deref(), Some("a"));
                assert_eq!(roots[1].children[0].id, "f");
                assert_eq!(roots[1].children[0].parent, None);
            }
            pages += 1;
            match next {
                Some(n) => from = n,
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, ["a", "b", "c", "d", "e", "f", "g"]);
    }

    #[test]
    fn a_page_stops_at_its_token_budget() {
        let t = Tokenizer::default();
        let one = t.estimate(&n("a", vec![])) + super::NESTING_TOKENS;
        let p = page(&t, forest(), 0, 2 * one + 1, 100);
        assert_eq!((p.returned, p.next), (2, Some(2)));
        let p = page(&t, forest(), 0, one - 1, 100);
        assert_eq!((p.returned, p.next), (0, Some(0)));
    }

    #[test]
    fn lines_fit_their_budget_as_one_json_string() {
        let t = Tokenizer::default();
        let lines: Vec<String> = (0..200)
            .map(|i| format!("\tif x[{i}] != nil {{ return fmt.Errorf(\"bad %d\", {i}) }}"))
            .collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        for budget in [1, 10, 50, 300, 1000] {
            let n = lines_that_fit(&t, &lines, budget);
            assert!(
                n == 0 || t.estimate(&lines[..n].join("\n")) <= budget,
                "{budget}"
            );
            assert!(n == lines.len() || t.estimate(&lines[..n + 2].join("\n")) > budget);
        }
        assert!(lines_that_fit(&t, &lines, 1000) > 10);
    }

    #[test]
    fn the_estimate_is_the_larger_of_the_word_formula_and_the_bpe_count() {
        let t = Tokenizer::default();
        // Prose: many short words, so the word formula is the larger.
        let prose = json!({"doc": "a b c d e f g h i j k l m n o p q r s t u v w x y z"});
        let text = prose.to_string();
        assert_eq!(words_estimate(&text), 34); // 26 pieces
        assert!(t.count(&text) < 34, "{}", t.count(&text));
        assert_eq!(t.estimate(&prose), 34);
        // Tab-indented code: one "word" to the formula, dozens of tokens.
        let code = json!({"body": "func f() {\n\tif x {\n\t\treturn y\n\t}\n\treturn z\n}"});
        let text = code.to_string();
        assert_eq!(words_estimate(&text), 10); // 7 pieces
        let bpe = t.count(&text);
        assert!(bpe > 10, "{bpe}");
        assert_eq!(t.estimate(&code), bpe);
    }

    #[test]
    fn the_piece_count_never_exceeds_the_bpe_count() {
        let t = Tokenizer::default();
        let texts = [
            r#"{"kind":"fn","name":"validate_token","signature":"pub fn validate_token(token: &str) -> bool"}"#,
            r#"{"body":"func f() {\n\tif x[12345] != nil {\n\t\treturn y\n\t}\n}"}"#,
            "it's they're we've I'm you'll he'd IT'S O'Neil don't",
            "naïve café 中文 résumé über straße 1234567 3.14159 0x1F",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbb",
            "a1b2c3 ABCdef GHI_jkl mno-pqr ''' '' 's 't",
        ];
        for (k, text) in texts.into_iter().enumerate() {
            let (lb, real) = (super::pieces_at_least(text), t.count(text));
            assert!(lb <= real, "{lb} > {real}: {text}");
            // On code and JSON (not on long runs of one letter) it is useful.
            assert!(k > 1 || lb * 3 >= real, "too loose: {lb} of {real}: {text}");
        }
        // An item that cannot fit is refused without the BPE; one that may, counted.
        let json = texts[0];
        assert_eq!(t.estimate_within(json, 3), None);
        assert_eq!(t.estimate_within(json, 1000), Some(t.estimate_json(json)));
    }

    #[test]
    fn the_bpe_count_is_o200k_base() {
        let t = Tokenizer::default();
        // Reference counts from OpenAI's tiktoken (o200k_base).
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count(""), 0);
    }
}
