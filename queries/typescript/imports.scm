; ES imports, re-exports, require() and dynamic import() with a literal specifier.
(import_statement) @import
(export_statement source: (_)) @reexport
((call_expression
   function: (identifier) @_fn
   arguments: (arguments . (string) @source)) @require
 (#eq? @_fn "require"))
(call_expression
   function: (import)
   arguments: (arguments . (string) @source)) @dynamic
