//! What an index is made of on disk and in memory: the data dir ([`datadir`]:
//! manifest, writer lock, crash-safety copies), the Kuzu graph ([`graph`]: the
//! only module that names a Kuzu type), the Tantivy search index ([`search`]:
//! the only one that names Tantivy), a ref's symbols in memory ([`catalog`]),
//! and how `--memory-mb` is shared among them ([`memory`]).

pub mod catalog;
pub mod datadir;
pub mod graph;
pub mod memory;
pub mod search;
