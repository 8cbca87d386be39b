; Definitions in Python. Functions directly inside a class become methods;
; decorators are part of the definition's range (see extract/python.rs).
(function_definition name: (identifier) @name) @definition.fn
(class_definition name: (identifier) @name) @definition.class
(module (expression_statement (assignment left: (identifier) @name)) @definition.var)
(module (type_alias_statement left: (type (identifier) @name)) @definition.type)
