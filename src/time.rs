//! The one clock of the crate and its UTC calendar, on the `time` crate.
//!
//! **The clock.** [`now_ms`] and [`now_ns`] answer "what time is it" for everything vaultchat
//! records or shows: session and message times, revisions, usage, "Recent" notes, trust answers,
//! the index's last sync. Tests move it two ways:
//! * a unit test fixes it on its own thread with [`fix_now_ms`] (a guard; dropped, the clock is
//!   back). It is per thread rather than per process because `cargo test` runs a binary's tests as
//!   threads of one process (nextest runs each in a process of its own), so a fixed clock never
//!   leaks into a test that did not ask for it; code the test runs on other threads (a blocking
//!   pool) sees the real clock.
//! * a process-level test sets [`NOW_ENV`] (`VAULTCHAT_NOW_MS`, Unix milliseconds) for the child
//!   process: read once, the clock starts at that instant and runs on with the monotonic clock, so
//!   dates are known and times still move forward (sessions and revisions stay in order).
//!
//! Not every reading of the system clock is "what time is it": unique-name seeds (temp files,
//! request and session ids), the retry jitter and comparisons with file modification times (which
//! the kernel stamps with the real clock) read `SystemTime` where they are, each saying why.
//!
//! **The calendar.** Day numbers count days since 1970-01-01 (UTC); a day starts at a multiple of
//! [`DAY_MS`]. Dates are written `YYYY-MM-DD`, minutes `YYYY-MM-DD HH:MM`, timestamps RFC 3339 in
//! whole seconds (`2026-11-30T09:15:00Z`). Instants beyond the years the `time` crate knows
//! (±9999) are shown as its first or last instant rather than failing.
//!
//! **moment.js formats** ([`moment`]): the date formats Obsidian's daily notes and templates are
//! written in, on this calendar.
//!
//! A leaf: it imports nothing from the crate.

pub mod moment;

use ::time::format_description::BorrowedFormatItem;
use ::time::macros::format_description;
use ::time::{Date, OffsetDateTime, PrimitiveDateTime, Time};
use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// Nanoseconds in a day.
pub const DAY_NS: i64 = 86_400 * 1_000_000_000;

/// The environment variable that starts a process's clock at a given Unix time in milliseconds
/// (for process-level tests; see the module comment).
pub const NOW_ENV: &str = "VAULTCHAT_NOW_MS";

/// The Julian day number of 1970-01-01.
const EPOCH_JULIAN_DAY: i64 = 2_440_588;

const DAY: &[BorrowedFormatItem<'_>] = format_description!("[year]-[month]-[day]");
const MINUTE: &[BorrowedFormatItem<'_>] =
    format_description!("[year]-[month]-[day] [hour]:[minute]");
const RFC3339_SECONDS: &[BorrowedFormatItem<'_>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");

// ---------------------------------------------------------------------------------------------
// The clock

thread_local! {
    /// The instant [`fix_now_ms`] set on this thread, in Unix nanoseconds.
    static FIXED_NS: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Now, in milliseconds since the Unix epoch (UTC).
pub fn now_ms() -> i64 {
    now_ns().div_euclid(1_000_000)
}

/// Now, in nanoseconds since the Unix epoch (UTC).
pub fn now_ns() -> i64 {
    if let Some(fixed) = FIXED_NS.with(Cell::get) {
        return fixed;
    }
    match started_from_env() {
        Some(start) => start.now_ns(),
        None => system_now_ns(),
    }
}

/// The clock of this thread stands at `unix_ms` until the guard is dropped (for unit tests).
/// Guards nest: dropping one puts back what was there before it.
pub fn fix_now_ms(unix_ms: i64) -> FixedClock {
    let previous = FIXED_NS.with(|fixed| fixed.replace(Some(unix_ms.saturating_mul(1_000_000))));
    FixedClock { previous }
}

/// A fixed clock on one thread; see [`fix_now_ms`].
#[must_use = "the clock is fixed only while the guard lives"]
pub struct FixedClock {
    previous: Option<i64>,
}

impl FixedClock {
    /// Moves the fixed clock to `unix_ms`.
    pub fn set_ms(&self, unix_ms: i64) {
        FIXED_NS.with(|fixed| fixed.set(Some(unix_ms.saturating_mul(1_000_000))));
    }

    /// Moves the fixed clock on by `ms` milliseconds.
    pub fn advance_ms(&self, ms: i64) {
        self.set_ms(now_ms().saturating_add(ms));
    }
}

impl Drop for FixedClock {
    fn drop(&mut self) {
        FIXED_NS.with(|fixed| fixed.set(self.previous));
    }
}

/// A clock started at a chosen instant that runs on with the monotonic clock.
#[derive(Debug, Clone, Copy)]
struct Started {
    at_ns: i64,
    since: Instant,
}

impl Started {
    fn now_ns(&self) -> i64 {
        let elapsed = i64::try_from(self.since.elapsed().as_nanos()).unwrap_or(i64::MAX);
        self.at_ns.saturating_add(elapsed)
    }
}

/// The clock [`NOW_ENV`] asks for, read the first time the clock is.
fn started_from_env() -> Option<Started> {
    static STARTED: OnceLock<Option<Started>> = OnceLock::new();
    *STARTED.get_or_init(|| {
        let at_ms = parse_env_ms(std::env::var(NOW_ENV).ok().as_deref())?;
        Some(Started {
            at_ns: at_ms.saturating_mul(1_000_000),
            since: Instant::now(),
        })
    })
}

/// The Unix milliseconds of [`NOW_ENV`]'s value; `None` (the real clock) when unset or not an
/// integer, so a stray value cannot stop the clock at some odd instant.
fn parse_env_ms(value: Option<&str>) -> Option<i64> {
    value?.trim().parse().ok()
}

/// The system's wall clock; before 1970 (a broken clock) counts as the epoch.
fn system_now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        })
}

// ---------------------------------------------------------------------------------------------
// The calendar

/// The day number (days since 1970-01-01, UTC) of a Unix time in milliseconds.
pub fn day_number(unix_ms: i64) -> i64 {
    unix_ms.div_euclid(DAY_MS)
}

/// Midnight UTC of a day number, in Unix milliseconds.
pub fn day_start_ms(day: i64) -> i64 {
    day.saturating_mul(DAY_MS)
}

/// Midnight UTC of the first of the `days` days that end with the day of `now_ms` (`days` = 1:
/// today's midnight).
pub fn period_start_ms(now_ms: i64, days: i64) -> i64 {
    day_start_ms(day_number(now_ms).saturating_sub(days).saturating_add(1))
}

/// The calendar date (year, month 1–12, day 1–31) of a day number.
pub fn calendar_date(day: i64) -> (i32, u8, u8) {
    let date = date_of_day(day);
    (date.year(), u8::from(date.month()), date.day())
}

/// The day number of a `YYYY-MM-DD` date; `None` when it is not such a date (`2026-02-30` is not).
pub fn parse_day(text: &str) -> Option<i64> {
    let date = Date::parse(text, DAY).ok()?;
    Some(i64::from(date.to_julian_day()) - EPOCH_JULIAN_DAY)
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds.
pub fn format_day(unix_ms: i64) -> String {
    render(utc_of_ns(i128::from(unix_ms) * 1_000_000), DAY)
}

/// `YYYY-MM-DD HH:MM` (UTC) of a Unix time in milliseconds.
pub fn format_minute(unix_ms: i64) -> String {
    render(utc_of_ns(i128::from(unix_ms) * 1_000_000), MINUTE)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC, whole seconds) of a Unix time in milliseconds.
pub fn format_rfc3339_ms(unix_ms: i64) -> String {
    render(utc_of_ns(i128::from(unix_ms) * 1_000_000), RFC3339_SECONDS)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC, whole seconds) of a Unix time in nanoseconds.
pub fn format_rfc3339_ns(unix_ns: i64) -> String {
    render(utc_of_ns(i128::from(unix_ns)), RFC3339_SECONDS)
}

fn date_of_day(day: i64) -> Date {
    i32::try_from(day.saturating_add(EPOCH_JULIAN_DAY))
        .ok()
        .and_then(|julian| Date::from_julian_day(julian).ok())
        .unwrap_or(if day < 0 { Date::MIN } else { Date::MAX })
}

/// The UTC date and time of a Unix time in nanoseconds, held to the years the crate knows.
fn utc_of_ns(unix_ns: i128) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(unix_ns).unwrap_or_else(|_| {
        if unix_ns < 0 {
            PrimitiveDateTime::new(Date::MIN, Time::MIDNIGHT).assume_utc()
        } else {
            PrimitiveDateTime::new(Date::MAX, Time::MAX).assume_utc()
        }
    })
}

fn render(at: OffsetDateTime, format: &[BorrowedFormatItem<'_>]) -> String {
    // Formatting fails only when the value lacks a component the format names or the output
    // cannot be written; an `OffsetDateTime` has all of them and a `String` always grows.
    at.format(format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn known_instants_format_in_utc() {
        assert_eq!(format_day(0), "1970-01-01");
        assert_eq!(format_day(-1), "1969-12-31");
        assert_eq!(format_day(1_795_996_800_000), "2026-11-30");
        assert_eq!(format_day(951_782_400_000), "2000-02-29");
        assert_eq!(format_minute(0), "1970-01-01 00:00");
        assert_eq!(format_minute(1_796_036_645_123), "2026-11-30 11:04");
        assert_eq!(format_minute(-60_000), "1969-12-31 23:59");
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339_ms(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(format_rfc3339_ms(1_796_036_645_123), "2026-11-30T11:04:05Z");
        assert_eq!(format_rfc3339_ms(-1000), "1969-12-31T23:59:59Z");
        assert_eq!(format_rfc3339_ms(-1), "1969-12-31T23:59:59Z");
        assert_eq!(format_rfc3339_ns(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_rfc3339_ns(1_795_000_000_123_456_789),
            "2026-11-18T11:06:40Z"
        );
    }

    #[test]
    fn instants_past_the_calendar_are_held_to_its_ends() {
        assert_eq!(format_day(i64::MAX), "9999-12-31");
        assert_eq!(format_day(i64::MIN), "-9999-01-01");
        assert_eq!(calendar_date(i64::MAX), (9999, 12, 31));
        assert_eq!(calendar_date(i64::MIN), (-9999, 1, 1));
    }

    #[test]
    fn days_and_dates_convert_both_ways() {
        assert_eq!(parse_day("1970-01-01"), Some(0));
        assert_eq!(parse_day("2000-03-01"), Some(11_017));
        assert_eq!(parse_day("2026-11-30"), Some(20_787));
        assert_eq!(calendar_date(0), (1970, 1, 1));
        assert_eq!(calendar_date(11_016), (2000, 2, 29));
        for day in [-1, 0, 1, 59, 60, 11_016, 19_783, 20_787, 2_932_896] {
            let (y, m, d) = calendar_date(day);
            assert_eq!(
                parse_day(&format!("{y:04}-{m:02}-{d:02}")),
                Some(day),
                "{day}"
            );
            assert_eq!(
                parse_day(&format_day(day_start_ms(day))),
                Some(day),
                "{day}"
            );
        }
        for not_a_date in ["2024-13-01", "2026-02-30", "2026-1-5", "yesterday", ""] {
            assert_eq!(parse_day(not_a_date), None, "{not_a_date}");
        }
    }

    #[test]
    fn days_begin_at_midnight_utc() {
        let midnight = 1_795_996_800_000; // 2026-11-30T00:00:00Z
        assert_eq!(day_number(midnight), 20_787);
        assert_eq!(day_number(midnight - 1), 20_786);
        assert_eq!(day_number(midnight + DAY_MS - 1), 20_787);
        assert_eq!(day_number(-1), -1);
        assert_eq!(day_start_ms(20_787), midnight);
        assert_eq!(format_rfc3339_ms(midnight - 1), "2026-11-29T23:59:59Z");
        // The last 30 days up to 2026-11-30 11:04 begin at 2026-11-01 00:00.
        let now = 1_796_036_645_123;
        assert_eq!(format_minute(period_start_ms(now, 30)), "2026-11-01 00:00");
        assert_eq!(period_start_ms(now, 1), midnight);
        assert_eq!(period_start_ms(midnight, 1), midnight);
        assert_eq!(period_start_ms(midnight - 1, 1), midnight - DAY_MS);
        assert_eq!(DAY_NS, DAY_MS * 1_000_000);
    }

    #[test]
    fn a_fixed_clock_moves_now_on_its_thread_only() {
        let real = now_ms();
        {
            let clock = fix_now_ms(1_795_996_800_000);
            assert_eq!(now_ms(), 1_795_996_800_000);
            assert_eq!(now_ns(), 1_795_996_800_000_000_000);
            assert_eq!(format_day(now_ms()), "2026-11-30");
            clock.advance_ms(DAY_MS);
            assert_eq!(format_day(now_ms()), "2026-12-01");
            {
                let _inner = fix_now_ms(0);
                assert_eq!(now_ms(), 0);
            }
            assert_eq!(now_ms(), 1_795_996_800_000 + DAY_MS);
            let elsewhere = std::thread::spawn(now_ms).join().unwrap();
            assert!(elsewhere >= real, "{elsewhere} < {real}");
            clock.set_ms(5);
            assert_eq!(now_ms(), 5);
        }
        assert!(now_ms() >= real);
    }

    #[test]
    fn a_started_clock_runs_on_from_its_instant() {
        assert_eq!(
            parse_env_ms(Some(" 1795996800000\n")),
            Some(1_795_996_800_000)
        );
        assert_eq!(parse_env_ms(Some("tomorrow")), None);
        assert_eq!(parse_env_ms(None), None);
        let started = Started {
            at_ns: 1_795_996_800_000_000_000,
            since: Instant::now(),
        };
        let first = started.now_ns();
        // Pacing only: the monotonic clock moves on (checked just below).
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = started.now_ns();
        assert!(first >= started.at_ns);
        assert!(second > first);
        assert_eq!(format_day(second.div_euclid(1_000_000)), "2026-11-30");
    }
}
