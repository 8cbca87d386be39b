//! Where the files come from: which files of a working tree are indexed
//! ([`walk`]), the tree of a git ref read from git objects ([`gitref`]), and the
//! module and package names the manifests give each file ([`layout`]).

pub mod gitref;
pub mod layout;
pub mod rewalk;
pub mod walk;
