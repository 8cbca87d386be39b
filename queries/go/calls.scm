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

(argument_list (identifier) @callee) @value
(argument_list (selector_expression) @callee) @value

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
