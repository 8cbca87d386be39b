//! Questions asked of a store: symbol lookup and the hierarchy walks ([`nav`]),
//! and ad hoc Cypher, guarded and sandboxed ([`cypher`]).

pub mod cypher;
pub mod nav;
