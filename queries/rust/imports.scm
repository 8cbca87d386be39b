; Import-like statements in Rust; the use tree is flattened in src/imports/collect.rs.
(use_declaration) @use
(extern_crate_declaration) @extern_crate
(mod_item !body) @mod
