; Definitions in Go. A type_spec's kind (struct, interface, type) is decided by its
; underlying type in code; methods are attached to their receiver type.
(function_declaration name: (identifier) @name) @definition.fn
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name) @definition.typespec
(type_alias name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.const))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.var))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.var)))
