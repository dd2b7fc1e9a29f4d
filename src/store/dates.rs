//! UTC calendar dates of the store's Unix-millisecond timestamps, without a date library
//! (Howard Hinnant's civil-from-days and days-from-civil algorithms). Usage is rolled up per UTC
//! day, sessions and revisions are shown with their day; every caller goes through here.

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// The calendar date (year, month, day) of a day number (days since 1970-01-01).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The day number (days since 1970-01-01) of a calendar date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The day number of `YYYY-MM-DD`; `None` when it is not such a date.
pub fn days_from_date(date: &str) -> Option<i64> {
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds.
pub fn day_of(unix_ms: i64) -> String {
    let (y, m, d) = civil_from_days(unix_ms.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_convert_both_ways() {
        for days in [-800_000, -1, 0, 1, 11_016, 20_787, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(days_from_date("2026-11-30"), Some(20_787));
        assert_eq!(days_from_date("2026-13-01"), None);
        assert_eq!(days_from_date("yesterday"), None);
    }

    #[test]
    fn days_are_utc_calendar_days() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(-1), "1969-12-31");
        assert_eq!(day_of(1_795_996_800_000), "2026-11-30");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
    }
}
