; Each imported package, single or grouped.
(import_spec) @import
