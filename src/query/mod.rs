//! Questions asked of a store, each answered as a typed value (`answers`):
//! symbol lookup and the hierarchy walks (`nav`, `hierarchy`), related symbols,
//! definitions, a file's outline, the repository tree and a node's source,
//! ranked search and context fitted to a token budget, and ad hoc Cypher,
//! guarded and sandboxed (`cypher`). A query reads a `View` of one repo/ref and
//! knows nothing of the service, the protocol or the transport.

pub mod answers;
pub mod args;
pub mod budget;
pub mod calls;
pub mod context;
pub mod cypher;
pub mod error;
pub mod forest;
pub mod hierarchy;
pub mod inputs;
pub mod locate;
pub mod nav;
pub mod outline;
pub mod related;
pub mod search;
pub mod texts;
pub mod tree;
pub mod view;
