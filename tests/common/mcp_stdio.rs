//! A stdio MCP client for the tests: `vaultchat mcp` as a child, one JSON line per message, each
//! answer waited for with a deadline (a server that never answers fails the test, not hangs it).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Long enough that only an answer that never comes runs out of it, on any machine.
const NEVER: Duration = Duration::from_secs(60);

pub struct McpStdio {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl McpStdio {
    /// Start `command` (a `vaultchat … mcp` command) with piped stdin and stdout.
    pub fn spawn(mut command: Command) -> McpStdio {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && tx.send(value).is_err()
                {
                    return;
                }
            }
        });
        McpStdio {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    pub fn send(&mut self, message: &Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and wait for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + NEVER;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within {NEVER:?}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The legacy handshake; returns the answer to `initialize`.
    pub fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// `tools/call`; returns the result (a protocol error fails the test).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(answer.get("error").is_none(), "{name} failed: {answer}");
        answer["result"].clone()
    }

    /// The structured content of a successful tool call.
    pub fn call_ok(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.call_tool(name, arguments.clone());
        assert_ne!(
            result["isError"], true,
            "{name} {arguments} failed: {result}"
        );
        result["structuredContent"].clone()
    }
}
