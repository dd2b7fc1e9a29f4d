//! How a server's tools become vaultchat tools: `NAME__tool` names the providers accept, input
//! schemas the providers accept, and annotations read as hints.

use crate::tools::{Annotations, Tier, ToolSpec};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The longest tool name the providers accept (Anthropic and OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;

/// `SERVER__tool`: every character outside `[A-Za-z0-9_-]` becomes `_` (MCP names may also hold
/// `.` and, from sloppy servers, anything), cut to [`MAX_TOOL_NAME`] characters.
pub fn qualified_name(server: &str, tool: &str) -> String {
    let clean = |c: char| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    };
    let tool = if tool.is_empty() { "_" } else { tool };
    let name: String = server
        .chars()
        .map(clean)
        .chain("__".chars())
        .chain(tool.chars().map(clean))
        .take(MAX_TOOL_NAME)
        .collect();
    name
}

/// A server's input schema as the providers take it: an object schema at the top, without the
/// `$schema` dialect marker (the TS SDK writes draft-07, rmcp 2020-12; providers want neither).
/// A schema without a `type` gets `"type": "object"` (MCP arguments are always an object);
/// one whose type is not an object cannot be called with MCP arguments and is refused.
pub fn provider_schema(raw: &Map<String, Value>) -> Result<Value, String> {
    let mut schema = raw.clone();
    schema.remove("$schema");
    match schema.get("type") {
        None => {
            schema.insert("type".into(), Value::String("object".into()));
        }
        Some(Value::String(t)) if t == "object" => {}
        // `["object", "null"]`: the arguments are an object either way.
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            schema.insert("type".into(), Value::String("object".into()));
        }
        Some(other) => {
            return Err(format!(
                "its input schema has type {other}, but MCP tool arguments are always an object"
            ));
        }
    }
    Ok(Value::Object(schema))
}

/// Annotations from the server's hints, with MCP's defaults for the ones it leaves out
/// (`destructiveHint` and `openWorldHint` default to true). They are hints: the permission
/// cascade does not let them skip a question (see `permission::decide`).
pub fn annotations_of(hints: Option<&rmcp::model::ToolAnnotations>) -> Annotations {
    let read_only = hints.and_then(|h| h.read_only_hint).unwrap_or(false);
    Annotations {
        read_only_hint: read_only,
        // Meaningful only for tools that write.
        destructive_hint: !read_only && hints.and_then(|h| h.destructive_hint).unwrap_or(true),
        idempotent_hint: hints.and_then(|h| h.idempotent_hint).unwrap_or(false),
        open_world_hint: hints.and_then(|h| h.open_world_hint).unwrap_or(true),
    }
}

/// One server tool as vaultchat will offer it.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    pub spec: ToolSpec,
    /// The name the server knows it by.
    pub remote: String,
}

/// The specs of `server`'s tools, in the server's order. A tool whose name is already `taken`
/// (by an earlier tool after sanitising, or by another server's) is left out with a log line;
/// so is one whose schema cannot take MCP arguments. `taken` gains the names given out.
pub fn offered_tools(
    server: &str,
    tools: &[rmcp::model::Tool],
    taken: &mut HashSet<String>,
) -> Vec<Offered> {
    let mut offered = Vec::new();
    for tool in tools {
        let remote = tool.name.to_string();
        let name = qualified_name(server, &remote);
        if taken.contains(&name) {
            tracing::warn!(
                server,
                tool = %remote,
                %name,
                "MCP tool left out: another tool already has this name after sanitising"
            );
            continue;
        }
        let input_schema = match provider_schema(&tool.input_schema) {
            Ok(schema) => schema,
            Err(problem) => {
                tracing::warn!(server, tool = %remote, "MCP tool left out: {problem}");
                continue;
            }
        };
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
            .unwrap_or_else(|| remote.clone());
        let description = tool
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("`{remote}` from the MCP server `{server}`."));
        taken.insert(name.clone());
        offered.push(Offered {
            spec: ToolSpec {
                name,
                title,
                description,
                input_schema,
                annotations: annotations_of(tool.annotations.as_ref()),
                tier: Tier::Plugin,
            },
            remote,
        });
    }
    offered
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(value: Value) -> rmcp::model::Tool {
        serde_json::from_value(value).unwrap()
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn names_are_prefixed_and_sanitised() {
        assert_eq!(qualified_name("fs", "read_text_file"), "fs__read_text_file");
        assert_eq!(qualified_name("gh", "issues.list"), "gh__issues_list");
        assert_eq!(qualified_name("x", "héllo wörld/1"), "x__h_llo_w_rld_1");
        assert_eq!(qualified_name("x", ""), "x___");
    }

    #[test]
    fn long_names_are_cut_to_64_characters() {
        let name = qualified_name("server", &"t".repeat(100));
        assert_eq!(name.len(), MAX_TOOL_NAME);
        assert!(name.starts_with("server__ttt"));
        let short = qualified_name("s", &"t".repeat(62));
        assert_eq!(short.len(), 64, "exactly 64 is kept whole");
    }

    #[test]
    fn colliding_names_keep_the_first_tool() {
        let tools = [
            tool(json!({"name": "a.b", "inputSchema": {"type": "object"}})),
            tool(
                json!({"name": "a_b", "inputSchema": {"type": "object"}, "description": "second"}),
            ),
            tool(json!({"name": "c", "inputSchema": {"type": "object"}})),
        ];
        let mut taken = HashSet::new();
        let offered = offered_tools("s", &tools, &mut taken);
        let names: Vec<(&str, &str)> = offered
            .iter()
            .map(|o| (o.spec.name.as_str(), o.remote.as_str()))
            .collect();
        assert_eq!(names, [("s__a_b", "a.b"), ("s__c", "c")]);
        // Another server whose prefix makes the same name (`s__a` + `b` vs `s` + `a__b`…).
        let more = [tool(
            json!({"name": "c", "inputSchema": {"type": "object"}}),
        )];
        let offered = offered_tools("s", &more, &mut taken);
        assert!(offered.is_empty());
        assert!(taken.contains("s__c"));
    }

    #[test]
    fn schemas_become_object_schemas_without_the_dialect() {
        let schema = provider_schema(&object(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        })))
        .unwrap();
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
        );
        assert_eq!(
            provider_schema(&object(json!({}))).unwrap(),
            json!({"type": "object"})
        );
        assert_eq!(
            provider_schema(&object(
                json!({"type": ["object", "null"], "properties": {}})
            ))
            .unwrap(),
            json!({"type": "object", "properties": {}})
        );
        let err = provider_schema(&object(json!({"type": "string"}))).unwrap_err();
        assert!(err.contains("type \"string\""), "{err}");
    }

    #[test]
    fn a_tool_with_a_non_object_schema_is_left_out() {
        let tools = [
            tool(json!({"name": "bad", "inputSchema": {"type": "array", "items": {}}})),
            tool(json!({"name": "good", "inputSchema": {"type": "object"}})),
        ];
        let offered = offered_tools("s", &tools, &mut HashSet::new());
        assert_eq!(offered.len(), 1);
        assert_eq!(offered[0].spec.name, "s__good");
    }

    #[test]
    fn specs_carry_the_servers_words_and_hints() {
        let tools = [tool(json!({
            "name": "read_text_file",
            "title": "Read a text file",
            "description": "Read the complete contents of a file.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }))];
        let offered = offered_tools("fs", &tools, &mut HashSet::new());
        let spec = &offered[0].spec;
        assert_eq!(spec.name, "fs__read_text_file");
        assert_eq!(spec.title, "Read a text file");
        assert_eq!(spec.description, "Read the complete contents of a file.");
        assert_eq!(spec.tier, Tier::Plugin);
        assert_eq!(
            spec.annotations,
            Annotations {
                read_only_hint: true,
                destructive_hint: false,
                idempotent_hint: false,
                open_world_hint: false,
            }
        );
    }

    #[test]
    fn missing_hints_take_the_mcp_defaults() {
        assert_eq!(
            annotations_of(None),
            Annotations {
                read_only_hint: false,
                destructive_hint: true,
                idempotent_hint: false,
                open_world_hint: true,
            }
        );
        let tools = [tool(
            json!({"name": "go", "inputSchema": {"type": "object"}}),
        )];
        let offered = offered_tools("s", &tools, &mut HashSet::new());
        assert_eq!(offered[0].spec.title, "go");
        assert_eq!(offered[0].spec.description, "`go` from the MCP server `s`.");
    }
}
