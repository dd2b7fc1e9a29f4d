//! The cost `vaultchat usage` estimates, and where each model's price came from: without
//! `[prices]` the built-in list prices (dated) price claude-sonnet-4-5, a model they do not know
//! is named as unpriced, and `[prices]` in the config overrides the table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{FakeLlm, FakeUsage, Reply, anthropic_text, openai_text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Garden.md"), "# Garden\n\nTomatoes in May.\n").unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    Setup {
        vault,
        data: tmp.path().join("data"),
        config,
        _tmp: tmp,
    }
}

fn sse(body: Vec<u8>) -> Reply {
    Reply::Sse {
        body,
        chunking: common::fake_llm::Chunking::Whole,
    }
}

/// One `ask` answered by the fake server with the given usage.
fn ask(s: &Setup, fake: &FakeLlm, anthropic: bool, model: &str) {
    let mut c = common::cmd(&s.data, &s.vault);
    c.arg("--config").arg(&s.config);
    if anthropic {
        c.args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test");
    } else {
        c.args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .env("OPENAI_API_KEY", "sk-test");
    }
    let out = c
        .args(["--model", model, "ask", "--json", "Hello"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn usage(s: &Setup, json: bool) -> String {
    let mut args = vec!["--config", s.config.to_str().unwrap(), "usage"];
    if json {
        args.push("--json");
    }
    common::ok(&s.data, &s.vault, &args)
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-6)
}

fn write_config(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn built_in_list_prices_are_used_named_and_overridden_by_the_config() {
    let s = setup();
    let fake = FakeLlm::start(vec![
        sse(anthropic_text(
            "Hi.",
            FakeUsage {
                input: 1_000_000,
                output: 100_000,
                cache_read: 2_000_000,
                cache_write: 400_000,
            },
        )),
        sse(openai_text(
            "Hi.",
            FakeUsage {
                input: 1_000_000,
                output: 0,
                cache_read: 0,
                cache_write: 0,
            },
        )),
    ]);
    ask(&s, &fake, true, "claude-sonnet-4-5");
    ask(&s, &fake, false, "house-model");

    // No [prices]: Sonnet 4.5 at its list price ($3 in, $15 out, $0.30 cache hits, $3.75 cache
    // writes per million), the house model unpriced.
    let v: Value = serde_json::from_str(&usage(&s, true)).unwrap();
    assert!(close(&v["cost_usd"], 3.0 + 1.5 + 0.6 + 1.5), "{v}");
    assert_eq!(v["cost_complete"], false, "{v}");
    assert_eq!(
        v["prices"],
        json!([
            {"model": "anthropic/claude-sonnet-4-5", "source": "built-in", "as_of": "2025-11-24"},
            {"model": "openai/house-model", "source": null},
        ]),
        "{v}"
    );
    let text = usage(&s, false);
    assert!(text.contains("estimated cost: at least $6.60"), "{text}");
    assert!(
        text.contains("built-in list prices of 2025-11-24: claude-sonnet-4-5"),
        "{text}"
    );
    assert!(text.contains("): house-model"), "{text}");

    // [prices] overrides the table for the model it names, and prices the other.
    write_config(
        &s.config,
        "[prices.\"claude-sonnet-4-5\"]\ninput = 1.0\noutput = 1.0\n\n\
         [prices.\"house-model\"]\ninput = 2.0\noutput = 4.0\n",
    );
    let v: Value = serde_json::from_str(&usage(&s, true)).unwrap();
    // Sonnet: 1 + 0.1 + 2M reads at 0.1 × input + 0.4M writes at 1.25 × input; house: 2.
    assert!(close(&v["cost_usd"], 1.0 + 0.1 + 0.2 + 0.5 + 2.0), "{v}");
    assert_eq!(v["cost_complete"], true, "{v}");
    assert_eq!(
        v["prices"],
        json!([
            {"model": "anthropic/claude-sonnet-4-5", "source": "config"},
            {"model": "openai/house-model", "source": "config"},
        ]),
        "{v}"
    );
    let text = usage(&s, false);
    assert!(text.contains("estimated cost: $3.80"), "{text}");
    assert!(
        text.contains("[prices] in the config: claude-sonnet-4-5, house-model"),
        "{text}"
    );
    assert!(!text.contains("built-in"), "{text}");
}
