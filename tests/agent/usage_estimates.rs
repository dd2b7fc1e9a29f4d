//! Usage when the server reports none: `vaultchat ask --json` against the fake server replaying
//! llama-cpp-python's stream without a usage chunk, byte for byte. The tokens are estimated,
//! marked `estimated: true`, and stored so; a stream that reports usage stays unmarked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, fixture, openai_text};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

/// The reply text of tests/fixtures/sse/llama_cpp_python_text_no_usage.sse.
const NO_USAGE_REPLY: &str = "Hello, welcome to the world of science fiction! I'm";

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(
        vault.join("Garden.md"),
        "# Garden\n\nPlant tomatoes in May.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    Setup {
        _tmp: tmp,
        vault,
        data,
    }
}

/// `vaultchat ask --json PROMPT` with the OpenAI-compatible provider at the fake server.
fn ask(s: &Setup, fake: &FakeLlm, model: &str, prompt: &str) -> Output {
    common::cmd(&s.data, &s.vault)
        .args(["--provider", "openai", "--base-url", &fake.openai_base()])
        .args(["--model", model])
        .env("OPENAI_API_KEY", "sk-local")
        .args(["ask", "--json", prompt])
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn usage_json(s: &Setup) -> Value {
    serde_json::from_str(&common::ok(&s.data, &s.vault, &["usage", "--json"])).unwrap()
}

#[test]
fn a_stream_without_usage_gets_estimated_marked_usage() {
    for chunking in [Chunking::Whole, Chunking::Fixed(7)] {
        let s = setup();
        let fake = FakeLlm::start(vec![Reply::Sse {
            body: fixture("llama_cpp_python_text_no_usage.sse"),
            chunking,
        }]);
        let out = ask(&s, &fake, "smol", "Say hello");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["reply"], NO_USAGE_REPLY);
        let usage = &v["usage"];
        assert_eq!(usage["estimated"], true, "{usage}");
        // The output is the reply's estimate; the input the whole request's (system prompt,
        // tool definitions, the message): more than the prompt alone, less than its JSON bytes.
        assert_eq!(
            usage["output_tokens"],
            vaultchat::llm::tokens::estimate_text("smol", NO_USAGE_REPLY)
        );
        let input = usage["input_tokens"].as_u64().unwrap();
        let body = &fake.requests()[0].raw_body;
        assert!(
            input > 100 && (input as usize) < body.len() / 2,
            "{input} tokens for a {} byte request",
            body.len()
        );
        assert_eq!(usage["cache_read_input_tokens"], 0);

        // Stored with the mark: `vaultchat usage --json` says so, per session too.
        let stored = usage_json(&s);
        assert_eq!(stored["usage"]["estimated"], true, "{stored}");
        assert_eq!(stored["usage"]["input_tokens"], input);
        assert_eq!(stored["estimated_responses"], 1);
        assert_eq!(stored["by_session"][0]["usage"]["estimated"], true);
        let text = common::ok(&s.data, &s.vault, &["usage"]);
        assert!(text.contains(&format!("~{input} input")), "{text}");
        assert!(text.contains("(1 with estimated tokens)"), "{text}");
    }
}

#[test]
fn an_openai_model_without_usage_is_counted_with_its_tokenizer() {
    let s = setup();
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: fixture("llama_cpp_python_text_no_usage.sse"),
        chunking: Chunking::Whole,
    }]);
    let out = ask(&s, &fake, "gpt-4o-mini", "Say hello");
    let v = json_of(&out);
    assert_eq!(v["usage"]["estimated"], true);
    // o200k_base: the exact count of the reply's text.
    assert_eq!(
        v["usage"]["output_tokens"],
        vaultchat::llm::tokens::bpe::count(
            vaultchat::llm::tokens::bpe::Encoding::O200kBase,
            NO_USAGE_REPLY
        )
        .unwrap()
    );
}

#[test]
fn a_stream_with_usage_stays_reported() {
    let s = setup();
    let reported = FakeUsage {
        input: 1234,
        output: 56,
        cache_read: 0,
        cache_write: 0,
    };
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: openai_text("Hello.", reported),
        chunking: Chunking::Fixed(5),
    }]);
    let v = json_of(&ask(&s, &fake, "smol", "Say hello"));
    assert_eq!(v["usage"]["estimated"], false);
    assert_eq!(v["usage"]["input_tokens"], 1234);
    assert_eq!(v["usage"]["output_tokens"], 56);
    let stored = usage_json(&s);
    assert_eq!(stored["usage"]["estimated"], false);
    assert_eq!(stored["estimated_responses"], 0);
    let text = common::ok(&s.data, &s.vault, &["usage"]);
    assert!(text.contains(" 1234 input + 56 output"), "{text}");
}

#[test]
fn a_session_mixing_reported_and_estimated_usage_is_estimated() {
    let s = setup();
    let reported = FakeUsage {
        input: 1000,
        output: 10,
        cache_read: 0,
        cache_write: 0,
    };
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: openai_text("First.", reported),
            chunking: Chunking::Whole,
        },
        Reply::Sse {
            body: fixture("llama_cpp_python_text_no_usage.sse"),
            chunking: Chunking::Whole,
        },
    ]);
    let first = json_of(&ask(&s, &fake, "smol", "One"));
    assert_eq!(first["usage"]["estimated"], false);
    let out = common::cmd(&s.data, &s.vault)
        .args(["--provider", "openai", "--base-url", &fake.openai_base()])
        .args(["--model", "smol"])
        .env("OPENAI_API_KEY", "sk-local")
        .args(["ask", "--json", "--continue", "Two"])
        .output()
        .unwrap();
    assert_eq!(json_of(&out)["usage"]["estimated"], true);
    let stored = usage_json(&s);
    assert_eq!(stored["responses"], 2);
    assert_eq!(stored["estimated_responses"], 1);
    assert_eq!(stored["by_session"][0]["usage"]["estimated"], true);
    assert!(stored["usage"]["input_tokens"].as_u64().unwrap() > 1000);
}
