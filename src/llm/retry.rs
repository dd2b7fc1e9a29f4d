//! The retry policy of the official Anthropic and OpenAI SDKs (docs/protocols.md §3), as pure
//! functions: which failures are worth another attempt, and how long to wait before it.
//!
//! Retries only ever happen before the first byte of a successful body: after that the model has
//! already generated (and billed) the answer, and sending the request again would duplicate it.

use reqwest::header::HeaderMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first back-off wait.
const INITIAL_WAIT: Duration = Duration::from_millis(500);
/// The longest back-off wait.
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// A server-requested wait longer than this is ignored in favour of the back-off (the SDKs do
/// the same: the agent should not hang for minutes on one header).
const MAX_SERVER_WAIT: Duration = Duration::from_secs(60);

/// Whether an HTTP error response is worth retrying: 408, 409, 429 and every 5xx (including
/// Anthropic's 529), unless the server says otherwise with `x-should-retry`. A 429 that reports a
/// spend limit and gives no `retry-after` keeps failing until someone raises the limit, so it is
/// not retried.
pub(crate) fn is_retryable_status(status: u16, headers: &HeaderMap, body: &str) -> bool {
    match header_text(headers, "x-should-retry") {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    if status == 429
        && !headers.contains_key("retry-after")
        && body.contains("enforced_spend_limit_reached")
    {
        return false;
    }
    matches!(status, 408 | 409 | 429 | 500..)
}

/// How long to wait before retry number `retries_done + 1`. The server's `retry-after-ms`
/// (milliseconds) or `retry-after` (seconds, possibly fractional) wins when it is in (0, 60] s;
/// otherwise `min(0.5 s · 2^retries_done, 8 s)`, shortened by up to 25 % by `jitter` (in [0, 1)) so
/// that clients that failed together do not retry together. `headers` is `None` after a
/// connection failure.
pub(crate) fn retry_wait(retries_done: u32, headers: Option<&HeaderMap>, jitter: f64) -> Duration {
    if let Some(wait) = headers.and_then(server_requested_wait) {
        return wait;
    }
    let doubled = INITIAL_WAIT.saturating_mul(2u32.saturating_pow(retries_done));
    doubled
        .min(MAX_BACKOFF)
        .mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
}

/// A number in [0, 1) that differs from call to call; random enough to spread retries out, with
/// no random-number crate.
pub(crate) fn jitter_sample() -> f64 {
    // A random seed, not "what time is it": the real clock's nanoseconds, never `crate::time`'s,
    // which a test may fix (every sample would be the same, retries in step again).
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    f64::from(nanos % 1000) / 1000.0
}

fn server_requested_wait(headers: &HeaderMap) -> Option<Duration> {
    let parse = |name: &str, unit_seconds: f64| {
        header_text(headers, name)?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value > 0.0)
            .and_then(|value| Duration::try_from_secs_f64(value * unit_seconds).ok())
            .filter(|wait| *wait <= MAX_SERVER_WAIT)
    };
    // An HTTP-date `retry-after` does not parse as a number and falls back to the back-off.
    parse("retry-after-ms", 0.001).or_else(|| parse("retry-after", 1.0))
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    #[test]
    fn transient_statuses_are_retried_and_client_errors_are_not() {
        let none = HeaderMap::new();
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status, &none, ""), "{status}");
        }
        for status in [400, 401, 402, 403, 404, 413, 422] {
            assert!(!is_retryable_status(status, &none, ""), "{status}");
        }
    }

    #[test]
    fn x_should_retry_overrides_the_status() {
        assert!(is_retryable_status(
            400,
            &headers(&[("x-should-retry", "true")]),
            ""
        ));
        assert!(!is_retryable_status(
            529,
            &headers(&[("x-should-retry", "false")]),
            ""
        ));
        assert!(is_retryable_status(
            529,
            &headers(&[("x-should-retry", "maybe")]),
            ""
        ));
    }

    #[test]
    fn a_spend_limit_429_without_retry_after_is_not_retried() {
        let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"cap","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
        assert!(!is_retryable_status(429, &HeaderMap::new(), body));
        assert!(is_retryable_status(
            429,
            &headers(&[("retry-after", "3")]),
            body
        ));
        assert!(is_retryable_status(429, &HeaderMap::new(), "{}"));
    }

    #[test]
    fn retry_after_ms_wins() {
        let map = headers(&[("retry-after-ms", "1500"), ("retry-after", "7")]);
        assert_eq!(retry_wait(0, Some(&map), 0.5), Duration::from_millis(1500));
    }

    #[test]
    fn retry_after_seconds_may_be_fractional() {
        let map = headers(&[("retry-after", "7")]);
        assert_eq!(retry_wait(3, Some(&map), 0.9), Duration::from_secs(7));
        let map = headers(&[("retry-after", "2.5")]);
        assert_eq!(retry_wait(0, Some(&map), 0.0), Duration::from_millis(2500));
    }

    #[test]
    fn out_of_range_or_unreadable_retry_after_falls_back_to_backoff() {
        for value in [
            "0",
            "-1",
            "61",
            "120",
            "soon",
            "Wed, 21 Oct 2015 07:28:00 GMT",
        ] {
            let map = {
                let mut map = HeaderMap::new();
                map.insert("retry-after", HeaderValue::from_str(value).unwrap());
                map
            };
            assert_eq!(
                retry_wait(1, Some(&map), 0.0),
                Duration::from_secs(1),
                "{value}"
            );
        }
        let map = headers(&[("retry-after-ms", "90000")]);
        assert_eq!(retry_wait(0, Some(&map), 0.0), Duration::from_millis(500));
    }

    #[test]
    fn backoff_doubles_up_to_eight_seconds() {
        let waits: Vec<Duration> = (0..7).map(|n| retry_wait(n, None, 0.0)).collect();
        assert_eq!(
            waits,
            [500, 1000, 2000, 4000, 8000, 8000, 8000].map(Duration::from_millis)
        );
        assert_eq!(retry_wait(100, None, 0.0), Duration::from_secs(8));
    }

    #[test]
    fn jitter_shortens_the_backoff_by_at_most_a_quarter() {
        assert_eq!(retry_wait(1, None, 0.5), Duration::from_millis(875));
        assert_eq!(retry_wait(1, None, 1.0), Duration::from_millis(750));
        let sample = jitter_sample();
        assert!((0.0..1.0).contains(&sample));
    }
}
