//! The shape check every client message passes before rmcp reads it, on stdio
//! ([`super::stdio_filter`]) and over HTTP ([`super::http`]) alike.
//!
//! rmcp reads a message as one typed enum: a request whose `params` is an array, a string or a
//! number fits no variant, so rmcp answers `-32600` without the request's id (over HTTP: 415),
//! and the client waits forever for its id. A `cursor` that is not a string is dropped with the
//! rest of the params, so a list answers page 1 as if none was given. Both are the client's
//! mistake and get `-32602` (invalid params) with the request's id here, before rmcp.
//!
//! Only the envelope is read: `params` is walked without being kept (except its `cursor`'s
//! type), so a 16 MiB `tools/call` costs one scan, not a second copy in memory.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use std::fmt;

/// JSON-RPC's code for input that could not be parsed.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for params of the wrong shape.
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one message from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Well-formed as far as this check goes: rmcp reads it.
    Forward,
    /// Answer it with this JSON-RPC error response (rmcp never sees it).
    Answer(Value),
    /// A notification with params of the wrong shape: JSON-RPC never answers a notification, so
    /// it is dropped (and logged).
    Drop,
}

/// Judges one message (a line on stdio, a POST body over HTTP).
pub fn check(message: &[u8]) -> Verdict {
    if let Err(e) = serde_json::from_slice::<IgnoredAny>(message) {
        return Verdict::Answer(error_response(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the message is not JSON ({e}); send one JSON-RPC message"),
            json!({ "length": message.len() }),
        ));
    }
    // A batch, a duplicate key or any other oddity: rmcp's own rules apply.
    let Ok(envelope) = serde_json::from_slice::<Envelope>(message) else {
        return Verdict::Forward;
    };
    // A response to one of the server's own requests carries no method.
    let Some(method) = envelope.method else {
        return Verdict::Forward;
    };
    let Some(problem) = envelope.params.and_then(|p| p.problem(&method)) else {
        return Verdict::Forward;
    };
    match envelope.id {
        None => {
            tracing::debug!(%problem, "MCP notification with bad params dropped");
            Verdict::Drop
        }
        Some(id) => Verdict::Answer(error_response(
            id,
            INVALID_PARAMS,
            problem,
            json!({ "method": crate::quote::shorten(&method) }),
        )),
    }
}

/// A JSON-RPC error response.
pub fn error_response(id: Value, code: i64, message: String, data: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message, "data": data },
    })
}

/// The parts of a JSON-RPC message this check looks at; every other key is skipped.
#[derive(Deserialize)]
struct Envelope {
    /// Present (even `null`) for a request, absent for a notification.
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Params>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// What `params` is: an object (with what its `cursor` is), or another JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Params {
    Object { cursor: Option<Kind> },
    Other(Kind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn named(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool => "a boolean",
            Self::Number => "a number",
            Self::String => "a string",
            Self::Array => "an array",
            Self::Object => "an object",
        }
    }
}

impl Params {
    /// What is wrong with these params for `method`, if anything. `null` params are read as
    /// none (rmcp does, and lax clients send them); a `null` cursor as no cursor.
    fn problem(self, method: &str) -> Option<String> {
        let method = crate::quote::shorten(method);
        match self {
            Self::Other(Kind::Null) => None,
            Self::Other(kind) => Some(format!(
                "the params of `{method}` must be an object (MCP gives every request's params as one), not {}",
                kind.named()
            )),
            Self::Object {
                cursor: None | Some(Kind::Null | Kind::String),
            } => None,
            Self::Object { cursor: Some(kind) } => Some(format!(
                "`params.cursor` of `{method}` must be a string (the `nextCursor` of the previous page), not {}",
                kind.named()
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON-RPC params")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Params, E> {
        Ok(Params::Other(Kind::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Params, E> {
        Ok(Params::Other(Kind::Null))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Params, E> {
        Ok(Params::Other(Kind::Bool))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Params, E> {
        Ok(Params::Other(Kind::Number))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Params, E> {
        Ok(Params::Other(Kind::Number))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Params, E> {
        Ok(Params::Other(Kind::Number))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Params, E> {
        Ok(Params::Other(Kind::String))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Params, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Params::Other(Kind::Array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut cursor = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "cursor" {
                cursor = Some(map.next_value::<KindOnly>()?.0);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Params::Object { cursor })
    }
}

/// The JSON type of a value, its content skipped.
struct KindOnly(Kind);

impl<'de> Deserialize<'de> for KindOnly {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(ParamsVisitor)? {
            Params::Other(kind) => Ok(Self(kind)),
            Params::Object { .. } => Ok(Self(Kind::Object)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(message: Value) -> Verdict {
        check(message.to_string().as_bytes())
    }

    #[test]
    fn non_object_params_are_invalid_params_with_the_id() {
        for (params, named) in [
            (json!([1, 2]), "an array"),
            (json!("x"), "a string"),
            (json!(5), "a number"),
            (json!(true), "a boolean"),
        ] {
            let message =
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params});
            let Verdict::Answer(answer) = verdict(message) else {
                panic!("{params} was forwarded");
            };
            assert_eq!(answer["id"], 7);
            assert_eq!(answer["error"]["code"], INVALID_PARAMS);
            let text = answer["error"]["message"].as_str().unwrap();
            assert!(text.contains(named), "{text}");
        }
        // The same from a notification is dropped, never answered.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]});
        assert_eq!(verdict(note), Verdict::Drop);
    }

    #[test]
    fn a_cursor_must_be_a_string() {
        for cursor in [json!(5), json!({}), json!([]), json!(false)] {
            let message = json!({"jsonrpc": "2.0", "id": "a", "method": "resources/list",
                "params": {"cursor": cursor}});
            let Verdict::Answer(answer) = verdict(message) else {
                panic!("{cursor} was forwarded");
            };
            assert_eq!(answer["id"], "a");
            assert_eq!(answer["error"]["code"], INVALID_PARAMS);
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("`params.cursor`")
            );
        }
        for fine in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "n1.61"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": null}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": null}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "x", "arguments": {"cursor": 5, "deep": [[{"a": 1}]]}}}),
            // A response to the server's own request.
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        ] {
            assert_eq!(verdict(fine.clone()), Verdict::Forward, "{fine}");
        }
    }

    #[test]
    fn a_huge_method_name_is_quoted_short() {
        let method = "m".repeat(1 << 20);
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": [1]});
        let Verdict::Answer(answer) = verdict(message) else {
            panic!("forwarded");
        };
        assert!(answer.to_string().len() < 2_000);
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        let Verdict::Answer(answer) = check(b"{\"id\": 1,") else {
            panic!("forwarded");
        };
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
        assert_eq!(answer["id"], Value::Null);
    }
}
