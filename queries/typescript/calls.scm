; Call and reference sites, and the facts the `typed` tier reads
; (src/extract/sites.rs turns each capture into a RawSite or a Fact).

(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @callee) @new
; Heritage of a class that is a symbol: an anonymous class expression
; (`return class extends RegExpRouter {}`) is no type of the function around it.
(class_declaration (class_heritage (extends_clause value: (_) @callee))) @extends
(abstract_class_declaration (class_heritage (extends_clause value: (_) @callee))) @extends
(class name: (_) (class_heritage (extends_clause value: (_) @callee))) @extends
(extends_type_clause type: (_) @callee) @extends
(class_declaration (class_heritage (implements_clause (_) @callee))) @implements
(abstract_class_declaration (class_heritage (implements_clause (_) @callee))) @implements
(class name: (_) (class_heritage (implements_clause (_) @callee))) @implements

(type_annotation (_) @callee) @type
; Types named in expressions: `x as T`, `x satisfies T`, `x instanceof T`,
; `expect(x).toBeInstanceOf(T)`.
(as_expression [(type_identifier) (nested_type_identifier) (generic_type) (array_type) (union_type) (intersection_type) (tuple_type) (parenthesized_type)] @callee) @type
(satisfies_expression [(type_identifier) (nested_type_identifier) (generic_type) (array_type) (union_type) (intersection_type) (tuple_type) (parenthesized_type)] @callee) @type
(binary_expression operator: "instanceof" right: [(identifier) (member_expression)] @callee) @type
((call_expression function: (member_expression property: (property_identifier) @_m) arguments: (arguments . [(identifier) (member_expression)] @callee)) @type (#eq? @_m "toBeInstanceOf"))

; A computed member called (`target[name](…)`), or bound to a local the file
; calls (`const f = target[name] as Function; f()`): no name is written for
; what it calls (`model::sites::DYNAMIC`). A literal index is left out.
(call_expression function: (subscript_expression index: (_) @callee)) @dynamic
(call_expression function: (non_null_expression (subscript_expression index: (_) @callee))) @dynamic
(variable_declarator name: (identifier) @name value: (subscript_expression index: (_) @callee)) @dynamic
(variable_declarator name: (identifier) @name value: (as_expression (subscript_expression index: (_) @callee))) @dynamic

(arguments (identifier) @callee) @value
(arguments (member_expression) @callee) @value
; A function or class named as a value where no call says so: returned,
; assigned, in an array or object (a table of handlers); a class read from
; (`Chain.K`: capitalised receivers only, the rest are locals and modules).
; A local named so is dropped at extraction.
(return_statement (identifier) @callee) @value
(variable_declarator value: (identifier) @callee) @value
(assignment_expression right: (identifier) @callee) @value
(array (identifier) @callee) @value
(pair value: (identifier) @callee) @value
(object (shorthand_property_identifier) @callee) @value
((member_expression object: (identifier) @callee) @value (#match? @callee "^[A-Z]"))
; A parameter's default (`cls = Chain`), a branch of a conditional (`flag ?
; Chain : Sub`), what `||`/`??` fall back to, what an arrow function returns
; (`() => Chain`).
(required_parameter value: (identifier) @callee) @value
(optional_parameter value: (identifier) @callee) @value
(ternary_expression consequence: (identifier) @callee) @value
(ternary_expression alternative: (identifier) @callee) @value
(binary_expression operator: ["||" "??"] right: (identifier) @callee) @value
(arrow_function body: (identifier) @callee) @value

(required_parameter pattern: (identifier) @name type: (type_annotation (_) @ty)) @fact.local
(optional_parameter pattern: (identifier) @name type: (type_annotation (_) @ty)) @fact.local
(variable_declarator name: (identifier) @name type: (type_annotation (_) @ty)) @fact.local
(variable_declarator name: (identifier) @name !type value: (_) @ty) @fact.local
(public_field_definition name: (property_identifier) @name type: (type_annotation (_) @ty)) @fact.field
; An interface's or an object type alias's properties (`interface Ctx { logger:
; Logger }`, `type Opts = { logger: Logger }`): fields of the type.
(interface_declaration body: (interface_body (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty)))) @fact.field
(type_alias_declaration value: (object_type (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty)))) @fact.field
(public_field_definition name: (property_identifier) @name !type value: (_) @ty) @fact.field
(required_parameter (accessibility_modifier) pattern: (identifier) @name type: (type_annotation (_) @ty)) @fact.field
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @name) right: (_) @ty) @fact.field
; A getter is read as a field of its result (`get element(): T`, or without a
; declared result what it returns: `get element() { return this._def.type; }`).
(method_definition "get" name: (property_identifier) @name return_type: (type_annotation (_) @ty)) @fact.field
(method_definition "get" name: (property_identifier) @name !return_type body: (statement_block (return_statement (_) @ty))) @fact.getter
(method_definition return_type: (type_annotation (_) @ty)) @fact.returns
(method_signature return_type: (type_annotation (_) @ty)) @fact.returns
(function_declaration return_type: (type_annotation (_) @ty)) @fact.returns
(function_signature return_type: (type_annotation (_) @ty)) @fact.returns
(public_field_definition value: (arrow_function return_type: (type_annotation (_) @ty))) @fact.returns
(variable_declarator value: (arrow_function return_type: (type_annotation (_) @ty))) @fact.returns
(abstract_method_signature return_type: (type_annotation (_) @ty)) @fact.returns
; A result declared as an object type (`_process(): { status: ParseStatus }`):
; its properties' types, facts of the function (`model::sites::SHAPE`).
(method_definition return_type: (type_annotation (object_type (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty))))) @fact.shape
(method_signature return_type: (type_annotation (object_type (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty))))) @fact.shape
(function_declaration return_type: (type_annotation (object_type (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty))))) @fact.shape
(function_signature return_type: (type_annotation (object_type (property_signature name: (property_identifier) @name type: (type_annotation (_) @ty))))) @fact.shape
; Destructured from a value (`const { status, ctx: c } = this._process(input)`):
; the value's property of that name.
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @name) value: (_) @ty) @fact.unpacks
(variable_declarator name: (object_pattern (pair_pattern key: (property_identifier) value: (identifier) @name)) value: (_) @ty) @fact.unpacks
(variable_declarator name: (object_pattern (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)) value: (_) @ty) @fact.unpacks
; Destructured from a parameter of a declared type (`({ logger }: Ctx) =>`):
; the type's property of that name (`model::sites::PROPERTY`).
(required_parameter pattern: (object_pattern (shorthand_property_identifier_pattern) @name) type: (type_annotation (_) @ty)) @fact.unpacks
(required_parameter pattern: (object_pattern (pair_pattern key: (property_identifier) value: (identifier) @name)) type: (type_annotation (_) @ty)) @fact.unpacks
(required_parameter pattern: (object_pattern (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)) type: (type_annotation (_) @ty)) @fact.unpacks
; Without a declared result: what the body returns (`jwt() { return
; this._addCheck(…) }`, `() => new Query()`), typed where it is written.
(method_definition !return_type body: (statement_block (return_statement (_) @ty))) @fact.returns_value
(function_declaration !return_type body: (statement_block (return_statement (_) @ty))) @fact.returns_value
(public_field_definition value: (arrow_function !return_type body: (statement_block (return_statement (_) @ty)))) @fact.returns_value
(variable_declarator value: (arrow_function !return_type body: (statement_block (return_statement (_) @ty)))) @fact.returns_value
(public_field_definition value: (arrow_function !return_type body: [(call_expression) (new_expression) (member_expression) (identifier) (as_expression) (parenthesized_expression)] @ty)) @fact.returns_value
(variable_declarator value: (arrow_function !return_type body: [(call_expression) (new_expression) (member_expression) (identifier) (as_expression) (parenthesized_expression)] @ty)) @fact.returns_value
(required_parameter pattern: (identifier) @name @ty !type) @fact.local
(optional_parameter pattern: (identifier) @name @ty !type) @fact.local
(arrow_function parameter: (identifier) @name @ty) @fact.local
; Signatures' parameter types by position: what a function passed to them gets.
(function_declaration parameters: (formal_parameters) @ty) @fact.params
(function_signature parameters: (formal_parameters) @ty) @fact.params
(method_definition parameters: (formal_parameters) @ty) @fact.params
(method_signature parameters: (formal_parameters) @ty) @fact.params
(abstract_method_signature parameters: (formal_parameters) @ty) @fact.params
(variable_declarator value: (arrow_function parameters: (formal_parameters) @ty)) @fact.params
(type_alias_declaration value: (function_type parameters: (formal_parameters) @ty)) @fact.params
(type_alias_declaration value: (_) @ty) @fact.alias
; `export { objectType as object }` (no `from`): what the module exports by that name.
(export_statement !source (export_clause (export_specifier name: (identifier) @ty alias: (identifier) @name))) @fact.export
