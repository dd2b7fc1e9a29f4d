//! What a model costs: `[prices.MODEL]` in the config, else the built-in table of the providers'
//! published list prices. The table is dated ([`BUILT_IN_AS_OF`]) and every estimate made from it
//! says so, because list prices change and a gateway, a discount or the Batch API bills
//! differently; docs/configuration.md ("Prices") names the pages the figures were taken from.

use super::{Config, Price};

/// When the built-in list prices were taken from the providers' pricing pages.
pub const BUILT_IN_AS_OF: &str = "2025-11-24";

pub use crate::protocol::PriceSource;

impl PriceSource {
    /// One word for machines: `config` or `built-in`.
    pub fn kind(self) -> &'static str {
        match self {
            PriceSource::Config => "config",
            PriceSource::BuiltIn => "built-in",
        }
    }
}

/// A model's price and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    pub price: Price,
    pub source: PriceSource,
}

/// US dollars per million tokens: input, output, cache read, cache write.
const fn usd(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read: Some(cache_read),
        cache_write: Some(cache_write),
    }
}

/// The list prices by model name. A name here also prices its dated snapshots
/// (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`) and its `-latest` alias, and nothing
/// else: a newer model whose name only starts like one here (`claude-opus-4-6`) gets no price
/// rather than an old model's.
///
/// Anthropic: base input, output, cache hits, 5-minute cache writes (1.25× input; vaultchat
/// writes only 5-minute entries). Requests over 200k input tokens cost more on Sonnet 4 and 4.5,
/// but vaultchat never sends one (their window here is 200k, see `llm::window`).
/// OpenAI: input, output, cached input; a cache write costs the input price (OpenAI charges
/// nothing extra to fill its cache).
const TABLE: &[(&str, Price)] = &[
    // Anthropic, https://docs.claude.com/en/docs/about-claude/pricing
    ("claude-opus-4-5", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-1", usd(15.0, 75.0, 1.50, 18.75)),
    ("claude-opus-4", usd(15.0, 75.0, 1.50, 18.75)),
    ("claude-opus-4-0", usd(15.0, 75.0, 1.50, 18.75)),
    ("claude-sonnet-4-5", usd(3.0, 15.0, 0.30, 3.75)),
    ("claude-sonnet-4", usd(3.0, 15.0, 0.30, 3.75)),
    ("claude-sonnet-4-0", usd(3.0, 15.0, 0.30, 3.75)),
    ("claude-3-7-sonnet", usd(3.0, 15.0, 0.30, 3.75)),
    ("claude-3-5-sonnet", usd(3.0, 15.0, 0.30, 3.75)),
    ("claude-haiku-4-5", usd(1.0, 5.0, 0.10, 1.25)),
    ("claude-3-5-haiku", usd(0.80, 4.0, 0.08, 1.0)),
    ("claude-3-haiku", usd(0.25, 1.25, 0.03, 0.30)),
    ("claude-3-opus", usd(15.0, 75.0, 1.50, 18.75)),
    // OpenAI, https://platform.openai.com/docs/pricing (standard tier)
    ("gpt-5.1", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5.1-codex", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5.1-codex-mini", usd(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5.1-chat-latest", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-codex", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-chat-latest", usd(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", usd(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-nano", usd(0.05, 0.40, 0.005, 0.05)),
    ("gpt-4.1", usd(2.0, 8.0, 0.50, 2.0)),
    ("gpt-4.1-mini", usd(0.40, 1.60, 0.10, 0.40)),
    ("gpt-4.1-nano", usd(0.10, 0.40, 0.025, 0.10)),
    ("gpt-4o", usd(2.50, 10.0, 1.25, 2.50)),
    // The first gpt-4o snapshot kept its launch price.
    ("gpt-4o-2024-05-13", usd(5.0, 15.0, 5.0, 5.0)),
    ("gpt-4o-mini", usd(0.15, 0.60, 0.075, 0.15)),
    ("o3", usd(2.0, 8.0, 0.50, 2.0)),
    ("o3-mini", usd(1.10, 4.40, 0.55, 1.10)),
    ("o4-mini", usd(1.10, 4.40, 0.275, 1.10)),
    ("o1", usd(15.0, 60.0, 7.50, 15.0)),
];

/// Whether `rest` (what follows a table name in a model name) is empty, a snapshot date
/// (`-20250929`, `-2024-08-06`) or `-latest`.
fn is_snapshot_suffix(rest: &str) -> bool {
    let Some(tail) = rest.strip_prefix('-') else {
        return rest.is_empty();
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if tail == "latest" || digits(tail, 8) {
        return true;
    }
    let parts: Vec<&str> = tail.split('-').collect();
    matches!(parts.as_slice(), [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2))
}

/// The built-in list price of `model`, by name (case-insensitive; a routing prefix such as
/// `anthropic/` is looked through).
pub fn builtin(model: &str) -> Option<Price> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    if let Some(&(_, price)) = TABLE.iter().find(|(known, _)| *known == name) {
        return Some(price);
    }
    TABLE
        .iter()
        .filter(|(known, _)| name.strip_prefix(known).is_some_and(is_snapshot_suffix))
        .max_by_key(|(known, _)| known.len())
        .map(|&(_, price)| price)
}

impl Config {
    /// The price of `provider/model` (or a bare model name): `[prices.MODEL]` over the built-in
    /// list prices; `None` when neither knows the model.
    pub fn price_of(&self, provider_model: &str) -> Option<ModelPrice> {
        let model = provider_model
            .split_once('/')
            .map_or(provider_model, |(_, m)| m);
        if let Some(price) = self.prices.get(model) {
            return Some(ModelPrice {
                price: *price,
                source: PriceSource::Config,
            });
        }
        builtin(model).map(|price| ModelPrice {
            price,
            source: PriceSource::BuiltIn,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn models_and_their_snapshots_have_list_prices() {
        for (model, input, output) in [
            ("claude-sonnet-4-5", 3.0, 15.0),
            ("claude-sonnet-4-5-20250929", 3.0, 15.0),
            ("anthropic/claude-sonnet-4-5", 3.0, 15.0),
            ("claude-opus-4-5-20251101", 5.0, 25.0),
            ("claude-opus-4-1-20250805", 15.0, 75.0),
            ("claude-opus-4-20250514", 15.0, 75.0),
            ("claude-haiku-4-5", 1.0, 5.0),
            ("claude-3-5-haiku-latest", 0.80, 4.0),
            ("claude-3-7-sonnet-20250219", 3.0, 15.0),
            ("gpt-4o", 2.50, 10.0),
            ("gpt-4o-2024-08-06", 2.50, 10.0),
            ("gpt-4o-2024-05-13", 5.0, 15.0),
            ("gpt-4o-mini", 0.15, 0.60),
            ("gpt-4o-mini-2024-07-18", 0.15, 0.60),
            ("GPT-5-mini", 0.25, 2.0),
            ("gpt-5.1", 1.25, 10.0),
            ("o4-mini", 1.10, 4.40),
        ] {
            let price = builtin(model).unwrap_or_else(|| panic!("{model} has no price"));
            assert_eq!((price.input, price.output), (input, output), "{model}");
        }
    }

    #[test]
    fn a_name_that_only_starts_like_a_known_model_has_no_price() {
        // A newer Opus is not priced as Opus 4, a fine-tune or a local model not at all.
        for model in [
            "claude-opus-4-6",
            "claude-sonnet-4-5-my-finetune",
            "gpt-4o-mini-search",
            "gpt-5x",
            "llama3.2",
            "qwen2.5:7b",
            "",
        ] {
            assert_eq!(builtin(model), None, "{model}");
        }
    }

    /// Cache hits cost 0.1× and 5-minute writes 1.25× the input price; the pricing page rounds
    /// the small ones (Claude 3 Haiku: $0.03 and $0.30 for 0.025 and 0.3125), so a typo in the
    /// table shows and the page's rounding does not.
    #[test]
    fn anthropic_cache_prices_are_the_published_ratios() {
        for (name, price) in TABLE.iter().filter(|(n, _)| n.starts_with("claude")) {
            let read = price.cache_read.unwrap();
            let write = price.cache_write.unwrap();
            assert!((read - price.input * 0.1).abs() <= 0.005, "{name} read");
            assert!((write - price.input * 1.25).abs() <= 0.013, "{name} write");
        }
    }

    #[test]
    fn the_config_overrides_the_table() {
        let mut config = Config::default();
        let built_in = config.price_of("anthropic/claude-sonnet-4-5").unwrap();
        assert_eq!(built_in.source, PriceSource::BuiltIn);
        assert_eq!(built_in.price.input, 3.0);
        config.prices.insert(
            "claude-sonnet-4-5".into(),
            Price {
                input: 1.0,
                output: 2.0,
                cache_read: None,
                cache_write: None,
            },
        );
        let configured = config.price_of("anthropic/claude-sonnet-4-5").unwrap();
        assert_eq!(configured.source, PriceSource::Config);
        assert_eq!(configured.price.input, 1.0);
        assert_eq!(config.price_of("openai/llama3.2"), None);
    }
}
