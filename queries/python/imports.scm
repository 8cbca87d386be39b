; Every import statement, wherever it appears (module level, functions, try, if).
(import_statement) @import
(import_from_statement) @from
(future_import_statement) @future
