; Call and reference sites, and the facts the `typed` tier reads
; (src/extract/sites.rs turns each capture into a RawSite or a Fact).
; @callee / @ty is the expression or type; the outer capture names what it is.

(call_expression function: (_) @callee) @call
(struct_expression name: (_) @callee) @construct
(impl_item trait: (_) @callee) @implements
(trait_item bounds: (trait_bounds (_) @callee)) @extends

(parameter type: (_) @callee) @type
(let_declaration type: (_) @callee) @type
(field_declaration type: (_) @callee) @type
(function_item return_type: (_) @callee) @type
(function_signature_item return_type: (_) @callee) @type
(type_parameter bounds: (trait_bounds (_) @callee)) @type
(where_predicate bounds: (trait_bounds (_) @callee)) @type
; Every other place a type is written: what `impl` is for, items' and
; tuple fields' types, an alias's target, casts, closures' results,
; turbofish arguments (`size_of::<T>()`), patterns (`T { a }`, `E::A(x)`),
; what a `where` clause bounds and an associated type's bounds.
(impl_item type: (_) @callee) @type
(where_predicate left: (_) @callee) @type
(associated_type bounds: (trait_bounds (_) @callee)) @type
(static_item type: (_) @callee) @type
(const_item type: (_) @callee) @type
(ordered_field_declaration_list type: (_) @callee) @type
(type_item type: (_) @callee) @type
(type_cast_expression type: (_) @callee) @type
(closure_expression return_type: (_) @callee) @type
(generic_function type_arguments: (type_arguments) @callee) @type
(struct_pattern type: (_) @callee) @type
(tuple_struct_pattern type: (_) @callee) @type
; A path's qualifier (`Chain::from(…)`, `E::A`, `Vec::<T>::new()`): a type
; when it is named as one (src/extract/sites.rs keeps capitalised names).
(scoped_identifier path: (_) @callee) @path
(scoped_type_identifier path: (_) @callee) @path
; A `macro_rules!` template: never parsed as code; the types it names are
; read from its tokens (`@macro` bodies that are not parsed again too).
(macro_rule right: (token_tree) @callee) @mentions

(arguments (identifier) @callee) @value
; `for x in e`: the loop calls `e`'s `next` (or its `into_iter`).
(for_expression value: (_) @callee) @iterates
(arguments (scoped_identifier) @callee) @value

(parameter pattern: (identifier) @name type: (_) @ty) @fact.local
(let_declaration pattern: (identifier) @name type: (_) @ty) @fact.local
(let_declaration pattern: (identifier) @name !type value: (_) @ty) @fact.local
; A `static` or `const` is typed by its declaration (`static UTF_8: &Encoding`):
; a module-level value, a fact of the file.
(static_item name: (identifier) @name type: (_) @ty) @fact.local
(const_item name: (identifier) @name type: (_) @ty) @fact.local
; A closure's untyped parameter: a local, typed by what the callee declares
; for the closure it is passed as (`b.set_look_have(|have| …)`).
(closure_parameters (identifier) @name @ty) @fact.local
; Signatures' parameter lists: what a closure passed to them gets.
(function_item parameters: (parameters) @ty) @fact.params
(function_signature_item parameters: (parameters) @ty) @fact.params
; `for s in &self.states`, `for s in states.iter()`: an element of what is iterated.
(for_expression pattern: (identifier) @name value: (_) @ty) @fact.iterates
; `for (i, x) in xs.iter().enumerate()`: `x` is an element of `xs.iter()`.
((for_expression pattern: (tuple_pattern . (_) . (identifier) @name .) value: (call_expression function: (field_expression value: (_) @ty field: (field_identifier) @_e))) @fact.iterates (#eq? @_e "enumerate"))
; `if let Some(x) = e`, `while let Ok(x) = e`, `let Some(x) = e else {…}`, a match
; arm `Some(x) =>`: `x` is what `e` holds (`Option`/`Result` are taken off the
; types where they are written, so `e`'s type is the held value's).
; `ref x`, `mut x` and `Ok(Some(x))` (both taken off) too.
((let_condition pattern: (tuple_struct_pattern type: (identifier) @_k . [(identifier) @name (ref_pattern (identifier) @name) (mut_pattern (identifier) @name)] .) value: (_) @ty) @fact.local (#any-of? @_k "Some" "Ok"))
((let_declaration pattern: (tuple_struct_pattern type: (identifier) @_k . [(identifier) @name (ref_pattern (identifier) @name) (mut_pattern (identifier) @name)] .) value: (_) @ty) @fact.local (#any-of? @_k "Some" "Ok"))
((match_expression value: (_) @ty body: (match_block (match_arm pattern: (match_pattern (tuple_struct_pattern type: (identifier) @_k . [(identifier) @name (ref_pattern (identifier) @name) (mut_pattern (identifier) @name)] .))))) @fact.local (#any-of? @_k "Some" "Ok"))
((let_condition pattern: (tuple_struct_pattern type: (identifier) @_k . (tuple_struct_pattern type: (identifier) @_k2 . (identifier) @name .) .) value: (_) @ty) @fact.local (#eq? @_k "Ok") (#eq? @_k2 "Some"))
((match_expression value: (_) @ty body: (match_block (match_arm pattern: (match_pattern (tuple_struct_pattern type: (identifier) @_k . (tuple_struct_pattern type: (identifier) @_k2 . (identifier) @name .) .))))) @fact.local (#eq? @_k "Ok") (#eq? @_k2 "Some"))
; `let s = match e { Some(s) => s, None => … }` (`Ok(s) => s` too): `s` is what `e` holds.
((let_declaration pattern: (identifier) @name value: (match_expression value: (_) @ty body: (match_block (match_arm pattern: (match_pattern (tuple_struct_pattern type: (identifier) @_k . (identifier) @_v .)) value: (identifier) @_r)))) @fact.local (#any-of? @_k "Some" "Ok") (#eq? @_v @_r))
(field_declaration name: (field_identifier) @name type: (_) @ty) @fact.field
; A tuple struct's fields (`struct FindIter(automaton::FindIter<…>)`): named by
; position (`self.0.next()`), which the code gives them (`extract::sites::fact_of`).
(struct_item body: (ordered_field_declaration_list type: (_) @ty) @fact.field)
; An enum's tuple variants' fields: named `Variant.position` on the enum.
(enum_variant name: (identifier) @name body: (ordered_field_declaration_list type: (_) @ty) @fact.field)
; `Kind::Teddy(ref t) =>`, `if let Self::Teddy(t) = e`: `t` is the variant's first field.
(match_arm pattern: (match_pattern (tuple_struct_pattern type: (scoped_identifier) @ty . [(identifier) @name (ref_pattern (identifier) @name) (mut_pattern (identifier) @name)]))) @fact.variant
(let_condition pattern: (tuple_struct_pattern type: (scoped_identifier) @ty . [(identifier) @name (ref_pattern (identifier) @name) (mut_pattern (identifier) @name)])) @fact.variant
(function_item return_type: (_) @ty) @fact.returns
(function_signature_item return_type: (_) @ty) @fact.returns
; A tuple returned (`-> (V, V)`, `-> Result<(V, V), E>`), element by element; and a tuple a `let`
; takes apart (`let (a, b) = f();`), name by name.
(function_item return_type: (_) @ty) @fact.tuple_returns
(function_signature_item return_type: (_) @ty) @fact.tuple_returns
(let_declaration pattern: (tuple_pattern) value: (_) @ty) @fact.tuple_let
(type_parameter name: (type_identifier) @name bounds: (trait_bounds . (_) @ty)) @fact.bound
(where_predicate left: (type_identifier) @name bounds: (trait_bounds . (_) @ty)) @fact.bound
(type_item type: (_) @ty) @fact.alias
; An impl for a reference type: which impl a method call runs depends on it.
(impl_item type: (reference_type) @ty) @fact.impl_ref
; The first type argument of the trait an impl is of (`impl From<Vec<T>> for V`).
(impl_item trait: (generic_type type_arguments: (type_arguments . (_) @ty))) @fact.impl_arg
; The type arguments of an inherent impl's type (`impl ExactlyNDigits<2>`).
(impl_item !trait type: (generic_type type_arguments: (type_arguments) @ty)) @fact.impl_self

; A macro invocation's token tree: its arguments are parsed again as
; expressions for the calls written there (src/extract/rust.rs macro_args_only).
(macro_invocation (token_tree) @callee) @macro
; A macro invoked (`m!(…)`, `crate::m!(…)`): a call of the `macro_rules!`
; of that name, marked with its `!`.
(macro_invocation macro: (_) @callee) @invokes
