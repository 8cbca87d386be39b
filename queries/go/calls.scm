; Call and reference sites, and the facts the `typed` tier reads
; (src/extract/sites.rs turns each capture into a RawSite or a Fact).

(call_expression function: (_) @callee) @call
(composite_literal type: (_) @callee) @construct
(field_declaration !name type: (_) @callee) @extends

(parameter_declaration type: (_) @callee) @type
(field_declaration name: (_) type: (_) @callee) @type
(var_spec type: (_) @callee) @type
(method_declaration result: (_) @callee) @type
(function_declaration result: (_) @callee) @type

; Types named in expressions: `new(T)`, `make([]T, n)`, `[]T{…}`, `case T:`,
; type arguments (`F[T]()`), a method expression's or exported value's
; operand (`T.Show`; packages are not capitalised).
(argument_list [(type_identifier) (slice_type) (map_type) (array_type) (pointer_type) (channel_type) (qualified_type) (generic_type)] @callee) @type
(composite_literal type: [(slice_type) (map_type) (array_type) (implicit_length_array_type)] @callee) @type
(type_case type: (_) @callee) @type
(call_expression type_arguments: (type_arguments (_) @callee)) @type
; `F[T]()` with one type argument reads as an index.
((call_expression function: (index_expression index: (identifier) @callee)) @type (#match? @callee "^[A-Z]"))
(type_conversion_expression type: (generic_type type_arguments: (type_arguments (_) @callee))) @type
((selector_expression operand: (identifier) @callee) @type (#match? @callee "^[A-Z]"))

(argument_list (identifier) @callee) @value
(argument_list (selector_expression) @callee) @value
; A function or variable named as a value elsewhere: assigned (`f =
; TrimRight`, `f := Trim`), returned, an element of a composite literal
; (`{"Index", Index}`), a `var`'s value. (A local named so is dropped at
; extraction: it names no symbol.)
(assignment_statement right: (expression_list (identifier) @callee)) @value
(short_var_declaration right: (expression_list (identifier) @callee)) @value
(return_statement (expression_list (identifier) @callee)) @value
(literal_element (identifier) @callee) @value
(var_spec value: (expression_list (identifier) @callee)) @value

(method_declaration receiver: (parameter_list (parameter_declaration name: (identifier) @name type: (_) @ty))) @fact.receiver
(function_declaration parameters: (parameter_list (parameter_declaration name: (identifier) @name type: (_) @ty))) @fact.local
(method_declaration parameters: (parameter_list (parameter_declaration name: (identifier) @name type: (_) @ty))) @fact.local
(func_literal parameters: (parameter_list (parameter_declaration name: (identifier) @name type: (_) @ty))) @fact.local
(short_var_declaration left: (expression_list . (identifier) @name) right: (expression_list . (_) @ty)) @fact.local
(var_spec name: (identifier) @name type: (_) @ty) @fact.local
(var_spec name: (identifier) @name !type value: (expression_list . (_) @ty)) @fact.local
(field_declaration name: (field_identifier) @name type: (_) @ty) @fact.field
(method_declaration result: (_) @ty) @fact.returns
(function_declaration result: (_) @ty) @fact.returns
(interface_type (type_elem [(type_identifier) (qualified_type)] @callee)) @extends
(type_parameter_declaration name: (identifier) @name type: (type_constraint . (_) @ty)) @fact.bound
(range_clause left: (expression_list (_) . (identifier) @name) right: (_) @ty) @fact.local
(expression_list (selector_expression) @callee) @value
(type_alias type: (_) @ty) @fact.alias
; An interface method's result: `rw.Header().Set(…)` calls `Header`'s `Set`.
(method_elem result: (_) @callee) @type
(method_elem result: (_) @ty) @fact.returns
; `v.(T)` names type `T`.
(type_assertion_expression type: (_) @callee) @type
; A generic function instantiated with a plain type argument parses as a
; conversion to a generic type: `readFrame[PingFrame](t)`.
(type_conversion_expression type: (generic_type) @callee) @call
; A package-level function value returns what its literal returns:
; `var f = func() *T {…}`, `var engine = sync.OnceValue(func() *T {…})`, so
; `engine().ServeHTTP(…)` is `T`'s method. Top level only: a local `var`'s
; owner is its function, whose own result this is not.
(source_file (var_declaration (var_spec name: (identifier) value: (expression_list . (func_literal result: (_) @ty))) @fact.returns))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) value: (expression_list . (func_literal result: (_) @ty))) @fact.returns)))
(source_file (var_declaration (var_spec name: (identifier) value: (expression_list . (call_expression function: (selector_expression operand: (identifier) @_pkg field: (field_identifier) @_fn) arguments: (argument_list . (func_literal result: (_) @ty))))) @fact.returns) (#eq? @_pkg "sync") (#match? @_fn "^OnceValues?$"))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) value: (expression_list . (call_expression function: (selector_expression operand: (identifier) @_pkg field: (field_identifier) @_fn) arguments: (argument_list . (func_literal result: (_) @ty))))) @fact.returns)) (#eq? @_pkg "sync") (#match? @_fn "^OnceValues?$"))
