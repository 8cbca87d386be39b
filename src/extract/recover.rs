//! Valid TypeScript that tree-sitter-typescript 0.23.2 misreads, read again.
//!
//! The grammar takes a generic call signature on its own line after a member
//! with no `;` (`<B>(b: B): B` in an interface) for type arguments of the
//! member before (tree-sitter/tree-sitter-typescript#335), and rejects the
//! modifier pair `abstract override` and `export type *`. Each opens an ERROR node that can run
//! to the end of the file: Hono's 2,779-line `types.ts` kept 19 of its 41
//! exported declarations. When a tree has errors, the source is patched
//! without moving a byte (a space before such a `<` becomes the `;` the
//! grammar wanted; `override` after `abstract`, and `type` in `export type *`,
//! become spaces) and parsed
//! again; the second tree is kept when fewer lines sit under errors. Every
//! position stays the original's, and text is always read from the original.

use tree_sitter::Node;

/// The source with the patches, if any applies.
pub fn patched(source: &str) -> Option<String> {
    let mut bytes = source.as_bytes().to_vec();
    let mut changed = false;
    // How the last line of code ended (comments say nothing of it).
    let mut prev_end: Option<&str> = None;
    let mut at = 0;
    for line in source.split_inclusive('\n') {
        let text = line.trim_end();
        let body = text.trim_start();
        let indent = text.len() - body.len();
        if indent > 0
            && body.starts_with('<')
            && prev_end.is_some_and(ends_a_member)
            && call_signature_at(&source[at + indent..])
        {
            bytes[at + indent - 1] = b';';
            changed = true;
        }
        let mut from = 0;
        while let Some(i) = text[from..].find("abstract") {
            let start = from + i + "abstract".len();
            let rest = &text[start..];
            let gap = rest.len() - rest.trim_start().len();
            let word = &rest[gap..];
            if gap > 0
                && word.starts_with("override")
                && !word[8..].starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
            {
                let o = at + start + gap;
                bytes[o..o + 8].fill(b' ');
                changed = true;
            }
            from = start;
        }
        // `export type * from "…"` (TypeScript 5.0): the grammar knows
        // `export * from`, which names the same modules.
        if let Some(rest) = body.strip_prefix("export")
            && rest.starts_with(char::is_whitespace)
            && let Some(after) = rest.trim_start().strip_prefix("type")
            && after.starts_with(char::is_whitespace)
            && after.trim_start().starts_with('*')
        {
            let o = at + indent + body.len() - after.len() - 4;
            bytes[o..o + 4].fill(b' ');
            changed = true;
        }
        // Comments say nothing of how the member before them ended.
        let comment = body.starts_with("//") || body.starts_with("/*") || body.starts_with('*');
        if !body.is_empty() && !comment {
            prev_end = Some(body);
        }
        at += line.len();
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    changed.then(|| String::from_utf8(bytes).ok()).flatten()
}

/// `<T>(…`, `<T extends X<Y> = {}, U>(…`, over several lines too: type
/// parameters, then a parameter list. (`=>` inside is an arrow, not a `>`.)
fn call_signature_at(text: &str) -> bool {
    let mut depth = 0usize;
    let mut prev = ' ';
    for (i, c) in text.char_indices().take(4000) {
        match c {
            '<' => depth += 1,
            '>' if prev != '=' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return text[i + 1..].trim_start().starts_with('(');
                }
            }
            ';' => return false,
            _ => {}
        }
        prev = c;
    }
    false
}

/// A member's type can end a line with a name, a closing bracket or a quote;
/// a line that ends with `;`, `,`, `{`, `(`, `=`, `|`, `&` or `=>` already
/// separates or continues, and needs nothing.
fn ends_a_member(line: &str) -> bool {
    let Some(&c) = line.as_bytes().last() else {
        return false;
    };
    c.is_ascii_alphanumeric()
        || matches!(c, b'_' | b'$' | b')' | b']' | b'}' | b'\'' | b'"' | b'`')
        || (c == b'>' && !line.ends_with("=>")) // `Promise<T>`, not an arrow
}

/// Lines under ERROR nodes, and one for each MISSING node: how much of a file
/// the grammar could not read.
pub fn error_lines(root: Node<'_>) -> usize {
    if !root.has_error() {
        return 0;
    }
    let mut lines = 0;
    let mut cursor = root.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend {
            if node.is_error() {
                lines += node.end_position().row - node.start_position().row + 1;
            } else if node.is_missing() {
                lines += 1;
            } else if node.has_error() && cursor.goto_first_child() {
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            descend = true;
        } else if cursor.goto_parent() {
            descend = false;
        } else {
            return lines;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::patched;

    #[test]
    fn patches_keep_every_byte_in_place() {
        let src = "export interface Fn {\n  <A>(a: A): A\n  // two\n  <\n    B = {},\n  >(b: B): B\n}\nabstract class X extends Y { abstract override p: string }\nexport type * from './t'\n";
        let p = patched(src).expect("patched");
        assert_eq!(p.len(), src.len());
        assert_eq!(p.lines().count(), src.lines().count());
        assert!(p.contains("\n ;<\n    B = {},"), "{p}");
        assert!(p.contains("export      * from"), "{p}");
        assert!(
            !p.contains("override") && p.contains("abstract          p"),
            "{p}"
        );
        // The first signature follows `{`: nothing to separate.
        assert!(p.contains("{\n  <A>"), "{p}");
    }

    #[test]
    fn leaves_other_code_alone() {
        for src in [
            "const f =\n  <T>(x: T) => x\n",
            "type F = (x: number) =>\n  <T>(y: T) => T\n",
            "return (\n  <div>\n    <span/>\n  </div>\n)\n",
            "class A { override p = 1; abstract overrideMe(): void }\n",
        ] {
            assert_eq!(patched(src), None, "{src}");
        }
    }
}
