//! Helpers shared by the integration tests: run the real binary, generate vaults.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod fake_llm;
pub mod mcp_stdio;
pub mod tmux;
pub mod token_corpus;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_vaultchat")
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Python of the test venv, where scripts/install-test-deps puts the official MCP Python SDK.
pub fn venv_python() -> PathBuf {
    let python = repo().join("target/test-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/install-test-deps (it installs the MCP Python SDK)",
        python.display()
    );
    python
}

/// A `vaultchat` command with every file kept under `data` and no influence from the person's
/// A config table that runs the Python script `script` of tests/peers (with the test venv's
/// Python, where the MCP SDK is) as the person's MCP server `name`, `extra` lines added to it.
pub fn python_server_toml(name: &str, script: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = {python:?}\nargs = [{script:?}]\n{extra}",
        python = venv_python().display().to_string(),
        script = repo()
            .join("tests/peers")
            .join(script)
            .display()
            .to_string(),
    )
}

/// environment.
pub fn cmd(data: &Path, vault: &Path) -> Command {
    let mut c = Command::new(bin());
    c.arg("--data-dir")
        .arg(data)
        .arg("--vault")
        .arg(vault)
        .env_remove("VAULTCHAT_VAULT")
        .env_remove("VAULTCHAT_DATA_DIR")
        // `doctor` and `ask` would reach the person's own provider with these.
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        // The real clock unless a test starts it somewhere (src/time.rs).
        .env_remove("VAULTCHAT_NOW_MS")
        .env("NO_COLOR", "1");
    c
}

pub fn run(data: &Path, vault: &Path, args: &[&str]) -> Output {
    cmd(data, vault).args(args).output().expect("run vaultchat")
}

/// Run and require success; returns stdout.
pub fn ok(data: &Path, vault: &Path, args: &[&str]) -> String {
    let out = run(data, vault, args);
    assert!(
        out.status.success(),
        "vaultchat {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn search_json(data: &Path, vault: &Path, query: &str, limit: usize) -> serde_json::Value {
    let limit = limit.to_string();
    let out = ok(data, vault, &["search", query, "--json", "--limit", &limit]);
    serde_json::from_str(&out).expect("search --json prints one JSON object")
}

pub fn result_paths(v: &serde_json::Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

/// Generate a synthetic vault with the repo's copy of gen_vault.py; returns its manifest.
pub fn gen_vault(out: &Path, notes: usize, seed: u64) -> serde_json::Value {
    let status = Command::new("python3")
        .arg(repo().join("scripts/gen_vault.py"))
        .arg(out)
        .args(["--notes", &notes.to_string(), "--seed", &seed.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs gen_vault.py");
    assert!(status.success());
    let manifest = std::fs::read_to_string(out.join(".vault-manifest.json")).unwrap();
    serde_json::from_str(&manifest).unwrap()
}

/// Copy the shipped sample vault into `dest`.
/// The vault's index opened in `data` (as the app's data folder holds it) and synced once: for the
/// tests that read the index through the library rather than the binary.
pub fn open_index(vault: &Path, data: &Path) -> vaultchat::index::Index {
    let vault = vaultchat::vault::Vault::open(vault).unwrap();
    let mut index = vaultchat::index::Index::open(
        &data.join("index"),
        &vault,
        &vaultchat::config::IndexConfig::default(),
    )
    .unwrap();
    index.sync(&mut |_| {}).unwrap();
    index
}

/// A child process (a watcher, a server) killed and reaped when the test ends, passed or not.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Wait for a watcher (`vaultchat index --watch`) to print a line containing `needle`.
pub fn wait_for_line(lines: &mut impl Iterator<Item = std::io::Result<String>>, needle: &str) {
    for line in lines {
        let line = line.unwrap();
        if line.contains(needle) {
            return;
        }
    }
    panic!("the watcher exited before printing {needle:?}");
}

pub fn copy_sample_vault(dest: &Path) {
    copy_dir(&repo().join("docs/sample-vault"), dest);
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A running `vaultchat mcp --http 127.0.0.1:0`, killed on drop.
pub struct Server {
    child: std::process::Child,
    pub url: String,
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start the HTTP MCP server and read its endpoint (and token) from stdout.
pub fn start_http(data: &Path, vault: &Path, extra: &[&str]) -> Server {
    let mut child = cmd(data, vault)
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .strip_prefix("MCP endpoint: ")
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let token = if extra.contains(&"--no-auth") {
        String::new()
    } else {
        let second = lines.next().unwrap().unwrap();
        second.strip_prefix("Bearer token: ").unwrap().to_string()
    };
    Server { child, url, token }
}
