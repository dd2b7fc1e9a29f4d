//! How close the token estimates come to real counts (issue 12's acceptance): the comparisons of
//! `vaultchat::llm::tokens::accuracy` on the recorded streams and the repository's notes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use vaultchat::llm::tokens::accuracy::{Distribution, compare_all};

/// The acceptance check of the estimates (issue 12): the OpenAI family within ±15% of every
/// reference (the recorded streams' completion tokens and whole-note tokenizer counts), and the
/// calibrated fallback close to o200k_base on the notes. `cargo bench --bench tokens` prints the
/// distributions.
#[test]
fn estimates_stay_within_fifteen_percent() {
    let corpus = common::token_corpus::load(&common::repo()).unwrap();
    let comparisons = compare_all(&corpus).unwrap();
    assert!(comparisons.len() > 100, "{}", comparisons.len());
    for c in comparisons.iter().filter(|c| c.estimator == "openai") {
        assert!(
            c.error_percent().abs() <= 15.0,
            "{} ({}): {} estimated, {} counted",
            c.name,
            c.reference_kind,
            c.estimated,
            c.reference
        );
    }
    let fallback = Distribution::of(
        comparisons
            .iter()
            .filter(|c| c.estimator == "calibrated" && c.reference_kind == "o200k_base"),
    )
    .unwrap();
    assert!(
        fallback.median_abs <= 10.0 && fallback.max_abs <= 35.0,
        "{fallback:?}"
    );
}
