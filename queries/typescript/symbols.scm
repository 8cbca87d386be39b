; Definitions in TypeScript, TSX and JavaScript (parsed with the TS/TSX grammars).
(function_declaration name: (_) @name) @definition.fn
(generator_function_declaration name: (_) @name) @definition.fn
(function_signature name: (_) @name) @definition.fn
(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(method_definition name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
; Class fields: `json = (…) => …` is a method, `count = 0` / `get: Get` a field.
(public_field_definition name: (_) @name) @definition.field
(internal_module name: (_) @name) @definition.namespace
; `export default function () {…}`, `export default () => …`: a function named `default`.
(program (export_statement "default" @name value: [(function_expression) (arrow_function)] @definition.fn))
(module name: (_) @name) @definition.namespace
; Top-level (or exported) variables: arrow functions become `fn`, the rest `const`/`var`.
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)))
(program (export_statement (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)))
(statement_block (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.variable))
; What a namespace exports: `namespace util { export const assertEqual = … }`.
(internal_module body: (statement_block (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))))
; `declare const x: T` (an ambient declaration), exported or not.
(program (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)))
(program (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)))
(program (export_statement (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))))
(program (export_statement (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))))
