//! Tool arguments: typed structs whose JSON Schema is derived from the same definition, so the
//! schema a client sees and the parser that checks a call can never disagree.

use super::ToolError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The JSON Schema of an argument struct, as MCP wants it: an object schema without `$schema` or
/// a `title`, with `additionalProperties: false` (argument structs use `deny_unknown_fields`).
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.entry("type").or_insert_with(|| Value::from("object"));
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    schema
}

/// Parse a call's arguments; a mismatch is the caller's error and says what was wrong.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    // Clients may send no arguments at all for a tool whose fields are all optional.
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    serde_json::from_value(args).map_err(|e| {
        ToolError::Invalid(format!(
            "invalid arguments for `{tool}`: {e}; see the tool's input schema"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Example {
        /// The path.
        path: String,
        #[serde(default)]
        limit: Option<u32>,
    }

    #[test]
    fn schemas_are_closed_objects() {
        let s = schema_of::<Example>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], serde_json::json!(["path"]));
        assert_eq!(s["properties"]["path"]["description"], "The path.");
        assert!(s.get("$schema").is_none());
    }

    #[test]
    fn bad_arguments_are_caller_errors() {
        let err = parse_args::<Example>("t", serde_json::json!({"path": 1})).unwrap_err();
        assert!(
            matches!(err, ToolError::Invalid(ref m) if m.contains("invalid type")),
            "{err}"
        );
        let err = parse_args::<Example>("t", serde_json::json!({"path": "a", "x": 1})).unwrap_err();
        assert!(err.to_string().contains("unknown field `x`"), "{err}");
        let ok = parse_args::<Example>("t", serde_json::json!({"path": "a", "limit": 3})).unwrap();
        assert_eq!((ok.path.as_str(), ok.limit), ("a", Some(3)));
        let err = parse_args::<Example>("t", Value::Null).unwrap_err();
        assert!(err.to_string().contains("missing field `path`"), "{err}");
    }
}
