//! The connections and environments families: list_connections, get_connection,
//! list_environments, get_environment_variables.
//!
//! Both read TOML files in the vault (`connections.toml` at the root, `envs/NAME.toml`) that hold
//! credentials next to harmless settings. The point of these tools is to tell a model which
//! settings exist without ever handing it a secret, so every value leaves through [`redact`]: the
//! values of keys under a `secrets` table and of keys whose name looks secret are replaced by
//! [`REDACTED`], and credentials embedded in URLs are cut out. Error messages name files, lines and
//! keys, never values.

use super::{Body, Workspace, internal, tool};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::Access;
use crate::vault::contained::ContainedError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// What every secret value is replaced with.
pub(super) const REDACTED: &str = "[redacted]";

/// The connections file, at the vault root.
pub(super) const CONNECTIONS_FILE: &str = "connections.toml";

/// The folder of environment files (`envs/dev.toml` is the environment `dev`).
pub(super) const ENVS_DIR: &str = "envs";

/// Config files are small; a bigger one is a mistake (or an attack on memory), not a config.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_connections",
            "List connections",
            "List the named connections (databases, HTTP APIs) defined in `connections.toml` at the vault \
             root as `[connections.NAME]` tables: each with its `kind` and the names of its settings. \
             Secret values (passwords, tokens, keys, anything under `[secrets]`) are never shown; the \
             `redacted` array lists which keys were hidden. Use get_connection for one connection's settings.",
            Annotations::READ_ONLY,
            Body::Read(list_connections),
        ),
        tool(
            ws,
            "get_connection",
            "Get a connection",
            "The settings of one connection from `connections.toml` (`name` as in `[connections.NAME]`), \
             e.g. host, port, database, user. Secret values are replaced by \"[redacted]\" and listed in \
             `redacted`; they cannot be revealed by any tool. An unknown name fails with the list of known names.",
            Annotations::READ_ONLY,
            Body::Read(get_connection),
        ),
        tool(
            ws,
            "list_environments",
            "List environments",
            "List the environments of the vault: the files `envs/NAME.toml` that code blocks refer to \
             with `env=NAME`, each with the names of its variables (values are not listed; secret ones are \
             never shown by any tool).",
            Annotations::READ_ONLY,
            Body::Read(list_environments),
        ),
        tool(
            ws,
            "get_environment_variables",
            "Get environment variables",
            "The variables of one environment (`name` such as `dev` for `envs/dev.toml`) with their values, \
             except that secret values (under `[secrets]`, or named like password/token/key) are replaced by \
             \"[redacted]\" and listed in `redacted`. An unknown name fails with the list of known environments.",
            Annotations::READ_ONLY,
            Body::Read(get_environment_variables),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Reading and redacting

/// A config file read and parsed through the guard.
enum ConfigFile {
    Missing,
    Parsed(toml::Table),
}

/// Read and parse a vault-relative TOML file. A syntax error is the caller's to fix and names the
/// file, line and column, but never quotes the line: it may hold a secret.
fn read_toml(ws: &Workspace, rel: &str) -> Result<ConfigFile, ToolError> {
    let path = ws.resolve(rel, Access::Read)?;
    // Opened through the vault root's handle, never through a link, like notes.
    let mut file = match crate::vault::note_io::open_file(&path) {
        Ok(file) => file,
        Err(crate::vault::note_io::NoteError::NotFound { .. }) => return Ok(ConfigFile::Missing),
        Err(crate::vault::note_io::NoteError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::InvalidInput =>
        {
            return Err(ToolError::Invalid(format!(
                "`{rel}` is not a file; it should be a TOML file"
            )));
        }
        Err(e) => return Err(internal(format!("cannot read `{rel}`: {e}"))),
    };
    let meta = file
        .metadata()
        .map_err(|e| internal(format!("cannot read `{rel}`: {e}")))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ToolError::Invalid(format!(
            "`{rel}` is {} bytes, more than the {MAX_CONFIG_BYTES} bytes a config file may have",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    // Never past the limit, even when the file grows after the size was checked.
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, MAX_CONFIG_BYTES + 1),
        &mut bytes,
    )
    .map_err(|e| internal(format!("cannot read `{rel}`: {e}")))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ToolError::Invalid(format!(
            "`{rel}` is more than the {MAX_CONFIG_BYTES} bytes a config file may have"
        )));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        ToolError::Invalid(format!(
            "`{rel}` is not UTF-8 text (first invalid byte at offset {}); save it as UTF-8",
            e.valid_up_to()
        ))
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match toml::from_str::<toml::Table>(text) {
        Ok(table) => Ok(ConfigFile::Parsed(table)),
        Err(e) => Err(ToolError::Invalid(syntax_error(rel, text, &e))),
    }
}

/// `file:line:column: message`, built by hand because the error's own `Display` prints the
/// offending source line, which may be `password = "..."`.
fn syntax_error(rel: &str, text: &str, e: &toml::de::Error) -> String {
    let position = e
        .span()
        .map(|span| {
            let upto = &text[..span.start.min(text.len())];
            let line = upto.matches('\n').count() + 1;
            let column = upto.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}")
        })
        .unwrap_or_else(|| "an unknown position".to_string());
    // The parser's messages describe the grammar (`expected '='`); only the first line is kept,
    // since later lines can list what was found.
    let message = e.message().lines().next().unwrap_or("invalid TOML").trim();
    format!("`{rel}` is not valid TOML: {message} at {position}; fix the file and try again")
}

/// Whether a key's name says its value is a secret. Separators are dropped first so `api-key`,
/// `apiKey` and `API_KEY` all match `apikey`.
pub(super) fn is_secret_key(key: &str) -> bool {
    const CONTAINS: &[&str] = &[
        // "pass" covers password, passwd, passphrase, db_pass, pass_word…
        "pass",
        "secret",
        "token",
        "apikey",
        "accesskey",
        "privatekey",
        "credential",
        "auth",
        "bearer",
        "session",
        "cookie",
    ];
    // Any kind of key (ssh_key, encryption_key, signing_key…) and short password names.
    const ENDS_WITH: &[&str] = &["key", "pw", "pwd", "pin", "otp"];
    let squashed: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    CONTAINS.iter().any(|p| squashed.contains(p)) || ENDS_WITH.iter().any(|e| squashed.ends_with(e))
}

/// Whether a key names a table of secrets whose keys (but not values) may be shown.
fn is_secrets_table_name(key: &str) -> bool {
    key.eq_ignore_ascii_case("secrets") || key.eq_ignore_ascii_case("secret")
}

fn join_key(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// A TOML value as JSON with every secret replaced; the dotted keys of what was hidden are added to
/// `redacted`. `in_secrets` is true under a `[secrets]` table, where every value is hidden but the
/// structure of nested tables (their key names) stays visible.
pub(super) fn redact(
    value: &toml::Value,
    at: &str,
    in_secrets: bool,
    redacted: &mut Vec<String>,
) -> Value {
    match value {
        toml::Value::Table(table) => redact_table(table, at, in_secrets, redacted),
        _ if in_secrets => {
            redacted.push(at.to_string());
            Value::from(REDACTED)
        }
        toml::Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| redact(item, &format!("{at}[{i}]"), false, redacted))
                .collect(),
        ),
        toml::Value::String(s) => match redact_in_string(s) {
            Some(cleaned) => {
                redacted.push(at.to_string());
                Value::from(cleaned)
            }
            None => Value::from(s.as_str()),
        },
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
    }
}

pub(super) fn redact_table(
    table: &toml::Table,
    at: &str,
    in_secrets: bool,
    redacted: &mut Vec<String>,
) -> Value {
    let mut out = Map::new();
    for (key, value) in table {
        let here = join_key(at, key);
        let shown = if !in_secrets && is_secrets_table_name(key) && value.is_table() {
            redact(value, &here, true, redacted)
        } else if !in_secrets && is_secret_key(key) {
            // The whole value, arrays and inline tables included: a secret split into parts is
            // still a secret.
            redacted.push(here);
            Value::from(REDACTED)
        } else {
            redact(value, &here, in_secrets, redacted)
        };
        out.insert(key.clone(), shown);
    }
    Value::Object(out)
}

/// Credentials embedded in a string that is not itself secret: the password of a URL's
/// `user:password@` and the values of secret-named query parameters (`?token=...`). `None` when
/// there is nothing to hide.
fn redact_in_string(s: &str) -> Option<String> {
    // Connection strings (`Server=db;User Id=app;Password=…;`): a secret-named `key=value` pair
    // anywhere in the text hides the whole value, since its boundaries vary by driver.
    let lower = s.to_ascii_lowercase();
    if [
        "password=",
        "pwd=",
        "passwd=",
        "secret=",
        "token=",
        "apikey=",
        "api_key=",
    ]
    .iter()
    .any(|p| lower.contains(p))
        && !s.contains("://")
    {
        return Some(REDACTED.to_string());
    }
    let scheme_end = s.find("://")?;
    let rest_start = scheme_end + 3;
    let mut out = s.to_string();
    let mut changed = false;
    let rest = &s[rest_start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if let Some(at) = authority.rfind('@')
        && let Some(colon) = authority[..at].find(':')
    {
        let from = rest_start + colon + 1;
        let to = rest_start + at;
        out.replace_range(from..to, REDACTED);
        changed = true;
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let (query, fragment) = match query.find('#') {
            Some(h) => query.split_at(h),
            None => (query, ""),
        };
        let mut query_changed = false;
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if is_secret_key(name) && !value.is_empty() => {
                    query_changed = true;
                    format!("{name}={REDACTED}")
                }
                _ => pair.to_string(),
            })
            .collect();
        if query_changed {
            out = format!("{head}{}{fragment}", params.join("&"));
            changed = true;
        }
    }
    changed.then_some(out)
}

/// The dotted names of the leaves of a redacted value (tables are walked, arrays are leaves).
fn leaf_keys(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                leaf_keys(v, &join_key(at, k), out);
            }
        }
        _ => out.push(at.to_string()),
    }
}

/// The TOML type of a value, for messages that must not show the value itself.
fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a number",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

// ---------------------------------------------------------------------------------------------
// Connections

/// The `[connections]` table of `connections.toml`; `None` when the file does not exist.
fn connections_table(ws: &Workspace) -> Result<Option<toml::Table>, ToolError> {
    let mut table = match read_toml(ws, CONNECTIONS_FILE)? {
        ConfigFile::Missing => return Ok(None),
        ConfigFile::Parsed(table) => table,
    };
    match table.remove("connections") {
        None => Ok(Some(toml::Table::new())),
        Some(toml::Value::Table(connections)) => Ok(Some(connections)),
        Some(other) => Err(ToolError::Invalid(format!(
            "`connections` in `{CONNECTIONS_FILE}` is {}, not a table; define each connection as `[connections.NAME]`",
            type_name(&other)
        ))),
    }
}

/// Whether a connection named `name` exists (for block settings), or why that is unknown.
pub(super) fn connection_exists(ws: &Workspace, name: &str) -> Result<bool, ToolError> {
    Ok(connections_table(ws)?.is_some_and(|t| t.contains_key(name)))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListConnectionsArgs {}

#[derive(Serialize)]
struct ListedConnection {
    name: String,
    /// `kind` (or `type`) when it is a plain string.
    kind: Option<String>,
    /// The dotted names of its settings.
    settings: Vec<String>,
}

fn list_connections(ws: &Workspace, _args: ListConnectionsArgs) -> Result<ToolOutput, ToolError> {
    let Some(connections) = connections_table(ws)? else {
        return ToolOutput::json(json!({
            "file": CONNECTIONS_FILE,
            "exists": false,
            "connections": [],
            "redacted": [],
            "note": format!("the vault has no `{CONNECTIONS_FILE}` at its root, so no connections are defined"),
        }));
    };
    let mut redacted = Vec::new();
    let mut listed = Vec::new();
    for (name, value) in &connections {
        let at = format!("connections.{name}");
        let shown = redact(value, &at, false, &mut redacted);
        let mut settings = Vec::new();
        leaf_keys(&shown, "", &mut settings);
        // A secret-looking kind is hidden like any other value, so only show what survived redaction.
        let kind = ["kind", "type"].iter().find_map(|k| {
            shown
                .get(*k)
                .and_then(Value::as_str)
                .filter(|s| *s != REDACTED)
                .map(str::to_string)
        });
        listed.push(ListedConnection {
            name: name.clone(),
            kind,
            settings,
        });
    }
    ToolOutput::json(json!({
        "file": CONNECTIONS_FILE,
        "exists": true,
        "connections": listed,
        "redacted": redacted,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetConnectionArgs {
    /// The connection's name, as in `[connections.NAME]` (list_connections shows them).
    name: String,
}

fn get_connection(ws: &Workspace, args: GetConnectionArgs) -> Result<ToolOutput, ToolError> {
    let connections = connections_table(ws)?.ok_or_else(|| {
        ToolError::Invalid(format!(
            "the vault has no `{CONNECTIONS_FILE}` at its root, so there is no connection `{}`",
            args.name
        ))
    })?;
    let (name, value) = connections
        .get_key_value(args.name.as_str())
        .or_else(|| {
            // A unique case-insensitive match is what the caller meant (`Notes-DB` for `notes-db`).
            let mut matches = connections
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(&args.name));
            match (matches.next(), matches.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        })
        .ok_or_else(|| {
            ToolError::Invalid(format!(
                "there is no connection `{}` in `{CONNECTIONS_FILE}`; known connections: {}",
                args.name,
                known(connections.keys())
            ))
        })?;
    let at = format!("connections.{name}");
    let mut redacted = Vec::new();
    let settings = match value {
        toml::Value::Table(_) => redact(value, &at, false, &mut redacted),
        other => {
            return Err(ToolError::Invalid(format!(
                "`{at}` in `{CONNECTIONS_FILE}` is {}, not a table of settings; write it as `[connections.{name}]`",
                type_name(other)
            )));
        }
    };
    ToolOutput::json(json!({
        "name": name,
        "file": CONNECTIONS_FILE,
        "settings": settings,
        "redacted": redacted,
    }))
}

fn known<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<&str> = names.map(String::as_str).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

// ---------------------------------------------------------------------------------------------
// Environments

/// The vault-relative file of environment `name` (`dev`, `dev.toml` or `envs/dev.toml`). Only files
/// directly in `envs/` are environments.
pub(super) fn env_file(name: &str) -> Result<String, ToolError> {
    let trimmed = name.trim();
    let in_dir = trimmed.strip_prefix("envs/").unwrap_or(trimmed);
    let bare = in_dir.strip_suffix(".toml").unwrap_or(in_dir);
    if bare.is_empty() || bare.starts_with('.') || bare.contains(['/', '\\', '\0']) {
        return Err(ToolError::Invalid(format!(
            "`{name}` is not an environment name: give the name of a file in `{ENVS_DIR}/` without `.toml`, like `dev`"
        )));
    }
    Ok(format!("{ENVS_DIR}/{bare}.toml"))
}

/// The names of the environments (files `envs/*.toml`), sorted.
fn environment_names(ws: &Workspace) -> Result<Option<Vec<String>>, ToolError> {
    let dir = ws.resolve(ENVS_DIR, Access::Read)?;
    // Listed through the vault root's handle, never through a link (like every read).
    let listing = dir.open_parent(false).and_then(|(parent, name)| {
        parent
            .open_folder(name, ENVS_DIR)
            .and_then(|folder| Ok(folder.entries()?))
    });
    let entries = match listing {
        Ok(entries) => entries,
        Err(ContainedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // A file (or a link) where the folder should be: no environments folder.
        Err(ContainedError::LinkAppeared { .. }) => return Ok(None),
        Err(e) => return Err(internal(format!("cannot list `{ENVS_DIR}/`: {e}"))),
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .filter_map(|(name, _)| name.ok())
        .filter(|name| !name.starts_with('.'))
        .filter_map(|name| name.strip_suffix(".toml").map(str::to_string))
        .filter(|stem| !stem.is_empty())
        .collect();
    names.sort_unstable();
    Ok(Some(names))
}

/// Whether environment `name` exists (for block settings).
pub(super) fn environment_exists(ws: &Workspace, name: &str) -> Result<(String, bool), ToolError> {
    let rel = env_file(name)?;
    let path = ws.resolve(&rel, Access::Read)?;
    Ok((path.rel().to_string(), path.abs().is_file()))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListEnvironmentsArgs {}

fn list_environments(ws: &Workspace, _args: ListEnvironmentsArgs) -> Result<ToolOutput, ToolError> {
    let Some(names) = environment_names(ws)? else {
        return ToolOutput::json(json!({
            "environments": [],
            "redacted": [],
            "note": format!("the vault has no `{ENVS_DIR}/` folder, so no environments are defined"),
        }));
    };
    let mut redacted = Vec::new();
    let mut listed = Vec::new();
    for name in names {
        let rel = format!("{ENVS_DIR}/{name}.toml");
        // One broken file must not hide the others: its error is reported in its own entry.
        match read_toml(ws, &rel) {
            Ok(ConfigFile::Parsed(table)) => {
                let mut mine = Vec::new();
                let shown = redact_table(&table, "", false, &mut mine);
                let mut variables = Vec::new();
                leaf_keys(&shown, "", &mut variables);
                redacted.extend(mine.iter().map(|k| format!("{rel}:{k}")));
                listed.push(json!({
                    "name": name,
                    "file": rel,
                    "variables": variables,
                    "redacted": mine,
                }));
            }
            Ok(ConfigFile::Missing) => {}
            Err(e) => listed.push(json!({
                "name": name,
                "file": rel,
                "error": e.to_string(),
            })),
        }
    }
    ToolOutput::json(json!({
        "environments": listed,
        "redacted": redacted,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetEnvironmentVariablesArgs {
    /// The environment's name: `dev` for `envs/dev.toml` (list_environments shows them).
    name: String,
}

fn get_environment_variables(
    ws: &Workspace,
    args: GetEnvironmentVariablesArgs,
) -> Result<ToolOutput, ToolError> {
    let rel = env_file(&args.name)?;
    let unknown = |ws: &Workspace| -> Result<ToolError, ToolError> {
        let names = environment_names(ws)?.unwrap_or_default();
        Ok(ToolError::Invalid(format!(
            "there is no environment `{}` (no file `{rel}`); known environments: {}",
            args.name,
            known(names.iter())
        )))
    };
    let table = match read_toml(ws, &rel)? {
        ConfigFile::Parsed(table) => table,
        ConfigFile::Missing => return Err(unknown(ws)?),
    };
    let mut redacted = Vec::new();
    let variables = redact_table(&table, "", false, &mut redacted);
    let name = rel
        .strip_prefix("envs/")
        .and_then(|r| r.strip_suffix(".toml"))
        .unwrap_or(&rel);
    ToolOutput::json(json!({
        "name": name,
        "file": rel,
        "variables": variables,
        "redacted": redacted,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn secret_key_names() {
        for key in [
            "password",
            "DB_PASSWORD",
            "api-key",
            "apiKey",
            "access_key_id",
            "db_pass",
            "pw",
            "ssh_key",
            "encryption_key",
            "token",
            "Authorization",
            "client_secret",
            "key",
            "PWD",
            "session_id",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "host", "port", "user", "base_url", "kind", "keyboard", "database",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn nested_values_are_redacted_whole() {
        let table: toml::Table = toml::from_str(
            r#"
            host = "h"
            auth = { user = "u", pass = "p1" }
            tokens = ["t1", "t2"]
            url = "postgres://app:p2@db:5432/x?sslmode=off&api_key=p3"
            [secrets]
            a = "p4"
            [secrets.deeper]
            b = ["p5"]
            [list]
            items = [{ name = "x", password = "p6" }]
            "#,
        )
        .unwrap();
        let mut redacted = Vec::new();
        let shown = redact_table(&table, "", false, &mut redacted);
        let text = shown.to_string();
        for secret in ["p1", "p2", "p3", "p4", "p5", "p6", "t1"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(shown["host"], "h");
        assert_eq!(shown["secrets"]["deeper"]["b"], REDACTED);
        redacted.sort();
        assert_eq!(
            redacted,
            [
                "auth",
                "list.items[0].password",
                "secrets.a",
                "secrets.deeper.b",
                "tokens",
                "url"
            ]
        );
        assert_eq!(
            shown["url"],
            "postgres://app:[redacted]@db:5432/x?sslmode=off&api_key=[redacted]"
        );
    }

    #[test]
    fn syntax_errors_do_not_quote_the_line() {
        for text in [
            "a = 1\npassword = sample-secret-value\n",
            "a = 1\npassword = \"sample-secret-value\n",
            "a = 1\npassword = \"sample-secret-value\" trailing\n",
            "a = 1\npassword = 'sample-secret-value' 'more'\n",
            "a = 1\nlist = [1, \"sample-secret-value\"\n",
            "a = 1\nx = { p = \"sample-secret-value\" \n",
            "a = 1\npassword = \"sample-secret-value\"\npassword = \"sample-secret-value\"\n",
            "a = 1\nsample-secret-value\n",
        ] {
            let err = toml::from_str::<toml::Table>(text).unwrap_err();
            let message = syntax_error("envs/x.toml", text, &err);
            assert!(
                message.contains("envs/x.toml") && message.contains("line "),
                "{message}"
            );
            assert!(!message.contains("sample-secret"), "{message}");
        }
    }

    #[test]
    fn environment_names_map_to_files() {
        assert_eq!(env_file("dev").unwrap(), "envs/dev.toml");
        assert_eq!(env_file("dev.toml").unwrap(), "envs/dev.toml");
        assert_eq!(env_file("envs/dev.toml").unwrap(), "envs/dev.toml");
        assert_eq!(env_file("envs/dev").unwrap(), "envs/dev.toml");
        for bad in ["", "../x", "a/b", ".hidden"] {
            assert!(env_file(bad).is_err(), "{bad}");
        }
    }
}
