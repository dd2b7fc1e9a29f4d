//! moment.js date formats, as Obsidian's daily notes and templates write them
//! (`YYYY-MM-DD`, `YYYY/MM/YYYY-MM-DD ddd`, `dddd, MMMM Do YYYY`, `[Week] ww`), on the one UTC
//! calendar of [`crate::time`].
//!
//! A format is cut into tokens as moment cuts it: at each place the longest token moment knows,
//! `[text]` copied as written, `\x` one character copied, anything else copied. The tokens
//! implemented are the ones Obsidian users write (moment's `en` locale): years `YYYY YY`, months
//! `M MM MMM MMMM Mo`, days `D DD Do DDD DDDD`, weekdays `d do dd ddd dddd e E`, locale weeks
//! `w ww wo gg gggg` (weeks start on Sunday and week 1 holds 1 January, moment's default), ISO
//! weeks `W WW Wo GG GGGG`, quarters `Q Qo`, times `H HH h hh k kk m mm s ss S… A a`, and Unix
//! `X x`. moment's other tokens (era, time zone names) are copied as written rather than guessed.
//!
//! Leaf code: only the calendar of its parent module.

use ::time::{Date, OffsetDateTime, PrimitiveDateTime, Time, Weekday};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Sunday first, as moment's `day()` counts.
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The tokens, longest first where one is the start of another (moment's own order).
const TOKENS: &[&str] = &[
    "YYYY", "YY", "MMMM", "MMM", "MM", "Mo", "M", "DDDD", "DDDo", "DDD", "DD", "Do", "D", "dddd",
    "ddd", "dd", "do", "d", "e", "E", "ww", "wo", "w", "WW", "Wo", "W", "gggg", "gg", "GGGG", "GG",
    "Qo", "Q", "HH", "H", "hh", "h", "kk", "k", "mm", "m", "ss", "s", "SSS", "SS", "S", "A", "a",
    "X", "x",
];

/// `pattern` filled in for the UTC instant `unix_ms`.
pub fn format_ms(pattern: &str, unix_ms: i64) -> String {
    format(pattern, &utc_of_ms(unix_ms))
}

/// `pattern` filled in for a date and time of day.
pub fn format(pattern: &str, at: &PrimitiveDateTime) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if c == '[' {
            // `[text]` is copied as written; a `[` with no `]` after it (and before the next
            // `[`) is an ordinary character, as in moment.
            if let Some(end) = rest[1..]
                .find([']', '['])
                .filter(|&e| rest[1 + e..].starts_with(']'))
            {
                out.push_str(&rest[1..1 + end]);
                rest = &rest[end + 2..];
                continue;
            }
        }
        if c == '\\' {
            let mut chars = rest[1..].chars();
            if let Some(escaped) = chars.next() {
                out.push(escaped);
                rest = chars.as_str();
                continue;
            }
        }
        if let Some(token) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            token_value(token, at, &mut out);
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The UTC date and time of `unix_ms`, held to the years the calendar knows.
fn utc_of_ms(unix_ms: i64) -> PrimitiveDateTime {
    match OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_ms) * 1_000_000) {
        Ok(at) => PrimitiveDateTime::new(at.date(), at.time()),
        Err(_) if unix_ms < 0 => PrimitiveDateTime::new(Date::MIN, Time::MIDNIGHT),
        Err(_) => PrimitiveDateTime::new(Date::MAX, Time::MAX),
    }
}

fn token_value(token: &str, at: &PrimitiveDateTime, out: &mut String) {
    use std::fmt::Write;
    let date = at.date();
    let year = date.year();
    let month = u8::from(date.month());
    let day = date.day();
    let weekday = usize::from(date.weekday().number_days_from_sunday());
    let hour = at.hour();
    // Writing into a `String` never fails.
    let _ = match token {
        "YYYY" => write!(out, "{}", four_digit_year(year)),
        "YY" => write!(out, "{:02}", year.rem_euclid(100)),
        "MMMM" => write!(out, "{}", MONTHS[usize::from(month - 1)]),
        "MMM" => write!(out, "{}", &MONTHS[usize::from(month - 1)][..3]),
        "MM" => write!(out, "{month:02}"),
        "Mo" => write!(out, "{}", ordinal(u32::from(month))),
        "M" => write!(out, "{month}"),
        "DDDD" => write!(out, "{:03}", date.ordinal()),
        "DDDo" => write!(out, "{}", ordinal(u32::from(date.ordinal()))),
        "DDD" => write!(out, "{}", date.ordinal()),
        "DD" => write!(out, "{day:02}"),
        "Do" => write!(out, "{}", ordinal(u32::from(day))),
        "D" => write!(out, "{day}"),
        "dddd" => write!(out, "{}", WEEKDAYS[weekday]),
        "ddd" => write!(out, "{}", &WEEKDAYS[weekday][..3]),
        "dd" => write!(out, "{}", &WEEKDAYS[weekday][..2]),
        "do" => write!(out, "{}", ordinal(weekday as u32)),
        // The en locale's week starts on Sunday, so its weekday number is moment's `day()`.
        "d" | "e" => write!(out, "{weekday}"),
        "E" => write!(out, "{}", date.weekday().number_from_monday()),
        "ww" => write!(out, "{:02}", locale_week(date).week),
        "wo" => write!(out, "{}", ordinal(locale_week(date).week)),
        "w" => write!(out, "{}", locale_week(date).week),
        "gggg" => write!(out, "{}", four_digit_year(locale_week(date).year)),
        "gg" => write!(out, "{:02}", locale_week(date).year.rem_euclid(100)),
        "WW" => write!(out, "{:02}", date.iso_week()),
        "Wo" => write!(out, "{}", ordinal(u32::from(date.iso_week()))),
        "W" => write!(out, "{}", date.iso_week()),
        "GGGG" => write!(out, "{}", four_digit_year(date.to_iso_week_date().0)),
        "GG" => write!(out, "{:02}", date.to_iso_week_date().0.rem_euclid(100)),
        "Qo" => write!(out, "{}", ordinal(u32::from((month - 1) / 3 + 1))),
        "Q" => write!(out, "{}", (month - 1) / 3 + 1),
        "HH" => write!(out, "{hour:02}"),
        "H" => write!(out, "{hour}"),
        "hh" => write!(out, "{:02}", twelve_hour(hour)),
        "h" => write!(out, "{}", twelve_hour(hour)),
        "kk" => write!(out, "{:02}", if hour == 0 { 24 } else { hour }),
        "k" => write!(out, "{}", if hour == 0 { 24 } else { hour }),
        "mm" => write!(out, "{:02}", at.minute()),
        "m" => write!(out, "{}", at.minute()),
        "ss" => write!(out, "{:02}", at.second()),
        "s" => write!(out, "{}", at.second()),
        "SSS" => write!(out, "{:03}", at.millisecond()),
        "SS" => write!(out, "{:02}", at.millisecond() / 10),
        "S" => write!(out, "{}", at.millisecond() / 100),
        "A" => write!(out, "{}", if hour < 12 { "AM" } else { "PM" }),
        "a" => write!(out, "{}", if hour < 12 { "am" } else { "pm" }),
        "X" => write!(out, "{}", at.assume_utc().unix_timestamp()),
        "x" => write!(
            out,
            "{}",
            at.assume_utc().unix_timestamp_nanos().div_euclid(1_000_000)
        ),
        other => write!(out, "{other}"),
    };
}

/// moment's `YYYY`: four digits (zero-filled), a sign before years outside 0–9999.
fn four_digit_year(year: i32) -> String {
    match year {
        0..=9999 => format!("{year:04}"),
        y if y < 0 => format!("-{:04}", y.unsigned_abs()),
        y => format!("+{y}"),
    }
}

fn twelve_hour(hour: u8) -> u8 {
    match hour % 12 {
        0 => 12,
        h => h,
    }
}

/// 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st… (moment's `en` ordinal).
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A week number and the year it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Week {
    week: u32,
    year: i32,
}

/// moment's locale week in the `en` locale (`dow` 0: weeks start on Sunday; `doy` 6: week 1 is
/// the week that holds 1 January). The last days of December may be week 1 of the next year.
fn locale_week(date: Date) -> Week {
    let year = date.year();
    let offset = first_week_offset(year);
    let week = (i32::from(date.ordinal()) - offset - 1).div_euclid(7) + 1;
    if week < 1 {
        return Week {
            week: u32::try_from(week + weeks_in_year(year - 1)).unwrap_or(1),
            year: year - 1,
        };
    }
    let weeks = weeks_in_year(year);
    if week > weeks {
        return Week {
            week: u32::try_from(week - weeks).unwrap_or(1),
            year: year + 1,
        };
    }
    Week {
        week: u32::try_from(week).unwrap_or(1),
        year,
    }
}

/// How many days before 1 January the first week starts, negated (moment's `firstWeekOffset`
/// for Sunday-first weeks holding 1 January): 0 when 1 January is a Sunday, -6 on a Saturday.
fn first_week_offset(year: i32) -> i32 {
    let jan1 = Date::from_ordinal_date(year, 1).map_or(Weekday::Sunday, |d| d.weekday());
    -i32::from(jan1.number_days_from_sunday())
}

fn weeks_in_year(year: i32) -> i32 {
    let days = if ::time::util::is_leap_year(year) {
        366
    } else {
        365
    };
    (days - first_week_offset(year) + first_week_offset(year + 1)) / 7
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use ::time::Month;

    fn at(y: i32, m: u8, d: u8, h: u8, min: u8, s: u8) -> PrimitiveDateTime {
        PrimitiveDateTime::new(
            Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap(),
            Time::from_hms(h, min, s).unwrap(),
        )
    }

    #[test]
    fn the_examples_of_momentjs_docs() {
        // moment's documentation of `format()`, at 2010-02-14 15:25:50.
        let t = at(2010, 2, 14, 15, 25, 50);
        assert_eq!(
            format("dddd, MMMM Do YYYY, h:mm:ss a", &t),
            "Sunday, February 14th 2010, 3:25:50 pm"
        );
        assert_eq!(format("ddd, hA", &t), "Sun, 3PM");
        assert_eq!(format("[Today is] dddd", &t), "Today is Sunday");
        assert_eq!(format("[today] dddd", &t), "today Sunday");
        assert_eq!(format("YYYY-MM-DDTHH:mm:ss", &t), "2010-02-14T15:25:50");
        assert_eq!(format("[YYYY] [escaped] [YYYY]", &t), "YYYY escaped YYYY");
    }

    #[test]
    fn obsidians_daily_note_formats() {
        let t = at(2026, 12, 1, 9, 5, 7);
        assert_eq!(format("YYYY-MM-DD", &t), "2026-12-01");
        assert_eq!(
            format("YYYY/MM/YYYY-MM-DD ddd", &t),
            "2026/12/2026-12-01 Tue"
        );
        assert_eq!(format("DD.MM.YY", &t), "01.12.26");
        assert_eq!(format("D MMM YYYY, dddd", &t), "1 Dec 2026, Tuesday");
        assert_eq!(format("MMMM/[Week] ww/M-D", &t), "December/Week 49/12-1");
        assert_eq!(format("HH:mm", &t), "09:05");
        assert_eq!(format("H:m:s", &t), "9:5:7");
        assert_eq!(format("hh:mm A", &t), "09:05 AM");
        assert_eq!(format("YYYY-[Q]Q", &t), "2026-Q4");
        assert_eq!(format("\\QQ", &t), "Q4");
        // Characters that are no token are copied, multi-byte ones too.
        assert_eq!(format("YYYY年M月D日", &t), "2026年12月1日");
        assert_eq!(format("[YYYY", &t), "[2026");
        assert_eq!(format("", &t), "");
    }

    #[test]
    fn ordinals_as_in_english() {
        for (day, want) in [
            (1, "1st"),
            (2, "2nd"),
            (3, "3rd"),
            (4, "4th"),
            (11, "11th"),
            (12, "12th"),
            (13, "13th"),
            (21, "21st"),
            (22, "22nd"),
            (23, "23rd"),
            (30, "30th"),
            (31, "31st"),
        ] {
            assert_eq!(format("Do", &at(2026, 1, day, 0, 0, 0)), want);
        }
        assert_eq!(format("Mo DDDo", &at(2026, 2, 1, 0, 0, 0)), "2nd 32nd");
    }

    #[test]
    fn midnight_and_noon_on_the_twelve_hour_clock() {
        assert_eq!(format("h A a k", &at(2026, 1, 1, 0, 0, 0)), "12 AM am 24");
        assert_eq!(format("h A", &at(2026, 1, 1, 12, 0, 0)), "12 PM");
        assert_eq!(format("hh A", &at(2026, 1, 1, 23, 0, 0)), "11 PM");
    }

    #[test]
    fn locale_weeks_start_on_sunday_and_week_one_holds_january_first() {
        // 2010-01-01 is a Friday: week 1 is 2009-12-27 to 2010-01-02.
        assert_eq!(format("gggg-ww", &at(2009, 12, 27, 0, 0, 0)), "2010-01");
        assert_eq!(format("gggg-ww", &at(2009, 12, 26, 0, 0, 0)), "2009-52");
        assert_eq!(format("gggg-ww", &at(2010, 1, 2, 0, 0, 0)), "2010-01");
        assert_eq!(format("gggg-ww", &at(2010, 1, 3, 0, 0, 0)), "2010-02");
        assert_eq!(
            format("gggg-ww w wo", &at(2010, 2, 14, 0, 0, 0)),
            "2010-08 8 8th"
        );
        // 2027-01-01 is a Friday: 2026-12-27 (Sunday) to 2026-12-31 are week 1 of 2027.
        assert_eq!(format("gggg-ww", &at(2026, 12, 26, 0, 0, 0)), "2026-52");
        assert_eq!(
            format("gggg-ww gg", &at(2026, 12, 31, 0, 0, 0)),
            "2027-01 27"
        );
        // 2017-01-01 is a Sunday: week 1 starts that day, 2016-12-31 is the last week of 2016.
        assert_eq!(format("gggg-ww", &at(2017, 1, 1, 0, 0, 0)), "2017-01");
        assert_eq!(format("gggg-ww", &at(2016, 12, 31, 0, 0, 0)), "2016-53");
        // ISO weeks differ: Monday first, week 1 holds the first Thursday.
        assert_eq!(
            format("GGGG-[W]WW E", &at(2010, 1, 3, 0, 0, 0)),
            "2009-W53 7"
        );
        assert_eq!(format("GGGG-[W]WW", &at(2026, 12, 31, 0, 0, 0)), "2026-W53");
        assert_eq!(format("d e dd do", &at(2010, 2, 14, 0, 0, 0)), "0 0 Su 0th");
    }

    #[test]
    fn years_past_four_digits_are_signed() {
        assert_eq!(format("YYYY YY", &at(987, 6, 5, 0, 0, 0)), "0987 87");
        assert_eq!(format_ms("YYYY", i64::MAX), "9999");
        assert_eq!(format_ms("YYYY-MM-DD HH:mm", 0), "1970-01-01 00:00");
        assert_eq!(format_ms("X x", 1_500), "1 1500");
    }
}
