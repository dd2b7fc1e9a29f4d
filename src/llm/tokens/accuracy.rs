//! How close the estimates come to real counts, on data kept in the repository: the recorded
//! provider streams (tests/fixtures/sse) and notes (docs/sample-vault, tests/fixtures/notes).
//! The unit test `estimates_stay_within_fifteen_percent` and `cargo bench --bench tokens` both
//! run it.
//!
//! What each comparison can honestly measure:
//! - a recorded OpenAI stream reports `completion_tokens`: the reply's estimate against it (the
//!   prompt that produced it was not recorded, so its `prompt_tokens` cannot be compared);
//! - llama-cpp-python streams one token per chunk, so the chunks of the stream without usage
//!   are the real count of SmolLM2's tokens for its reply;
//! - for a note, the reference is the model family's tokenizer on the whole note in one call,
//!   which is what the API counts for that text: the OpenAI estimate against o200k_base (it
//!   counts piecewise and remembers counts, which must change nothing), and the calibrated
//!   fallback against o200k_base and cl100k_base.

use super::bpe::{self, Encoding};
use super::{calibrated, estimate_reply, estimate_text};
use crate::llm::StreamAccumulator;
use crate::llm::openai::{OpenAiStream, ToolNames};
use crate::llm::sse::SseParser;
use std::path::{Path, PathBuf};

/// One estimate against its reference count.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What was counted (a fixture or a note's path).
    pub name: String,
    /// Which estimate: `openai` (o200k_base with framing) or `calibrated`.
    pub estimator: &'static str,
    /// What the reference is (`completion_tokens`, `stream chunks`, `o200k_base`, …).
    pub reference_kind: &'static str,
    pub estimated: u64,
    pub reference: u64,
}

impl Comparison {
    /// The estimate's error relative to the reference, in percent (positive: too high).
    pub fn error_percent(&self) -> f64 {
        if self.reference == 0 {
            return 0.0;
        }
        (self.estimated as f64 - self.reference as f64) * 100.0 / self.reference as f64
    }
}

/// The spread of a set of errors, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    pub count: usize,
    /// The lowest and highest signed error.
    pub min: f64,
    pub max: f64,
    /// The median and the 90th percentile of the absolute error.
    pub median_abs: f64,
    pub p90_abs: f64,
    /// The largest absolute error.
    pub max_abs: f64,
}

impl Distribution {
    /// The spread of `comparisons`' errors; `None` for none.
    pub fn of<'a>(comparisons: impl IntoIterator<Item = &'a Comparison>) -> Option<Self> {
        let mut signed: Vec<f64> = comparisons
            .into_iter()
            .map(Comparison::error_percent)
            .collect();
        if signed.is_empty() {
            return None;
        }
        signed.sort_by(f64::total_cmp);
        let mut absolute: Vec<f64> = signed.iter().map(|e| e.abs()).collect();
        absolute.sort_by(f64::total_cmp);
        let at = |share: f64| absolute[((absolute.len() - 1) as f64 * share).round() as usize];
        Some(Self {
            count: signed.len(),
            min: signed[0],
            max: signed[signed.len() - 1],
            median_abs: at(0.5),
            p90_abs: at(0.9),
            max_abs: absolute[absolute.len() - 1],
        })
    }
}

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AccuracyError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}: the stream did not make a response")]
    Stream(String),
    #[error("{0}: the tokenizer did not load")]
    Tokenizer(&'static str),
}

/// Every comparison, with the repository at `root`.
pub fn compare_all(root: &Path) -> Result<Vec<Comparison>, AccuracyError> {
    let mut all = recorded_streams(root)?;
    for (name, text) in notes(root)? {
        all.extend(note_comparisons(&name, &text)?);
    }
    Ok(all)
}

/// The recorded streams: OpenAI's reported completion tokens, and llama-cpp-python's chunks.
pub fn recorded_streams(root: &Path) -> Result<Vec<Comparison>, AccuracyError> {
    let mut comparisons = Vec::new();
    for name in [
        "openai_stream_tool_call.recorded",
        "openai_stream_parallel_tool_calls.recorded",
    ] {
        let bytes = read(&root.join(format!("tests/fixtures/sse/{name}.sse")))?;
        let (model, response) = replay(name, &bytes)?;
        comparisons.push(Comparison {
            name: format!("{name}.sse"),
            estimator: "openai",
            reference_kind: "completion_tokens",
            estimated: estimate_reply(&model, &response.content),
            reference: response.usage.output_tokens,
        });
    }
    let name = "llama_cpp_python_text_no_usage";
    let bytes = read(&root.join(format!("tests/fixtures/sse/{name}.sse")))?;
    let (model, response) = replay(name, &bytes)?;
    comparisons.push(Comparison {
        name: format!("{name}.sse ({model})"),
        estimator: "calibrated",
        reference_kind: "stream chunks",
        estimated: estimate_reply(&model, &response.content),
        reference: content_chunks(&bytes),
    });
    Ok(comparisons)
}

/// A recorded OpenAI-compatible stream as vaultchat reads it, and the model it names.
fn replay(name: &str, bytes: &[u8]) -> Result<(String, crate::llm::Response), AccuracyError> {
    let mut parser = SseParser::new();
    let mut stream = OpenAiStream::new(ToolNames::default(), None);
    let mut model = String::new();
    for event in parser.feed(bytes) {
        if model.is_empty() {
            model = serde_json::from_str::<serde_json::Value>(&event.data)
                .ok()
                .and_then(|v| v.get("model")?.as_str().map(str::to_string))
                .unwrap_or_default();
        }
        stream
            .push(event)
            .map_err(|_| AccuracyError::Stream(name.into()))?;
    }
    let response = stream
        .finish()
        .map_err(|_| AccuracyError::Stream(name.into()))?;
    Ok((model, response))
}

/// How many events of a stream carry reply text (one per token for llama.cpp servers).
fn content_chunks(bytes: &[u8]) -> u64 {
    SseParser::new()
        .feed(bytes)
        .iter()
        .filter(|event| {
            serde_json::from_str::<serde_json::Value>(&event.data)
                .ok()
                .and_then(|v| {
                    let text = v.pointer("/choices/0/delta/content")?.as_str()?.to_string();
                    Some(!text.is_empty())
                })
                .unwrap_or(false)
        })
        .count() as u64
}

/// The notes of the sample vault and of tests/fixtures/notes, by path, sorted.
pub fn notes(root: &Path) -> Result<Vec<(String, String)>, AccuracyError> {
    let mut paths = Vec::new();
    for folder in ["docs/sample-vault", "tests/fixtures/notes"] {
        collect_markdown(&root.join(folder), &mut paths)?;
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = String::from_utf8_lossy(&read(&path)?).into_owned();
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            Ok((name, text))
        })
        .collect()
}

fn collect_markdown(folder: &Path, into: &mut Vec<PathBuf>) -> Result<(), AccuracyError> {
    let entries = std::fs::read_dir(folder).map_err(|source| AccuracyError::Read {
        path: folder.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_markdown(&path, into)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            into.push(path);
        }
    }
    Ok(())
}

/// A note's estimates: the OpenAI one and the calibrated one against whole-note tokenizer counts.
fn note_comparisons(name: &str, text: &str) -> Result<Vec<Comparison>, AccuracyError> {
    let whole = |encoding: Encoding, label: &'static str| {
        bpe::count_whole(encoding, text).ok_or(AccuracyError::Tokenizer(label))
    };
    let o200k = whole(Encoding::O200kBase, "o200k_base")?;
    let cl100k = whole(Encoding::Cl100kBase, "cl100k_base")?;
    let fallback = calibrated::estimate(text);
    let compare = |estimator, reference_kind, estimated, reference| Comparison {
        name: name.to_string(),
        estimator,
        reference_kind,
        estimated,
        reference,
    };
    Ok(vec![
        compare("openai", "o200k_base", estimate_text("gpt-4o", text), o200k),
        compare(
            "openai",
            "cl100k_base",
            estimate_text("gpt-4", text),
            cl100k,
        ),
        compare("calibrated", "o200k_base", fallback, o200k),
        compare("calibrated", "cl100k_base", fallback, cl100k),
    ])
}

fn read(path: &Path) -> Result<Vec<u8>, AccuracyError> {
    std::fs::read(path).map_err(|source| AccuracyError::Read {
        path: path.to_path_buf(),
        source,
    })
}
