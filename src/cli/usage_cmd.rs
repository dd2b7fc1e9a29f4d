//! `vaultchat usage [--days N] [--json]`: tokens, cache hits and cost, per day and per session.

use super::outln;
use super::{Context, Failure};
use crate::config::{BUILT_IN_AS_OF, PriceSource};
use crate::store::{CostEstimate, Store, TokenTotals, estimate_cost};
use clap::Args;
use serde_json::{Value, json};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct UsageArgs {
    /// How many days back, today included.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub days: u32,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &UsageArgs) -> Result<ExitCode, Failure> {
    let store = Store::open(&ctx.paths.database_file())?;
    // Midnight UTC of the first day shown.
    let since = crate::time::period_start_ms(crate::time::now_ms(), i64::from(args.days));
    let totals = store.usage_totals(since)?;
    let days = store.usage_by_day(since)?;
    let sessions = store.usage_by_session(since, 20)?;
    let price_of = |model: &str| ctx.config.price_of(model);
    let estimate = estimate_cost(&days, price_of);
    let by_day: Vec<Value> = days
        .iter()
        .map(|d| {
            let day_cost = estimate_cost(std::slice::from_ref(d), price_of).usd;
            json!({ "day": d.day, "usage": usage_json(&d.totals), "cost_usd": day_cost })
        })
        .collect();
    let priced_all = estimate.complete();
    let cost_json = if estimate.priced_any() {
        json!(round_cents(estimate.usd))
    } else {
        Value::Null
    };
    let prices: Vec<Value> = estimate
        .models
        .iter()
        .map(|(model, source)| match source {
            Some(PriceSource::BuiltIn) => {
                json!({ "model": model, "source": "built-in", "as_of": BUILT_IN_AS_OF })
            }
            Some(PriceSource::Config) => json!({ "model": model, "source": "config" }),
            None => json!({ "model": model, "source": Value::Null }),
        })
        .collect();
    if args.json {
        let by_session: Vec<Value> = sessions
            .iter()
            .map(|(id, title, t)| json!({ "session_id": id, "title": title, "usage": usage_json(t) }))
            .collect();
        outln!(
            "{}",
            json!({
                "days": args.days,
                "usage": usage_json(&totals),
                "responses": totals.responses,
                "estimated_responses": totals.estimated_responses,
                "cache_hit_percent": cache_hit_percent(&totals),
                "cost_usd": cost_json,
                "cost_complete": priced_all,
                "prices": prices,
                "by_day": by_day,
                "by_session": by_session,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mark = estimate_mark(&totals);
    outln!(
        "last {} day(s): {} responses{}, {mark}{} input + {mark}{} output tokens, {} cache read, {} cache write; cache hits {:.1}%",
        args.days,
        totals.responses,
        estimated_note(&totals),
        totals.input_tokens,
        totals.output_tokens,
        totals.cache_read_tokens,
        totals.cache_write_tokens,
        cache_hit_percent(&totals)
    );
    match cost_json.as_f64() {
        Some(c) if priced_all => outln!("estimated cost: ${c:.2}"),
        Some(c) => outln!("estimated cost: at least ${c:.2} (some models have no price)"),
        None if estimate.models.is_empty() => outln!("estimated cost: $0.00"),
        None => outln!("estimated cost: unknown (no price for these models)"),
    }
    for line in price_lines(&estimate) {
        outln!("{line}");
    }
    for d in &days {
        let mark = estimate_mark(&d.totals);
        outln!(
            "  {}  in {:>9}  out {:>8}  cache {:>9}",
            d.day,
            format!("{mark}{}", d.totals.input_tokens),
            format!("{mark}{}", d.totals.output_tokens),
            d.totals.cache_read_tokens + d.totals.cache_write_tokens
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the prices came from, one line per kind of source that priced something.
fn price_lines(estimate: &CostEstimate) -> Vec<String> {
    let names =
        |source| crate::quote::terminal_text(&estimate.models_by(source).join(", ")).into_owned();
    let mut lines = Vec::new();
    if !estimate.models_by(Some(PriceSource::BuiltIn)).is_empty() {
        lines.push(format!(
            "  built-in list prices of {BUILT_IN_AS_OF}: {} ([prices] in the config overrides them)",
            names(Some(PriceSource::BuiltIn))
        ));
    }
    if !estimate.models_by(Some(PriceSource::Config)).is_empty() {
        lines.push(format!(
            "  [prices] in the config: {}",
            names(Some(PriceSource::Config))
        ));
    }
    if !estimate.models_by(None).is_empty() {
        lines.push(format!(
            "  no price (add [prices.\"MODEL\"] to the config): {}",
            names(None)
        ));
    }
    lines
}

/// The same field names as `ask --json`'s `usage`; `estimated` when any response summed had
/// its counts estimated (its provider reported none).
fn usage_json(t: &TokenTotals) -> Value {
    json!({
        "input_tokens": t.input_tokens,
        "output_tokens": t.output_tokens,
        "cache_read_input_tokens": t.cache_read_tokens,
        "cache_creation_input_tokens": t.cache_write_tokens,
        "estimated": t.is_estimated(),
    })
}

/// `~` before token figures that include estimates, as the app shows them.
fn estimate_mark(t: &TokenTotals) -> &'static str {
    if t.is_estimated() { "~" } else { "" }
}

/// How many of the responses were estimated, when any were.
fn estimated_note(t: &TokenTotals) -> String {
    if t.is_estimated() {
        format!(" ({} with estimated tokens)", t.estimated_responses)
    } else {
        String::new()
    }
}

/// Cached input as a share of all input.
fn cache_hit_percent(t: &TokenTotals) -> f64 {
    let all = t.input_tokens + t.cache_read_tokens + t.cache_write_tokens;
    if all == 0 {
        0.0
    } else {
        (t.cache_read_tokens as f64 * 1000.0 / all as f64).round() / 10.0
    }
}

fn round_cents(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Price;

    #[test]
    fn cache_hits_are_a_share_of_all_input() {
        let t = TokenTotals {
            input_tokens: 100,
            output_tokens: 5,
            cache_read_tokens: 300,
            cache_write_tokens: 100,
            responses: 1,
            estimated_responses: 0,
        };
        assert_eq!(cache_hit_percent(&t), 60.0);
        let p = Price {
            input: 3.0,
            output: 15.0,
            cache_read: None,
            cache_write: None,
        };
        let expected = (100.0 * 3.0 + 5.0 * 15.0 + 300.0 * 0.3 + 100.0 * 3.75) / 1e6;
        assert!((t.cost(&p) - expected).abs() < 1e-12);
    }
}
