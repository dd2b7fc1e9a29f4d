//! How close the estimates come to real counts, on data kept in the repository: the recorded
//! provider streams (tests/fixtures/sse) and notes (docs/sample-vault, tests/fixtures/notes).
//! The test `token_accuracy::estimates_stay_within_fifteen_percent` (tests/engine) and
//! `cargo bench --bench tokens` both run it; they read the files ([`Corpus`]): this module only
//! counts (the file system belongs to the modules that own files, docs/architecture.md).
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

/// The recorded streams compared, as `tests/fixtures/sse/NAME.sse`.
pub const RECORDED_STREAMS: [&str; 3] = [
    "openai_stream_tool_call.recorded",
    "openai_stream_parallel_tool_calls.recorded",
    "llama_cpp_python_text_no_usage",
];

/// The folders (from the repository root) whose `.md` notes are compared.
pub const NOTE_FOLDERS: [&str; 2] = ["docs/sample-vault", "tests/fixtures/notes"];

/// What is compared, read by the caller: the bytes of each of [`RECORDED_STREAMS`] by name, and
/// the notes of [`NOTE_FOLDERS`] as (path, text), sorted.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub streams: Vec<(String, Vec<u8>)>,
    pub notes: Vec<(String, String)>,
}

impl Corpus {
    fn stream(&self, name: &str) -> Result<&[u8], AccuracyError> {
        self.streams
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| bytes.as_slice())
            .ok_or_else(|| AccuracyError::Missing(name.to_string()))
    }
}

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
    #[error("{0}: the recorded stream is not in the corpus")]
    Missing(String),
    #[error("{0}: the stream did not make a response")]
    Stream(String),
    #[error("{0}: the tokenizer did not load")]
    Tokenizer(&'static str),
}

/// Every comparison of `corpus`.
pub fn compare_all(corpus: &Corpus) -> Result<Vec<Comparison>, AccuracyError> {
    let mut all = recorded_streams(corpus)?;
    for (name, text) in &corpus.notes {
        all.extend(note_comparisons(name, text)?);
    }
    Ok(all)
}

/// The recorded streams: OpenAI's reported completion tokens, and llama-cpp-python's chunks.
pub fn recorded_streams(corpus: &Corpus) -> Result<Vec<Comparison>, AccuracyError> {
    let mut comparisons = Vec::new();
    for name in &RECORDED_STREAMS[..2] {
        let (model, response) = replay(name, corpus.stream(name)?)?;
        comparisons.push(Comparison {
            name: format!("{name}.sse"),
            estimator: "openai",
            reference_kind: "completion_tokens",
            estimated: estimate_reply(&model, &response.content),
            reference: response.usage.output_tokens,
        });
    }
    let name = RECORDED_STREAMS[2];
    let bytes = corpus.stream(name)?;
    let (model, response) = replay(name, bytes)?;
    comparisons.push(Comparison {
        name: format!("{name}.sse ({model})"),
        estimator: "calibrated",
        reference_kind: "stream chunks",
        estimated: estimate_reply(&model, &response.content),
        reference: content_chunks(bytes),
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
