//! The notebook, tag, connection, environment and block tools, driven through the Registry the way
//! the agent and the MCP server call them, on a copy of docs/sample-vault with planted secrets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use vaultchat::config::{Config, Paths};
use vaultchat::store::{Actor, NewRevision, Store};
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::tools::{Registry, ToolError, ToolOutput};
use vaultchat::vault::{Access, Vault};

const NEW_TOOLS: [&str; 11] = [
    "list_notebooks",
    "create_notebook",
    "list_tags",
    "manage_tags",
    "list_connections",
    "get_connection",
    "list_environments",
    "get_environment_variables",
    "list_blocks_in_note",
    "get_block_settings",
    "get_block_history",
];

/// Every secret value planted in the fixture's config files (and the sample vault's own).
const SECRETS: &[&str] = &[
    "sample-not-a-real-password",
    "sample-dev-password",
    "sample-dev-token",
    "PLANTED-url-pass",
    "PLANTED-api-key",
    "PLANTED-replica",
    "PLANTED-tok-1",
    "PLANTED-tok-2",
    "PLANTED-bearer",
    "PLANTED-array-pass",
    "PLANTED-cookie",
    "PLANTED-prod-pass",
    "PLANTED-client-id",
    "PLANTED-scope",
    "PLANTED-header",
    "PLANTED-query-token",
    "PLANTED-broken",
    "PLANTED",
];

const EXTRA_CONNECTIONS: &str = r#"
[connections.warehouse]
kind = "postgres"
host = "wh.internal"
url = "postgres://loader:PLANTED-url-pass@wh.internal/db?sslmode=require&token=PLANTED-query-token"
api_key = "PLANTED-api-key"

[connections.warehouse.secrets]
replica_password = "PLANTED-replica"

[connections.warehouse.options]
tokens = ["PLANTED-tok-1", "PLANTED-tok-2"]
auth = { user = "u", bearer = "PLANTED-bearer" }
retries = 3

[[connections.warehouse.replicas]]
host = "r1.internal"
password = "PLANTED-array-pass"
"#;

const PROD_ENV: &str = r#"base_url = "https://api.example.com"
user = "ops"
session_cookie = "PLANTED-cookie"

[secrets]
password = "PLANTED-prod-pass"

[secrets.oauth]
client_id = "PLANTED-client-id"
scopes = ["PLANTED-scope"]

[headers]
Authorization = "Bearer PLANTED-header"
X-Trace = "on"
"#;

const BROKEN_ENV: &str = "user = \"x\"\npassword = \"PLANTED-broken\n";

struct Fixture {
    tmp: tempfile::TempDir,
    vault: PathBuf,
    paths: Paths,
    ws: Arc<Workspace>,
    reg: Registry,
}

impl Fixture {
    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.reg.call(name, args).await
    }

    async fn ok(&self, name: &str, args: Value) -> Value {
        match self.call(name, args.clone()).await {
            Ok(out) => out.structured,
            Err(e) => panic!("{name}({args}) failed: {e}"),
        }
    }

    async fn invalid(&self, name: &str, args: Value) -> String {
        match self.call(name, args.clone()).await {
            Err(ToolError::Invalid(message)) => message,
            other => panic!("{name}({args}) should be a caller error, got {other:?}"),
        }
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.vault.join(rel)).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        fs::write(self.vault.join(rel), text).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn sample_vault() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sample-vault")
}

fn open(tmp: tempfile::TempDir, vault: PathBuf) -> Fixture {
    let paths = Paths::under(&tmp.path().join("data"));
    let ws = Workspace::open(
        Vault::open(&vault).unwrap(),
        &paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let mut reg = Registry::new();
    workspace::register(&mut reg, &ws);
    Fixture {
        tmp,
        vault,
        paths,
        ws,
        reg,
    }
}

/// The sample vault with extra secrets planted in its config files.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    copy_dir(&sample_vault(), &vault);
    let mut connections = fs::read_to_string(vault.join("connections.toml")).unwrap();
    connections.push_str(EXTRA_CONNECTIONS);
    fs::write(vault.join("connections.toml"), connections).unwrap();
    fs::write(vault.join("envs/prod.toml"), PROD_ENV).unwrap();
    fs::write(vault.join("envs/broken.toml"), BROKEN_ENV).unwrap();
    open(tmp, vault)
}

/// Nothing a config tool returns, in any form, holds a secret.
fn assert_no_secret(what: &str, result: &Result<ToolOutput, ToolError>) {
    let texts = match result {
        Ok(out) => vec![out.text.clone(), out.structured.to_string()],
        Err(e) => vec![e.to_string(), format!("{e:?}")],
    };
    for text in texts {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{what} leaked {secret}: {text}");
        }
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Every file and folder under `dir` (relative), for before/after comparisons.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            out.push(
                entry
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Specs

#[tokio::test]
async fn schemas_are_closed_and_annotations_fit() {
    let f = fixture();
    for name in NEW_TOOLS {
        let spec = f
            .reg
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not registered"))
            .spec();
        assert_eq!(spec.input_schema["additionalProperties"], false, "{name}");
        assert_eq!(spec.input_schema["type"], "object", "{name}");
        assert!(
            spec.description.len() > 80,
            "{name} needs a real description"
        );
        let writes = matches!(name, "create_notebook" | "manage_tags");
        assert_eq!(spec.annotations.read_only_hint, !writes, "{name}");
    }
    assert!(
        f.reg
            .get("manage_tags")
            .unwrap()
            .spec()
            .annotations
            .destructive_hint
    );
    assert!(
        !f.reg
            .get("create_notebook")
            .unwrap()
            .spec()
            .annotations
            .destructive_hint
    );
    // Unknown arguments are refused, as the closed schema promises.
    let err = f.invalid("list_notebooks", json!({"folder": "x"})).await;
    assert!(err.contains("unknown field"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Notebooks

#[tokio::test]
async fn list_notebooks_counts_direct_and_nested_notes() {
    let f = fixture();
    let out = f.ok("list_notebooks", json!({})).await;
    let rows: Vec<(String, u64, u64)> = out["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["path"].as_str().unwrap().to_string(),
                n["notes"].as_u64().unwrap(),
                n["notes_total"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64, u64)> = [
        ("Areas", 0, 1),
        ("Areas/Health", 1, 1),
        ("Inbox", 1, 1),
        ("Journal", 1, 1),
        ("Projects", 2, 2),
        ("Reading", 1, 1),
        ("Runbooks", 1, 1),
        ("envs", 0, 0),
    ]
    .into_iter()
    .map(|(p, a, b)| (p.to_string(), a, b))
    .collect();
    assert_eq!(rows, expected);
    assert_eq!(out["notes_at_root"], 1);
    assert_eq!(out["notes_in_vault"], 8);

    let out = f.ok("list_notebooks", json!({"parent": "Areas"})).await;
    assert_eq!(out["parent"], "Areas");
    assert_eq!(out["notebooks"][0]["path"], "Areas/Health");
    assert_eq!(out["notebooks"][0]["name"], "Health");
    assert_eq!(out["total"], 1);

    let err = f
        .invalid("list_notebooks", json!({"parent": ".obsidian"}))
        .await;
    assert!(err.contains("dot-folder"), "{err}");
    let err = f.invalid("list_notebooks", json!({"parent": "Nope"})).await;
    assert!(err.contains("not a folder"), "{err}");
    f.invalid("list_notebooks", json!({"parent": "../"})).await;
}

#[tokio::test]
async fn create_notebook_creates_parents_and_is_idempotent() {
    let f = fixture();
    let out = f
        .ok(
            "create_notebook",
            json!({"path": "Projects/Alpha/Sprint 1"}),
        )
        .await;
    assert_eq!(out["path"], "Projects/Alpha/Sprint 1");
    assert_eq!(out["created"], true);
    assert_eq!(
        strings(&out["created_folders"]),
        ["Projects/Alpha", "Projects/Alpha/Sprint 1"]
    );
    assert!(f.vault.join("Projects/Alpha/Sprint 1").is_dir());

    let again = f
        .ok(
            "create_notebook",
            json!({"path": "Projects/Alpha/Sprint 1/"}),
        )
        .await;
    assert_eq!(again["created"], false);
    assert_eq!(again["created_folders"], json!([]));

    let listed = f.ok("list_notebooks", json!({"parent": "Projects"})).await;
    let paths: Vec<&str> = listed["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["Projects/Alpha", "Projects/Alpha/Sprint 1"]);

    let err = f
        .invalid("create_notebook", json!({"path": "Inbox/New note.md"}))
        .await;
    assert!(err.contains("create_note"), "{err}");
    let err = f
        .invalid("create_notebook", json!({"path": "Welcome.md/sub"}))
        .await;
    assert!(err.contains("is a file"), "{err}");
    assert!(f.vault.join("Welcome.md").is_file());
}

#[tokio::test]
async fn create_notebook_refuses_bad_paths_and_writes_nothing() {
    let f = fixture();
    let before = tree(f.tmp.path());
    for bad in [
        "../x",
        "/abs",
        ".git/x",
        "a\0b",
        "%2e%2e/x",
        "..",
        "a/../../x",
        "Projects/../../x",
        ".obsidian/plugins",
        ".hidden",
        "Projects/.secret",
        "CON",
        "/",
        "",
        "a\\..\\x",
        "％２ｅ％２ｅ/x",
    ] {
        let result = f.call("create_notebook", json!({ "path": bad })).await;
        assert!(
            matches!(result, Err(ToolError::Invalid(_))),
            "{bad:?} was not refused: {result:?}"
        );
    }
    assert_eq!(tree(f.tmp.path()), before);
    assert!(!Path::new("/abs").exists());
    assert!(!f.tmp.path().join("x").exists());
}

// ---------------------------------------------------------------------------------------------
// Tags

#[tokio::test]
async fn list_tags_counts_frontmatter_and_inline_tags() {
    let f = fixture();
    f.write(
        "Inbox/Caps.md",
        "# Caps\n\nMore #Project work on #project/alpha.\n",
    );
    let out = f.ok("list_tags", json!({})).await;
    let tags = out["tags"].as_array().unwrap();
    let find = |name: &str| {
        tags.iter()
            .find(|t| t["tag"] == name)
            .unwrap_or_else(|| panic!("no tag {name} in {out}"))
    };
    let project = find("project");
    assert_eq!(project["notes"], 3);
    assert_eq!(project["frontmatter_notes"], 2);
    assert_eq!(project["inline_notes"], 1);
    assert_eq!(project["variants"], json!(["Project"]));
    let start = find("start");
    assert_eq!(
        (
            &start["notes"],
            &start["frontmatter_notes"],
            &start["inline_notes"]
        ),
        (&json!(1), &json!(1), &json!(1))
    );
    assert_eq!(find("todo")["notes"], 2);
    assert_eq!(find("work")["notes"], 2);
    assert_eq!(find("meta/howto")["inline_notes"], 1);
    assert_eq!(find("日本語")["notes"], 1);
    // Code is not a tag; neither is a heading marker.
    for absent in ["not-a-tag", "hashtag", "Links"] {
        assert!(tags.iter().all(|t| t["tag"] != absent), "{absent}");
    }
    // Most used first, then by name.
    let order: Vec<&str> = tags
        .iter()
        .take(3)
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["project", "todo", "work"]);
    let counts: Vec<u64> = tags.iter().map(|t| t["notes"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    assert_eq!(out["total"], tags.len());

    let nested = f.ok("list_tags", json!({"prefix": "#Project/"})).await;
    assert_eq!(
        nested["tags"],
        json!([{"tag": "project/alpha", "notes": 1, "frontmatter_notes": 0, "inline_notes": 1}])
    );
    let limited = f.ok("list_tags", json!({"limit": 2})).await;
    assert_eq!(limited["tags"].as_array().unwrap().len(), 2);
    assert_eq!(limited["truncated"], true);
}

#[tokio::test]
async fn manage_tags_rewrites_only_the_tags_key() {
    let f = fixture();
    let rel = "Projects/Garden Planner.md";
    let original = f.read(rel);
    let out = f
        .ok(
            "manage_tags",
            json!({"note": rel, "add": ["#Seasonal", "project"], "remove": ["garden"]}),
        )
        .await;
    let expected = original.replacen(
        "tags:\n  - project\n  - garden\n",
        "tags:\n  - project\n  - Seasonal\n",
        1,
    );
    assert_ne!(expected, original);
    assert_eq!(f.read(rel), expected);
    assert_eq!(out["changed"], true);
    assert_eq!(out["tags"], json!(["project", "Seasonal"]));
    assert_eq!(out["added"], json!(["Seasonal"]));
    assert_eq!(out["already_present"], json!(["project"]));
    assert_eq!(out["removed_from_frontmatter"], json!(["garden"]));

    // The write is recorded like any other tool write.
    let store = Store::open(&f.paths.database_file()).unwrap();
    let revs = store.revisions_of(f.ws.vault_id(), rel, 10).unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!(revs[0].tool.as_deref(), Some("manage_tags"));
    assert_eq!(revs[0].actor, Actor::Agent);
    assert_eq!((revs[0].added, revs[0].removed), (1, 1));
    assert_eq!(
        store.revision_text(revs[0].id).unwrap().as_deref(),
        Some(original.as_str())
    );
    assert_eq!(
        revs[0].after_rev.as_ref(),
        out["revision"].as_str().map(String::from).as_ref()
    );

    // The index sees the change at once.
    let found = f.ok("search_notes", json!({"query": "tag:seasonal"})).await;
    assert_eq!(found["results"][0]["path"], rel);

    // Removing something that is not there changes nothing and says so.
    let out = f
        .ok("manage_tags", json!({"note": rel, "remove": ["nope"]}))
        .await;
    assert_eq!(out["changed"], false);
    assert_eq!(out["not_found"], json!(["nope"]));
    assert_eq!(f.read(rel), expected);
}

#[tokio::test]
async fn manage_tags_removes_inline_occurrences() {
    let f = fixture();
    let rel = "Inbox/Ideas.md";
    let original = f.read(rel);
    let out = f
        .ok("manage_tags", json!({"note": "Ideas", "remove": ["#TODO"]}))
        .await;
    // No frontmatter is created for a removal, and `#to-do` is another tag.
    assert_eq!(
        f.read(rel),
        original.replace("merge #todo and #to-do.", "merge todo and #to-do.")
    );
    assert_eq!(out["removed_inline"], json!({"TODO": 1}));
    assert!(out["note"].as_str().unwrap().contains("inline"), "{out}");

    // A tag in both places goes from both; a nested tag with the same start stays.
    let rel = "Welcome.md";
    let original = f.read(rel);
    let out = f
        .ok(
            "manage_tags",
            json!({"note": rel, "remove": ["start", "meta"]}),
        )
        .await;
    assert_eq!(
        f.read(rel),
        original
            .replace("tags: [start, vaultchat]", "tags: [vaultchat]")
            .replace(
                "Inline tags work too: #start and",
                "Inline tags work too: start and"
            )
    );
    assert_eq!(out["removed_from_frontmatter"], json!(["start"]));
    assert_eq!(out["removed_inline"], json!({"start": 1}));
    assert_eq!(out["not_found"], json!(["meta"]));
}

#[tokio::test]
async fn manage_tags_keeps_crlf_bom_and_creates_frontmatter() {
    let f = fixture();
    f.write(
        "Inbox/Crlf.md",
        "---\r\ntitle: C\r\ntags: [a, b]\r\nz: 1\r\n---\r\nBody #b here\r\n",
    );
    f.ok(
        "manage_tags",
        json!({"note": "Inbox/Crlf.md", "add": ["c"], "remove": ["b"]}),
    )
    .await;
    assert_eq!(
        f.read("Inbox/Crlf.md"),
        "---\r\ntitle: C\r\ntags: [a, c]\r\nz: 1\r\n---\r\nBody b here\r\n"
    );

    let rel = "Journal/2026-11-30.md";
    let original = f.read(rel);
    f.ok(
        "manage_tags",
        json!({"note": rel, "add": ["daily", "project/alpha"]}),
    )
    .await;
    assert_eq!(
        f.read(rel),
        format!("---\ntags: [daily, project/alpha]\n---\n{original}")
    );

    f.write("Inbox/Bom.md", "\u{feff}# B\r\n\r\ntext\r\n");
    f.ok("manage_tags", json!({"note": "Inbox/Bom.md", "add": ["x"]}))
        .await;
    assert_eq!(
        f.read("Inbox/Bom.md"),
        "\u{feff}---\r\ntags: [x]\r\n---\r\n# B\r\n\r\ntext\r\n"
    );
}

#[tokio::test]
async fn manage_tags_refuses_stale_revisions_and_bad_tags() {
    let f = fixture();
    let rel = "Projects/Vaultchat Launch.md";
    let read = f.ok("read_note", json!({"note": rel})).await;
    let stale = read["revision"].as_str().unwrap().to_string();
    let edited = format!("{}\nEdited elsewhere.\n", f.read(rel));
    f.write(rel, &edited);
    let err = f
        .invalid(
            "manage_tags",
            json!({"note": rel, "add": ["x"], "expected_revision": stale}),
        )
        .await;
    assert!(err.contains("changed since"), "{err}");
    assert_eq!(f.read(rel), edited);

    for (bad, says) in [
        ("two words", "whitespace"),
        ("", "empty"),
        ("#", "empty"),
        ("2024", "not a valid tag"),
        ("a,b", "not a valid tag"),
    ] {
        let err = f
            .invalid("manage_tags", json!({"note": rel, "add": [bad]}))
            .await;
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    let err = f.invalid("manage_tags", json!({"note": rel})).await;
    assert!(err.contains("add"), "{err}");
    let err = f
        .invalid(
            "manage_tags",
            json!({"note": rel, "add": ["x"], "remove": ["X"]}),
        )
        .await;
    assert!(err.contains("both"), "{err}");
    f.invalid(
        "manage_tags",
        json!({"note": "../outside.md", "add": ["x"]}),
    )
    .await;
    assert_eq!(f.read(rel), edited);
}

// ---------------------------------------------------------------------------------------------
// Connections and environments

#[tokio::test]
async fn connections_are_listed_and_redacted() {
    let f = fixture();
    let result = f.call("list_connections", json!({})).await;
    assert_no_secret("list_connections", &result);
    let out = result.unwrap().structured;
    let names: Vec<String> = out["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sorted(names), ["notes-api", "notes-db", "warehouse"]);
    let db = out["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "notes-db")
        .unwrap();
    assert_eq!(db["kind"], "postgres");
    assert!(strings(&db["settings"]).contains(&"password".to_string()));
    assert_eq!(
        sorted(strings(&out["redacted"])),
        [
            "connections.notes-db.password",
            "connections.warehouse.api_key",
            "connections.warehouse.options.auth",
            "connections.warehouse.options.tokens",
            "connections.warehouse.replicas[0].password",
            "connections.warehouse.secrets.replica_password",
            "connections.warehouse.url",
        ]
    );

    let result = f.call("get_connection", json!({"name": "notes-db"})).await;
    assert_no_secret("get_connection notes-db", &result);
    let out = result.unwrap().structured;
    assert_eq!(out["settings"]["host"], "localhost");
    assert_eq!(out["settings"]["port"], 5432);
    assert_eq!(out["settings"]["user"], "notes_app");
    assert_eq!(out["settings"]["password"], "[redacted]");
    assert_eq!(out["redacted"], json!(["connections.notes-db.password"]));

    let result = f.call("get_connection", json!({"name": "Warehouse"})).await;
    assert_no_secret("get_connection warehouse", &result);
    let out = result.unwrap().structured;
    assert_eq!(out["name"], "warehouse");
    let s = &out["settings"];
    assert_eq!(
        s["url"],
        "postgres://loader:[redacted]@wh.internal/db?sslmode=require&token=[redacted]"
    );
    assert_eq!(s["secrets"]["replica_password"], "[redacted]");
    assert_eq!(s["options"]["tokens"], "[redacted]");
    assert_eq!(s["options"]["auth"], "[redacted]");
    assert_eq!(s["options"]["retries"], 3);
    assert_eq!(s["replicas"][0]["host"], "r1.internal");
    assert_eq!(s["replicas"][0]["password"], "[redacted]");
    assert_eq!(out["redacted"].as_array().unwrap().len(), 6);

    let result = f.call("get_connection", json!({"name": "nope"})).await;
    assert_no_secret("get_connection nope", &result);
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("notes-api, notes-db, warehouse") || err.contains("notes-db"),
        "{err}"
    );
    assert!(err.contains("warehouse"), "{err}");

    // A syntax error names the file and line without quoting it.
    f.write(
        "connections.toml",
        "[connections.x]\nhost = \"h\"\npassword = \"PLANTED-broken\nport = 1\n",
    );
    for (tool, args) in [
        ("list_connections", json!({})),
        ("get_connection", json!({"name": "x"})),
    ] {
        let result = f.call(tool, args).await;
        assert_no_secret(tool, &result);
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("connections.toml") && err.contains("line 3"),
            "{err}"
        );
    }

    // A connection that is not a table is described by its type, never its value.
    f.write(
        "connections.toml",
        "[connections]\nraw = \"postgres://u:PLANTED-url-pass@h/db\"\n",
    );
    let result = f.call("get_connection", json!({"name": "raw"})).await;
    assert_no_secret("get_connection raw", &result);
    assert!(result.unwrap_err().to_string().contains("a string"));
    let result = f.call("list_connections", json!({})).await;
    assert_no_secret("list_connections raw", &result);
}

#[tokio::test]
async fn environments_are_listed_and_redacted() {
    let f = fixture();
    let result = f.call("list_environments", json!({})).await;
    assert_no_secret("list_environments", &result);
    let out = result.unwrap().structured;
    let envs = out["environments"].as_array().unwrap();
    let names: Vec<&str> = envs.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["broken", "dev", "prod"]);
    assert!(
        envs[0]["error"].as_str().unwrap().contains("line 2"),
        "{}",
        envs[0]
    );
    assert_eq!(envs[1]["file"], "envs/dev.toml");
    assert_eq!(
        sorted(strings(&envs[1]["variables"])),
        ["base_url", "secrets.password", "secrets.token", "user"]
    );
    assert_eq!(
        sorted(strings(&envs[1]["redacted"])),
        ["secrets.password", "secrets.token"]
    );
    assert!(
        strings(&out["redacted"]).contains(&"envs/prod.toml:headers.Authorization".to_string())
    );

    let result = f
        .call("get_environment_variables", json!({"name": "dev"}))
        .await;
    assert_no_secret("get dev", &result);
    let out = result.unwrap().structured;
    assert_eq!(out["file"], "envs/dev.toml");
    assert_eq!(
        out["variables"],
        json!({
            "base_url": "http://localhost:8080",
            "user": "demo",
            "secrets": {"password": "[redacted]", "token": "[redacted]"}
        })
    );

    let result = f
        .call(
            "get_environment_variables",
            json!({"name": "envs/prod.toml"}),
        )
        .await;
    assert_no_secret("get prod", &result);
    let out = result.unwrap().structured;
    assert_eq!(out["name"], "prod");
    let v = &out["variables"];
    assert_eq!(v["base_url"], "https://api.example.com");
    assert_eq!(v["session_cookie"], "[redacted]");
    assert_eq!(v["secrets"]["oauth"]["client_id"], "[redacted]");
    assert_eq!(v["secrets"]["oauth"]["scopes"], "[redacted]");
    assert_eq!(v["headers"]["Authorization"], "[redacted]");
    assert_eq!(v["headers"]["X-Trace"], "on");
    assert_eq!(
        sorted(strings(&out["redacted"])),
        [
            "headers.Authorization",
            "secrets.oauth.client_id",
            "secrets.oauth.scopes",
            "secrets.password",
            "session_cookie",
        ]
    );

    let result = f
        .call("get_environment_variables", json!({"name": "broken"}))
        .await;
    assert_no_secret("get broken", &result);
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("envs/broken.toml") && err.contains("line 2"),
        "{err}"
    );

    let result = f
        .call("get_environment_variables", json!({"name": "staging"}))
        .await;
    assert_no_secret("get staging", &result);
    let err = result.unwrap_err().to_string();
    assert!(err.contains("broken, dev, prod"), "{err}");

    for bad in ["../connections", "envs/../../x", "/etc/passwd", ".hidden"] {
        let result = f
            .call("get_environment_variables", json!({ "name": bad }))
            .await;
        assert!(
            matches!(result, Err(ToolError::Invalid(_))),
            "{bad}: {result:?}"
        );
        assert_no_secret(bad, &result);
    }
}

#[tokio::test]
async fn config_tools_without_config_files() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    fs::create_dir_all(&vault).unwrap();
    fs::write(vault.join("a.md"), "# A\n").unwrap();
    let f = open(tmp, vault);
    let out = f.ok("list_connections", json!({})).await;
    assert_eq!(out["connections"], json!([]));
    assert!(out["note"].as_str().unwrap().contains("connections.toml"));
    let out = f.ok("list_environments", json!({})).await;
    assert_eq!(out["environments"], json!([]));
    assert!(out["note"].as_str().unwrap().contains("envs/"));
    let err = f.invalid("get_connection", json!({"name": "x"})).await;
    assert!(err.contains("connections.toml"), "{err}");
    let err = f
        .invalid("get_environment_variables", json!({"name": "dev"}))
        .await;
    assert!(err.contains("known environments: none"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Blocks

const RUNBOOK: &str = "Runbooks/Deploy API.md";

/// Bits of the runbook's block bodies, none of which may appear in any block tool's output.
const BODIES: &[&str] = &[
    "POST",
    "Content-Type",
    "SELECT",
    "Bearer",
    "{{password}}",
    "auth/",
];

fn assert_no_body(what: &str, out: &Value) {
    let text = out.to_string();
    for body in BODIES {
        assert!(
            !text.contains(body),
            "{what} returned body text {body}: {text}"
        );
    }
}

#[tokio::test]
async fn blocks_are_listed_without_bodies() {
    let f = fixture();
    let out = f
        .ok("list_blocks_in_note", json!({"note": "Deploy API"}))
        .await;
    assert_no_body("list_blocks_in_note", &out);
    assert_eq!(out["path"], RUNBOOK);
    assert_eq!(out["total"], 3);
    let login = &out["blocks"][0];
    assert_eq!(
        *login,
        json!({
            "index": 0,
            "id": "login",
            "lang": "http",
            "attributes": [
                {"key": "id", "value": "login"},
                {"key": "env", "value": "dev"},
                {"key": "timeout", "value": "30"},
            ],
            "start_line": 12,
            "end_line": 17,
            "body_lines": 4,
        })
    );
    let ids: Vec<&str> = out["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["login", "deploy", "check-migrations"]);
    assert_eq!(out["blocks"][2]["lang"], "sql");
    assert_eq!(out["blocks"][2]["body_lines"], 1);

    let welcome = f
        .ok("list_blocks_in_note", json!({"note": "Welcome.md"}))
        .await;
    assert_eq!(welcome["blocks"][0]["lang"], "bash");
    assert_eq!(welcome["blocks"][0]["id"], Value::Null);
    assert_eq!(welcome["blocks"][0]["attributes"], json!([]));
    assert!(!welcome.to_string().contains("not-a-tag"));
}

#[tokio::test]
async fn block_settings_resolve_environment_and_connection() {
    let f = fixture();
    let out = f
        .ok(
            "get_block_settings",
            json!({"note": RUNBOOK, "id": "login"}),
        )
        .await;
    assert_no_body("get_block_settings", &out);
    assert_eq!(
        out["environment"],
        json!({"name": "dev", "file": "envs/dev.toml", "exists": true})
    );
    assert!(out.get("connection").is_none());
    let out = f
        .ok(
            "get_block_settings",
            json!({"note": RUNBOOK, "id": "check-migrations"}),
        )
        .await;
    assert_eq!(
        out["connection"],
        json!({"name": "notes-db", "file": "connections.toml", "exists": true})
    );
    let out = f
        .ok("get_block_settings", json!({"note": RUNBOOK, "index": 1}))
        .await;
    assert_eq!(out["id"], "deploy");
    assert_eq!(
        out["attributes"][2],
        json!({"key": "depends", "value": "login"})
    );

    f.write(
        "Inbox/Req.md",
        "# Req\n\n```http id=r env=staging connection=nope token=PLANTED-attr-token\nGET /x\n```\n\n```http id=bad env=../../etc\nGET /\n```\n",
    );
    let out = f
        .ok(
            "get_block_settings",
            json!({"note": "Inbox/Req.md", "id": "r"}),
        )
        .await;
    assert!(!out.to_string().contains("PLANTED"), "{out}");
    assert_eq!(out["redacted"], json!(["token"]));
    assert_eq!(
        out["environment"],
        json!({"name": "staging", "file": "envs/staging.toml", "exists": false})
    );
    assert_eq!(out["connection"]["exists"], false);
    let listed = f
        .ok("list_blocks_in_note", json!({"note": "Inbox/Req.md"}))
        .await;
    assert!(!listed.to_string().contains("PLANTED"), "{listed}");
    let out = f
        .ok(
            "get_block_settings",
            json!({"note": "Inbox/Req.md", "id": "bad"}),
        )
        .await;
    assert_eq!(out["environment"]["exists"], false);

    let err = f
        .invalid("get_block_settings", json!({"note": RUNBOOK, "id": "nope"}))
        .await;
    assert!(err.contains("login, deploy, check-migrations"), "{err}");
    let err = f
        .invalid("get_block_settings", json!({"note": RUNBOOK, "index": 7}))
        .await;
    assert!(err.contains("3 code block"), "{err}");
    for args in [
        json!({"note": RUNBOOK}),
        json!({"note": RUNBOOK, "id": "login", "index": 0}),
    ] {
        let err = f.invalid("get_block_settings", args).await;
        assert!(err.contains("exactly one"), "{err}");
    }
}

#[tokio::test]
async fn block_history_says_which_revisions_changed_the_block() {
    let f = fixture();
    // 1: the agent edits the login block's body.
    f.ok(
        "update_note",
        json!({"note": RUNBOOK, "replace_text": {"find": "/auth/login", "replace": "/auth/v2/login"}}),
    )
    .await;
    // 2: the agent edits prose only.
    f.ok(
        "update_note",
        json!({"note": RUNBOOK, "replace_text": {"find": "Steps to deploy", "replace": "How to deploy"}}),
    )
    .await;
    // 3: the user changes the block's info string in another program; the watcher records it.
    let path = f.ws.vault().resolve(RUNBOOK, Access::Read).unwrap();
    let before = vaultchat::vault::note_io::read_note(&path).unwrap();
    let after_text = before.text.replace("id=login env=dev", "id=login env=prod");
    f.write(RUNBOOK, &after_text);
    let after = vaultchat::vault::note_io::read_note(&path).unwrap();
    let store = Store::open(&f.paths.database_file()).unwrap();
    store
        .record_revision(&NewRevision {
            vault_id: f.ws.vault_id(),
            path: RUNBOOK,
            // After the agent's writes, so it is the newest revision.
            at_unix_ms: now_ms() + 60_000,
            actor: Actor::External,
            tool: None,
            added: 1,
            removed: 1,
            before_rev: Some(&before.fingerprint.to_revision_string()),
            after_rev: Some(&after.fingerprint.to_revision_string()),
            before_text: Some(&before.text),
        })
        .unwrap();

    let out = f
        .ok("get_block_history", json!({"note": RUNBOOK, "id": "login"}))
        .await;
    assert_no_body("get_block_history", &out);
    assert!(!out.to_string().contains("v2"), "{out}");
    let revs = out["revisions"].as_array().unwrap();
    assert_eq!(revs.len(), 3);
    let summary: Vec<(Value, Value, Value, Value)> = revs
        .iter()
        .map(|r| {
            (
                r["actor"].clone(),
                r["tool"].clone(),
                r["changed"].clone(),
                r["change"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                json!("external"),
                Value::Null,
                json!(true),
                json!("modified")
            ),
            (
                json!("agent"),
                json!("update_note"),
                json!(false),
                json!("unchanged")
            ),
            (
                json!("agent"),
                json!("update_note"),
                json!(true),
                json!("modified")
            ),
        ]
    );
    assert_eq!(
        (revs[2]["added"].clone(), revs[2]["removed"].clone()),
        (json!(1), json!(1))
    );
    assert!(revs[2]["at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(out["changed_in"], 2);
    assert_eq!(out["exists_now"], true);
    assert_eq!(
        out["block"]["attributes"][1],
        json!({"key": "env", "value": "prod"})
    );
    assert!(out.get("note").is_none(), "{out}");

    // The other blocks were never touched.
    let out = f
        .ok(
            "get_block_history",
            json!({"note": RUNBOOK, "id": "deploy"}),
        )
        .await;
    let changed: Vec<&Value> = out["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["changed"])
        .collect();
    assert_eq!(changed, [&json!(false), &json!(false), &json!(false)]);
    assert_eq!(out["changed_in"], 0);

    let err = f
        .invalid("get_block_history", json!({"note": RUNBOOK, "id": "nope"}))
        .await;
    assert!(err.contains("login"), "{err}");

    // A note without recorded revisions has an empty history.
    f.write("Inbox/Fresh.md", "# Fresh\n\n```sql id=q\nSELECT 1;\n```\n");
    let out = f
        .ok(
            "get_block_history",
            json!({"note": "Inbox/Fresh.md", "id": "q"}),
        )
        .await;
    assert_eq!(out["revisions"], json!([]));
    assert_eq!(out["exists_now"], true);
    assert_eq!(out["block"]["body_lines"], 1);
}

#[tokio::test]
async fn the_static_list_of_tool_names_is_the_registry() {
    let f = fixture();
    let registered: Vec<&str> = f.reg.specs().map(|s| s.name.as_str()).collect();
    assert_eq!(registered, vaultchat::tools::WORKSPACE_TOOL_NAMES);
    let builtin = vaultchat::tools::builtin_tool_names();
    assert!(builtin.contains(&"edit_selection") && builtin.contains(&"update_note"));
}

/// A caller's error quotes at most about 200 characters of an argument, however big it was,
/// and says how long the whole was.
#[tokio::test]
async fn errors_never_echo_a_huge_argument_whole() {
    let f = fixture();
    let big = "x".repeat(100_000);
    let mid = "y".repeat(3_000);
    let calls = [
        (big.as_str(), json!({})),
        ("search_notes", json!({"query": "x", "limit": big})),
        ("read_note", json!({"note": "Welcome.md", big.clone(): 1})),
        ("read_note", json!({"note": mid})),
        ("read_note", json!({"note": big})),
        (
            "update_note",
            json!({"note": "Welcome.md", "append": "x", "expected_revision": big}),
        ),
        ("get_connection", json!({"name": big})),
        (
            "manage_tags",
            json!({"note": "Welcome.md", "add": [format!("a b{mid}")]}),
        ),
        ("create_notebook", json!({"path": mid})),
    ];
    for (tool, args) in calls {
        let message = f.invalid(tool, args).await;
        // What is bounded is the echo of the caller's argument; the list of the tools that do
        // exist, which an unknown name is answered with, grows with the registry.
        let echo = message
            .split("; available tools:")
            .next()
            .unwrap_or(&message);
        assert!(
            echo.chars().count() < 700,
            "{tool}: {} characters: {:.300}",
            echo.chars().count(),
            message
        );
        // Cut with an ellipsis and the whole length: "xxx… (100000 characters)".
        assert!(message.contains(" characters)"), "{tool}: {message}");
    }
}
