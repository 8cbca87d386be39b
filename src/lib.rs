//! cruxe: code navigation for AI coding agents.
//!
//! The folders are the pipeline, in the order data flows (nothing reads upward):
//! [`model`] (the vocabulary) → [`source`] (which files, from the working tree or
//! git) → [`extract`] (symbols and raw imports, tree-sitter) → [`resolve`]
//! (imports to their targets) → [`store`] (the data dir: Kuzu graph, Tantivy
//! search index) → [`index`] (one run: walk, parse, resolve, write, publish) →
//! [`query`] (navigation and ad hoc Cypher over a store) → [`replicate`]
//! (generations published to an object store, and read back by replicas) →
//! [`service`] (served repositories, watching, background runs) → [`mcp`] and
//! [`cli`] (surfaces).
//! `docs/ARCHITECTURE.md` has the map and the invariants.

pub mod cli;
pub mod extract;
pub mod index;
pub mod mcp;
pub mod model;
pub mod query;
pub mod replicate;
pub mod resolve;
pub mod service;
pub mod source;
pub mod store;
