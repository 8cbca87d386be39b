//! What makes a POSTed body a message rmcp is given: one JSON-RPC 2.0 object,
//! without duplicate keys, whose id (if any) is a string or an integer, whose
//! params (if any) are an object, and that rmcp's own message type reads.
//! Anything else gets a JSON-RPC error here, with HTTP status 400: rmcp would
//! answer some of it with `415 text/plain` or `400` and a line of text, which
//! no JSON-RPC client can read.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

/// A message refused, as the JSON-RPC error to answer it with.
#[derive(Debug)]
pub struct Fault {
    /// The request's id when it had a valid one, else null.
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl Fault {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Fault {
        Fault {
            id,
            code,
            message: message.into(),
        }
    }

    /// The JSON-RPC error object answering it.
    pub fn body(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}})
    }
}

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The body as a message, or the fault to answer.
pub fn check(bytes: &[u8]) -> Result<Map<String, Value>, Fault> {
    let msg: Value = serde_json::from_slice(bytes).map_err(|e| {
        Fault::new(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the body is not JSON ({e})"),
        )
    })?;
    let Value::Object(msg) = msg else {
        return Err(Fault::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: the body must be one JSON-RPC 2.0 message, an object (batches are not part of MCP)",
        ));
    };
    if let Err(e) = duplicate_free(bytes) {
        return Err(Fault::new(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: {e}"),
        ));
    }
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Fault::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    let id = match msg.get("id") {
        None => Value::Null,
        Some(id) if valid_id(id) => id.clone(),
        Some(id) => {
            return Err(Fault::new(
                Value::Null,
                INVALID_REQUEST,
                format!("Invalid Request: an id must be a string or an integer, not {id}"),
            ));
        }
    };
    let method = msg.get("method");
    let is_reply = msg.contains_key("result") || msg.contains_key("error");
    match method {
        Some(Value::String(_)) => {}
        Some(_) => {
            return Err(Fault::new(
                id,
                INVALID_REQUEST,
                "Invalid Request: \"method\" must be a string",
            ));
        }
        None if is_reply && msg.contains_key("id") => {}
        None => {
            return Err(Fault::new(
                id,
                INVALID_REQUEST,
                "Invalid Request: a message needs a method (or, answering a request, an id and a result or error)",
            ));
        }
    }
    match msg.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(p) => {
            return Err(Fault::new(
                id,
                INVALID_PARAMS,
                format!("Invalid params: params must be an object, not {p}"),
            ));
        }
    }
    if method.and_then(Value::as_str) == Some("initialize") && !msg.contains_key("params") {
        return Err(Fault::new(
            id,
            INVALID_PARAMS,
            "Invalid params: initialize needs params (protocolVersion, capabilities, clientInfo)",
        ));
    }
    // What rmcp itself would fail to read (a known method with params of the
    // wrong shape) is refused here, in words the client can read. rmcp reads a
    // known method whose params do not fit as a custom one, then answers it
    // with a line of text: that is refused here too.
    let parsed =
        serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(Value::Object(msg.clone()));
    let misfit = match &parsed {
        Err(e) => Some(e.to_string()),
        Ok(m) => custom_but_known(m).map(|name| format!("its params do not fit `{name}`")),
    };
    if let Some(why) = misfit {
        let code = if method.is_some() {
            INVALID_PARAMS
        } else {
            INVALID_REQUEST
        };
        return Err(Fault::new(
            id,
            code,
            format!("Invalid params: the message does not fit its method ({why})"),
        ));
    }
    Ok(msg)
}

/// The methods MCP defines for a client to send: rmcp reads each of them as
/// its own type, and as a custom message only when its params do not fit.
const KNOWN: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// The method of a message rmcp read as custom although MCP defines it.
fn custom_but_known(m: &rmcp::model::ClientJsonRpcMessage) -> Option<&str> {
    use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage};
    let method = match m {
        JsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::CustomRequest(c) => c.method.as_str(),
            _ => return None,
        },
        JsonRpcMessage::Notification(n) => match &n.notification {
            ClientNotification::CustomNotification(c) => c.method.as_str(),
            _ => return None,
        },
        _ => return None,
    };
    KNOWN.contains(&method).then_some(method)
}

/// MCP's ids are strings or integers (never null: unlike JSON-RPC's).
fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => {
            n.is_i64() || n.is_u64() && n.as_u64().is_some_and(|u| u <= i64::MAX as u64)
        }
        _ => false,
    }
}

/// Whether no object in the JSON holds a key twice (serde_json keeps the last
/// one, so two readers of the same message could disagree on what it says).
fn duplicate_free(bytes: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    NoDuplicates.deserialize(&mut de)?;
    de.end()
}

/// Reads any JSON value, refusing an object with a key twice.
#[derive(Clone, Copy)]
struct NoDuplicates;

impl<'de> DeserializeSeed<'de> for NoDuplicates {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(A::Error::custom(format!(
                    "the key `{key}` appears twice in one object"
                )));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(body: &str) -> (Value, i64) {
        let f = check(body.as_bytes()).expect_err(body);
        (f.id, f.code)
    }

    #[test]
    fn every_malformed_message_is_a_fault_with_its_code() {
        for id in ["true", "1.5", "null", "[1]", "{}"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(fault(&body), (Value::Null, INVALID_REQUEST), "{body}");
        }
        assert_eq!(
            fault(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":5}"#),
            (json!(1), INVALID_PARAMS)
        );
        assert_eq!(
            fault(r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            fault(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"x":2}}}"#
            ),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            fault(r#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#),
            (json!("a"), INVALID_PARAMS)
        );
        assert_eq!(
            fault(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#),
            (json!(2), INVALID_PARAMS)
        );
        assert_eq!(
            fault(
                r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":5}}"#
            ),
            (json!(3), INVALID_PARAMS)
        );
        assert_eq!(fault("{"), (Value::Null, PARSE_ERROR));
        assert_eq!(fault("[]"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            fault(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            (Value::Null, INVALID_REQUEST)
        );
    }

    #[test]
    fn well_formed_messages_pass() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"locate_symbol","arguments":{"name":"a"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        ] {
            assert!(check(body.as_bytes()).is_ok(), "{body}");
        }
    }
}
