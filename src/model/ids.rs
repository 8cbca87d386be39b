//! Symbol ids (and `Name` ids, `name_id`): `s` and 11 base64url digits of a blake3 hash (66 bits), so an
//! id is 12 bytes. Kuzu keeps a string of up to 12 bytes inside its value
//! (longer ones live in an overflow buffer), so every primary-key lookup of a
//! COPY or a query on ids compares them in place; and every CALLS/REFERENCES row,
//! the search index and the resolution state carry two of them per edge. Ids are
//! packed to 9 bytes in memory and in the state (`pack`, `unpack`).

const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Bytes of a packed id.
pub const PACKED: usize = 9;

/// The id of the symbol whose identity hashes to `hash` (at least 9 bytes).
pub fn symbol_id(hash: &[u8]) -> String {
    id_text(&id_bytes(hash)).to_string()
}

/// The id of a file's definition: blake3 over where it is and what it is;
/// `ordinal` (`ordinals`) separates same-named definitions of one file.
pub fn definition_id(
    repo: &str,
    ref_name: &str,
    path: &str,
    kind: &str,
    qualified_name: &str,
    ordinal: u32,
) -> String {
    let mut h = blake3::Hasher::new();
    for part in [repo, ref_name, path, kind, qualified_name] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.update(&ordinal.to_le_bytes());
    symbol_id(h.finalize().as_bytes())
}

/// For each of a file's definitions (qualified name, kind), in order, how
/// many before it and it have that name and kind (1 for the first).
pub fn ordinals<'a>(defs: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<u32> {
    let mut seen: std::collections::HashMap<(&str, &str), u32> = Default::default();
    defs.map(|d| {
        let n = seen.entry(d).or_insert(0);
        *n += 1;
        *n
    })
    .collect()
}

/// `symbol_id`'s 12 bytes.
fn id_bytes(hash: &[u8]) -> [u8; 12] {
    let mut n = 0u128;
    for &b in &hash[..PACKED] {
        n = (n << 8) | u128::from(b);
    }
    // The top 66 of the 72 bits, as 11 digits.
    n >>= 6;
    let mut id = [b's'; 12];
    for (i, d) in id[1..].iter_mut().enumerate() {
        *d = DIGITS[((n >> (6 * (10 - i))) & 63) as usize];
    }
    id
}

fn id_text(id: &[u8; 12]) -> &str {
    std::str::from_utf8(id).expect("base64url digits are ASCII")
}

fn digit(b: u8) -> Option<u128> {
    let v = match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    };
    Some(u128::from(v))
}

/// The id of the `Name` node of an unresolved `name` in a repo/ref: `n` and 11
/// base64url digits of blake3 over the three, 12 bytes as a symbol id is (the
/// repo, ref and name are the node's properties). Every UNRESOLVED row looks
/// one up.
pub fn name_id(repo: &str, ref_name: &str, name: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [repo, ref_name, name] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    let mut id = symbol_id(h.finalize().as_bytes());
    id.replace_range(..1, "n");
    id
}

/// The 9 bytes of an id `symbol_id` made; `None` for another form (older
/// data, tests), which callers keep as text.
pub fn pack(id: &str) -> Option<[u8; PACKED]> {
    let digits = id.strip_prefix('s').filter(|d| d.len() == 11)?;
    let mut n = 0u128;
    for b in digits.bytes() {
        n = (n << 6) | digit(b)?;
    }
    let bytes = (n << 6).to_be_bytes();
    let mut out = [0u8; PACKED];
    out.copy_from_slice(&bytes[16 - PACKED..]);
    Some(out)
}

/// The id `pack` packed.
pub fn unpack(raw: &[u8]) -> String {
    symbol_id(raw)
}

/// The id `pack` packed, kept inline (12 bytes: no allocation).
pub fn unpack_inline(raw: &[u8]) -> compact_str::CompactString {
    compact_str::CompactString::from(id_text(&id_bytes(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_twelve_bytes_and_round_trip_through_packing() {
        for seed in 0u32..2000 {
            let h = blake3::hash(&seed.to_le_bytes());
            let id = symbol_id(h.as_bytes());
            assert_eq!(id.len(), 12, "{id}");
            assert!(id.starts_with('s'));
            let packed = pack(&id).expect("packs");
            assert_eq!(unpack(&packed), id);
            assert_eq!(unpack_inline(&packed), id);
        }
        // Other forms are not packed (kept as text by callers).
        assert_eq!(pack("s_0123456789abcdef01234567"), None);
        assert_eq!(pack("sABC"), None);
        assert_eq!(pack("xAAAAAAAAAAA"), None);
        assert_eq!(pack("sAAAAAAAAA.A"), None);
    }

    #[test]
    fn name_ids_are_twelve_bytes_and_tell_names_apart() {
        let a = name_id("r", "main", "run");
        assert_eq!(a.len(), 12);
        assert!(a.starts_with('n'));
        assert_eq!(a, name_id("r", "main", "run"));
        assert_ne!(a, name_id("r", "main", "runs"));
        assert_ne!(a, name_id("r", "dev", "run"));
        // The parts are delimited: ("ab", "c") is not ("a", "bc").
        assert_ne!(name_id("ab", "c", "x"), name_id("a", "bc", "x"));
    }
}
