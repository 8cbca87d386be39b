//! A value kept as the bytes it was read from until something uses it: a ref's
//! resolution state holds every file's imports and definitions (600k on a big
//! Rust tree), and a run that changed one file reads a few of them. Decoding all
//! of them took most of a run's start; the bytes are kept, decoded on first use,
//! and written back as they are when the value was never changed (a `Lazy` is
//! never changed in place: a new value is a new `Lazy`).

use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// Bytes shared by every value read from them (a file read or mapped once).
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

pub struct Lazy<T> {
    value: OnceLock<T>,
    encoded: Option<Encoded<T>>,
}

struct Encoded<T> {
    bytes: Shared,
    range: Range<usize>,
    decode: fn(&[u8]) -> T,
    /// The range holds what `decode` reads compressed (`Lazy::packed`).
    packed: bool,
}

impl<T> Lazy<T> {
    /// A value made now (nothing to decode).
    pub fn new(value: T) -> Lazy<T> {
        Lazy {
            value: OnceLock::from(value),
            encoded: None,
        }
    }

    /// The value `decode` makes of `bytes[range]`, made when first used. The
    /// range must lie within the bytes (the reader checked it).
    pub fn encoded(bytes: Shared, range: Range<usize>, decode: fn(&[u8]) -> T) -> Lazy<T> {
        Lazy::stored_as(bytes, range, decode, false)
    }

    /// Like `encoded`, with `bytes[range]` what `decode` reads as `pack`
    /// compressed it: decompressed when first used. Bytes that do not
    /// decompress decode as empty, as `decode` does with bytes it cannot read
    /// (their checksum was checked before).
    pub fn packed(bytes: Shared, range: Range<usize>, decode: fn(&[u8]) -> T) -> Lazy<T> {
        Lazy::stored_as(bytes, range, decode, true)
    }

    fn stored_as(
        bytes: Shared,
        range: Range<usize>,
        decode: fn(&[u8]) -> T,
        packed: bool,
    ) -> Lazy<T> {
        Lazy {
            value: OnceLock::new(),
            encoded: Some(Encoded {
                bytes,
                range,
                decode,
                packed,
            }),
        }
    }

    pub fn value(&self) -> &T {
        self.value.get_or_init(|| match &self.encoded {
            Some(e) => e.decode_now(),
            None => unreachable!("a Lazy holds a value or its bytes"),
        })
    }

    /// The value when it was made already, else what its bytes decode to,
    /// made now and not kept: a full build reads each file's sites in the
    /// chunk of files that resolves it (and in those that look into it), and
    /// kept they were most of its memory.
    pub fn value_or_decoded(&self) -> std::borrow::Cow<'_, T>
    where
        T: Clone,
    {
        match (self.value.get(), &self.encoded) {
            (Some(v), _) => std::borrow::Cow::Borrowed(v),
            (None, Some(e)) => std::borrow::Cow::Owned(e.decode_now()),
            (None, None) => unreachable!("a Lazy holds a value or its bytes"),
        }
    }

    /// The bytes the value was read from, if it was: they encode it still
    /// (compressed, if it was read `packed`).
    pub fn raw(&self) -> Option<&[u8]> {
        self.encoded
            .as_ref()
            .map(|e| &(*e.bytes).as_ref()[e.range.clone()])
    }

    /// Whether the value was read packed, and the bytes it was read from.
    fn stored(&self) -> Option<(bool, &[u8])> {
        self.encoded.as_ref().map(|e| e.packed).zip(self.raw())
    }

    /// The bytes of a value read `packed`: as `pack` made them.
    pub fn packed_raw(&self) -> Option<&[u8]> {
        self.encoded.as_ref().filter(|e| e.packed).and(self.raw())
    }

    /// Whether the value was decoded (or made) already.
    pub fn is_decoded(&self) -> bool {
        self.value.get().is_some()
    }
}

/// `plain` compressed: a zstd frame (level 1) that records its size. A
/// resolution state is mostly many small sections (a file's sites, facts and
/// edges, ~6 KB each): zstd keeps them in 21% less than lz4 did (64 → 51 MB on
/// the crates), and only changed files' sections are compressed or read.
pub fn pack(plain: &[u8]) -> Vec<u8> {
    thread_local! {
        // A context is ~1 MiB to set up; a state compresses ~40k sections.
        static PACKER: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    PACKER.with_borrow_mut(|packer| {
        let packer =
            packer.get_or_insert_with(|| zstd::bulk::Compressor::new(1).expect("zstd level 1"));
        let mut packed = packer
            .compress(plain)
            .expect("zstd compresses into a buffer of its bound");
        // Room for the bound is the plain size: a full build holds each file's
        // packed edges until the state is written.
        packed.shrink_to_fit();
        packed
    })
}

/// What `pack` compressed, or `None` for bytes that are not such a frame.
pub fn unpack(packed: &[u8]) -> Option<Vec<u8>> {
    // A frame records its size; a damaged one cannot claim more than this.
    const MAX: usize = 256 << 20;
    thread_local! {
        static UNPACKER: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    UNPACKER.with_borrow_mut(|unpacker| {
        if unpacker.is_none() {
            *unpacker = zstd::bulk::Decompressor::new().ok();
        }
        unpacker.as_mut()?.decompress(packed, MAX).ok()
    })
}

impl<T> Encoded<T> {
    fn decode_now(&self) -> T {
        let raw = &(*self.bytes).as_ref()[self.range.clone()];
        match self.packed {
            true => (self.decode)(&unpack(raw).unwrap_or_default()),
            false => (self.decode)(raw),
        }
    }
}

impl<T> std::ops::Deref for Lazy<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value()
    }
}

impl<T: Default> Default for Lazy<T> {
    fn default() -> Lazy<T> {
        Lazy::new(T::default())
    }
}

impl<T: Clone> Clone for Lazy<T> {
    fn clone(&self) -> Lazy<T> {
        Lazy {
            value: self.value.clone(),
            encoded: self.encoded.as_ref().map(|e| Encoded {
                bytes: e.bytes.clone(),
                range: e.range.clone(),
                decode: e.decode,
                packed: e.packed,
            }),
        }
    }
}

impl<T: PartialEq> PartialEq for Lazy<T> {
    fn eq(&self, other: &Lazy<T>) -> bool {
        match (self.stored(), other.stored()) {
            // The same bytes, read the same way, decode to the same value.
            (Some(a), Some(b)) if a == b => true,
            _ => self.value() == other.value(),
        }
    }
}

impl<T: Eq> Eq for Lazy<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value.get() {
            Some(v) => v.fmt(f),
            None => write!(
                f,
                "<{} bytes, not decoded>",
                self.raw().map_or(0, <[u8]>::len)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(b: &[u8]) -> Vec<String> {
        std::str::from_utf8(b)
            .unwrap_or_default()
            .split(' ')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn decodes_once_on_first_use_and_keeps_its_bytes() {
        let bytes: Shared = Arc::new(b"xx a b yy".to_vec());
        let lazy = Lazy::encoded(bytes, 3..6, words);
        assert!(!lazy.is_decoded());
        assert_eq!(lazy.raw(), Some(&b"a b"[..]));
        assert_eq!(lazy.len(), 2);
        assert!(lazy.is_decoded());
        assert_eq!(*lazy, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(lazy, Lazy::new(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(Lazy::new(1).raw(), None);
    }

    #[test]
    fn a_packed_value_is_decompressed_on_first_use() {
        let plain = b"a b c a b c a b c a b c";
        let packed = pack(plain);
        let n = packed.len();
        let lazy = Lazy::packed(Arc::new(packed), 0..n, words);
        assert!(!lazy.is_decoded());
        assert_eq!(lazy.packed_raw().map(<[u8]>::len), Some(n));
        // Decoded for a reader that does not keep it: still not decoded.
        assert_eq!(lazy.value_or_decoded().len(), 12);
        assert!(!lazy.is_decoded());
        assert_eq!(lazy.len(), 12);
        assert!(matches!(
            lazy.value_or_decoded(),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(lazy, Lazy::new(words(plain)));
        // The same bytes read plain are another value.
        let bytes: Shared = Arc::new(pack(plain));
        assert_ne!(
            Lazy::packed(bytes.clone(), 0..n, words),
            Lazy::encoded(bytes, 0..n, words)
        );
        assert_eq!(
            Lazy::encoded(Arc::new(plain.to_vec()), 0..3, words).packed_raw(),
            None
        );
        // Bytes that are no zstd frame decode as empty.
        assert_eq!(
            *Lazy::packed(Arc::new(b"zz".to_vec()), 0..2, words),
            vec![String::new()]
        );
    }
}
