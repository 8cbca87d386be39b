//! Beyond one machine: a server's committed index states published as
//! immutable *generations* to an object store ([`publish`]), and read-only
//! replicas that serve the newest complete one ([`replica`]). A generation is a
//! data dir's state whole (every repo/ref it holds shares one Kuzu file), its
//! files cut in content-addressed chunks ([`generation`]), in any store the
//! `object_store` crate reaches ([`objects`]). docs/DEPLOY.md has the parts
//! and what happens when each dies.

pub mod generation;
pub mod objects;
pub mod publish;
pub mod replica;
