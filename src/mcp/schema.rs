//! Tool schemas that every client can read. schemars writes an `Option<T>` as
//! `"type": ["T", "null"]`, a free JSON value as a bare `true`, and Rust integer
//! widths as `format`s (`uint64`, `double`) that JSON Schema does not define.
//! All legal, but a client that maps schemas onto a one-`type` dialect (the
//! OpenAPI subset of some model providers) may reject the tool, and the MCP
//! Inspector's `--strict` check flags each. Rewritten here, meaning kept:
//! `{"anyOf": [{"type": "T", …}, {"type": "null"}]}`, any value spelt out as
//! an `anyOf` of the JSON types, and only the standard formats left.

use serde_json::{Map, Value, json};

/// The formats JSON Schema 2020-12 defines; schemars adds Rust's number widths.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keys that describe a property rather than constrain its value: they stay
/// beside an `anyOf`, the rest go into its non-null branch.
const ANNOTATIONS: &[&str] = &["title", "description", "default", "examples", "deprecated"];

/// Subschemas found under these keys are schemas; under any other key (say
/// `properties`' names, `enum` values) the walk looks one level down only
/// where a map of schemas is expected.
const SCHEMA_MAPS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMAS: &[&str] = &["items", "additionalProperties", "not", "contains"];

/// Rewrites a whole schema in place.
pub fn make_portable(schema: &mut Map<String, Value>) {
    portable_object(schema);
}

fn portable(schema: &mut Value) {
    match schema {
        // `true` (any value) spelt out; `false` (nothing) is left alone.
        Value::Bool(true) => *schema = any_value(),
        Value::Object(o) => portable_object(o),
        _ => {}
    }
}

fn portable_object(o: &mut Map<String, Value>) {
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(m)) = o.get_mut(*key) {
            m.values_mut().for_each(portable);
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(list)) = o.get_mut(*key) {
            list.iter_mut().for_each(portable);
        }
    }
    for key in SCHEMAS {
        if let Some(s) = o.get_mut(*key) {
            // `additionalProperties: true` is the default meaning, not a
            // schema position a client maps: left as it is.
            if *key == "additionalProperties" && s.is_boolean() {
                continue;
            }
            portable(s);
        }
    }
    if let Some(Value::String(f)) = o.get("format")
        && !STANDARD_FORMATS.contains(&f.as_str())
    {
        o.remove("format");
    }
    split_nullable(o);
}

/// `"type": ["T", "null"]` (or several types) becomes an `anyOf` with one
/// type per branch; the value's constraints go with the non-null type.
fn split_nullable(o: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = o.get("type") else {
        return;
    };
    let types: Vec<Value> = types.clone();
    o.remove("type");
    let rest: Map<String, Value> = std::mem::take(o);
    let mut constraints = Map::new();
    for (k, v) in rest {
        if ANNOTATIONS.contains(&k.as_str()) {
            o.insert(k, v);
        } else {
            constraints.insert(k, v);
        }
    }
    let branches: Vec<Value> = types
        .into_iter()
        .map(|t| {
            let mut b = Map::new();
            if t != "null" {
                b.extend(constraints.clone());
            }
            b.insert("type".into(), t);
            Value::Object(b)
        })
        .collect();
    o.insert("anyOf".into(), Value::Array(branches));
}

/// Widens an answer's output schema to admit the contract's error envelope
/// too: a tool error is `{"error": {code, message, data}, "metadata": …}` in
/// `structuredContent` like an answer, and a client that checks structured
/// content against `outputSchema` (the TypeScript SDK does, errors included)
/// would otherwise throw the error away and report a schema mismatch. The
/// answer's schema becomes one branch of an `anyOf`, the error's (`E`) the
/// other (the answer's definitions stay at the top, where its `$ref`s point).
pub fn or_error<E: schemars::JsonSchema>(schema: &mut Map<String, Value>) {
    // Inlined: its definitions' names (`Metadata`) would clash with the
    // answer's, which may mean another type by them.
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let mut error = match settings
        .into_generator()
        .into_root_schema_for::<E>()
        .to_value()
    {
        Value::Object(o) => o,
        _ => return,
    };
    let defs = schema.remove("$defs");
    for side in [&mut *schema, &mut error] {
        side.remove("$schema");
        side.remove("title");
    }
    let answer = std::mem::take(schema);
    schema.insert("type".into(), json!("object"));
    schema.insert(
        "anyOf".into(),
        json!([Value::Object(answer), Value::Object(error)]),
    );
    if let Some(defs) = defs {
        schema.insert("$defs".into(), defs);
    }
}

/// Any JSON value, one type per branch.
fn any_value() -> Value {
    json!({"anyOf": [
        {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        {"type": "object"}, {"type": "array"}, {"type": "null"}
    ]})
}

#[cfg(test)]
mod tests {
    use super::make_portable;
    use serde_json::{Value, json};

    fn rewritten(v: Value) -> Value {
        let Value::Object(mut o) = v else {
            panic!("object")
        };
        make_portable(&mut o);
        Value::Object(o)
    }

    #[test]
    fn nullable_types_become_any_of_and_keep_their_constraints() {
        let got = rewritten(json!({"type": "object", "properties": {
            "limit": {"description": "Max results.", "type": ["integer", "null"], "format": "int64", "minimum": 1},
            "rows": {"type": "array", "items": {"type": "array", "items": true}},
            "name": {"type": "string", "format": "uri"},
        }}));
        assert_eq!(
            got["properties"]["limit"],
            json!({"description": "Max results.", "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]})
        );
        assert_eq!(
            got["properties"]["rows"]["items"]["items"]["anyOf"]
                .as_array()
                .map(Vec::len),
            Some(6)
        );
        assert_eq!(
            got["properties"]["name"],
            json!({"type": "string", "format": "uri"})
        );
        // Nothing is left that a one-type dialect cannot read.
        let text = got.to_string();
        assert!(
            !text.contains("\"null\"]") && !text.contains(":true"),
            "{text}"
        );
    }

    #[test]
    fn an_output_schema_admits_the_error_envelope() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Failure {
            error: String,
        }
        let Value::Object(mut o) = json!({"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]})
        else {
            panic!("object")
        };
        super::or_error::<Failure>(&mut o);
        let got = Value::Object(o);
        assert_eq!(got["type"], "object");
        assert_eq!(got["anyOf"][0]["required"], json!(["rows"]));
        assert_eq!(got["anyOf"][1]["required"], json!(["error"]));
        assert_eq!(got["anyOf"][1]["properties"]["error"]["type"], "string");
    }
}
