; Call and reference sites, and the facts the `typed` tier reads
; (src/extract/sites.rs turns each capture into a RawSite or a Fact).

(call function: (_) @callee) @call
; A decorator is called with the definition (`@traced def f` is `f =
; traced(f)`); like `@command()`'s call, the site is the decorated
; definition's (its range starts at its decorators).
(decorator [(identifier) (attribute)] @callee) @call
(class_definition superclasses: (argument_list [(identifier) (attribute)] @callee)) @extends
; A generic base: `class FuncParamType(ParamType[T])` extends `ParamType`.
(class_definition superclasses: (argument_list (subscript value: [(identifier) (attribute)] @callee))) @extends

(typed_parameter type: (_) @callee) @type
(typed_default_parameter type: (_) @callee) @type
(function_definition return_type: (_) @callee) @type
(assignment type: (_) @callee) @type

(argument_list (identifier) @callee) @value
; An attribute read where no call follows (`x = app.jinja_env`,
; `app.config["X"]`): a `value` reference when it is a `@property`.
(subscript value: (attribute) @callee) @value
(assignment right: (attribute) @callee) @value
(return_statement (attribute) @callee) @value
(comparison_operator (attribute) @callee) @value
; An attribute assigned (`app.debug = True`): a property's setter, if it is one.
(assignment left: (attribute) @callee) @writes
(augmented_assignment left: (attribute) @callee) @writes
; An object handed to a call, which a library may call back (`handed`).
(call arguments: (argument_list [(identifier) (attribute)] @callee)) @handed
(call arguments: (argument_list (keyword_argument value: [(identifier) (attribute)] @callee))) @handed
; `**options`: what the function stores in it (`options["loader"] = x`).
(call arguments: (argument_list (dictionary_splat (identifier) @callee))) @handed
(argument_list (attribute) @callee) @value
(keyword_argument value: [(identifier) (attribute)] @callee) @value
; A function or class named as a value where no call says so: returned,
; assigned, in a list, tuple or dict (a table of handlers); a class read from
; (`Chain.K`: capitalised receivers only, the rest are locals and modules).
; A local named so is dropped at extraction.
(return_statement (identifier) @callee) @value
(assignment right: (identifier) @callee) @value
(list (identifier) @callee) @value
(tuple (identifier) @callee) @value
(set (identifier) @callee) @value
(pair value: (identifier) @callee) @value
((attribute object: (identifier) @callee) @value (#match? @callee "^[A-Z]"))
; A parameter's default (`def make(cls=Chain)`), a branch of a conditional
; (`Chain if flag else Sub`), what `or` falls back to (`cls or Chain`), and
; what a lambda returns (`lambda: Chain`).
(default_parameter value: [(identifier) (attribute)] @callee) @value
(typed_default_parameter value: [(identifier) (attribute)] @callee) @value
(conditional_expression (identifier) @callee) @value
(boolean_operator operator: "or" right: (identifier) @callee) @value
(lambda body: [(identifier) (attribute)] @callee) @value

; `with e:` and `with e as x:` call `e`'s `__enter__` and `__exit__` (`async
; with`: `__aenter__` and `__aexit__`).
(with_statement (with_clause (with_item value: (as_pattern . [(call) (identifier) (attribute)] @callee)))) @enters
(with_statement (with_clause (with_item value: [(call) (identifier) (attribute)] @callee))) @enters
; `with e as x:`: `x` is what `e.__enter__()` returns.
(with_item value: (as_pattern . [(call) (identifier) (attribute)] @ty alias: (as_pattern_target (identifier) @name))) @fact.entered
; A pytest test's or fixture's parameter requests the fixture of its name,
; which pytest runs first (`def test_x(client)`, `def client(app)`).
((function_definition name: (identifier) @_fn parameters: (parameters [(identifier) @callee (typed_parameter (identifier) @callee)])) @requests (#match? @_fn "^test"))
((decorated_definition (decorator) @_d definition: (function_definition parameters: (parameters [(identifier) @callee (typed_parameter (identifier) @callee)])) @requests) (#match? @_d "fixture"))

(typed_parameter (identifier) @name type: (_) @ty) @fact.local
(typed_default_parameter name: (identifier) @name type: (_) @ty) @fact.local
(assignment left: (identifier) @name type: (_) @ty) @fact.local
(assignment left: (identifier) @name !type right: (_) @ty) @fact.local
; `multi = t.cast(Group, ctx.command)`: `multi` is a `Group` (a later match of
; the same assignment, so this fact is the one kept).
((assignment left: (identifier) @name right: (call function: [(identifier) @_f (attribute attribute: (identifier) @_f)] arguments: (argument_list . [(identifier) (attribute) (string)] @ty))) @fact.cast (#eq? @_f "cast"))
; `except ClickException as e:`: `e` is a `ClickException` (a tuple of
; classes says nothing one could call on).
(except_clause (as_pattern [(identifier) (attribute)] @ty alias: (as_pattern_target (identifier) @name))) @fact.caught
(assignment left: (attribute object: (identifier) @_self attribute: (identifier) @name) type: (_) @ty) @fact.field
(assignment left: (attribute object: (identifier) @_self attribute: (identifier) @name) !type right: (_) @ty) @fact.field
(function_definition return_type: (_) @ty) @fact.returns
(parameters (identifier) @name @ty) @fact.local
(default_parameter name: (identifier) @name @ty) @fact.local
(lambda_parameters (identifier) @name @ty) @fact.local
; A loop variable is an element of what it iterates (`for p in
; self.get_params(ctx)`, declared `-> list[Parameter]`), else of no known type
; (a name bound before, `a = attrib(a)`, says nothing of it). A
; comprehension's variable likewise, but where its element's type is not
; known the binding before holds (it lives in the comprehension only). Tuple
; targets are left out: a function's last binding of a name is the one read.
(for_statement left: (identifier) @name right: (_) @ty) @fact.iterates
(for_in_clause left: (identifier) @name right: (_) @ty) @fact.comprehends
; A `@property` is read as a field of its result (`def hole(self) -> Circle`,
; or without a declared result what its body returns first).
((class_definition body: (block (decorated_definition (decorator (identifier) @_d) definition: (function_definition name: (identifier) @name return_type: (_) @ty)) @fact.field)) (#eq? @_d "property"))
((class_definition body: (block (decorated_definition (decorator (identifier) @_d) definition: (function_definition name: (identifier) @name !return_type body: (block (return_statement (_) @ty)))) @fact.getter)) (#eq? @_d "property"))
; An annotated class attribute (`app: Flask`, a dataclass field): a field of
; the class, as `self.app = …` would be.
(class_definition body: (block (expression_statement (assignment left: (identifier) @name type: (_) @ty) @fact.field)))
; An unannotated class attribute is what it is assigned (`serializer =
; session_serializer`, read as `self.serializer`).
(class_definition body: (block (expression_statement (assignment left: (identifier) @name !type right: (_) @ty) @fact.field)))
; What a function without a return annotation returns (`return CliRunner()`,
; `return app`) and what a fixture yields: read for pytest fixtures and calls
; of the function (`resolve/calls.rs`, `returns`, `fixture_type`).
(function_definition !return_type body: (block (return_statement (_) @ty))) @fact.returns_value
(function_definition body: (block (expression_statement (yield (_) @ty)))) @fact.yields
; A decorator of a function or class (`@pytest.fixture`, `@pytest.fixture(…)`):
; the decorated definition's, whose range starts at its decorators.
(decorator [(identifier) (attribute)] @ty) @fact.decorator
(decorator (call function: [(identifier) (attribute)] @ty)) @fact.decorator
