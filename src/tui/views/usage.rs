//! The usage view: tokens per day as a stacked bar chart (input, output, cache), the period's
//! totals with the cache-hit rate and the estimated cost, where each model's price came from
//! (the config or the dated built-in list prices), and the sessions that used the most.

use super::{
    Hint, Scroll, View, ViewOutcome, compact, draw_box, draw_scrollbar, footer, one_line, pad_left,
    pad_right, put_centered, put_line, strong, text_width,
};
use crate::protocol::{CostEstimate, DayUsage, PriceSource, TokenTotals};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// A cell filled from the bottom in eighths: index 0 is empty, 8 is a full block.
const EIGHTHS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// The most rows the bars get, so that the sessions table keeps room on tall screens.
const MAX_CHART_ROWS: usize = 12;

/// The cached share of all input: cache reads / (input + cache reads + cache writes), in
/// percent; `None` when nothing was read at all.
pub fn cache_hit_percent(t: &TokenTotals) -> Option<f64> {
    let all = t.input_tokens + t.cache_read_tokens + t.cache_write_tokens;
    (all > 0).then(|| t.cache_read_tokens as f64 * 100.0 / all as f64)
}

/// How tall a bar for `value` is, in eighths of a row, when `max` fills `rows` rows. Any usage
/// at all shows at least one eighth, so that small days do not look empty.
pub fn bar_eighths(value: u64, max: u64, rows: u16) -> u32 {
    if value == 0 || max == 0 {
        return 0;
    }
    let full = u128::from(rows) * 8;
    let eighths = (u128::from(value.min(max)) * full * 2 + u128::from(max)) / (u128::from(max) * 2);
    u32::try_from(eighths).unwrap_or(u32::MAX).max(1)
}

/// `n` in short form, with `~` before it when `t` holds estimated counts (their provider reported
/// no usage).
fn approx(t: &TokenTotals, n: u64) -> String {
    if t.is_estimated() {
        format!("~{}", compact(n))
    } else {
        compact(n)
    }
}

/// Which part of a stacked bar a cell shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Input,
    Output,
    Cache,
}

impl Part {
    fn role(self) -> Role {
        match self {
            Part::Input => Role::ChartInput,
            Part::Output => Role::ChartOutput,
            Part::Cache => Role::ChartCache,
        }
    }
}

/// The cells of one stacked bar of `height` eighths, bottom row first: (eighths filled, part).
/// Input sits at the bottom, then output, then cache (usually the largest) on top. A cell that
/// holds a boundary takes the part at the middle of its filled height.
fn bar_cells(t: &TokenTotals, height: u32) -> Vec<(u32, Part)> {
    let total = t.all_tokens();
    if total == 0 || height == 0 {
        return Vec::new();
    }
    let scale = |n: u64| -> u32 {
        let scaled =
            (u128::from(n) * u128::from(height) * 2 + u128::from(total)) / (u128::from(total) * 2);
        u32::try_from(scaled).unwrap_or(u32::MAX)
    };
    let input_top = scale(t.input_tokens);
    let output_top = scale(t.input_tokens + t.output_tokens);
    let rows = height.div_ceil(8);
    (0..rows)
        .map(|row| {
            let fill = (height - row * 8).min(8);
            // In sixteenths so that the middle of an odd fill is exact.
            let middle = row * 16 + fill;
            let part = if middle < input_top * 2 {
                Part::Input
            } else if middle < output_top * 2 {
                Part::Output
            } else {
                Part::Cache
            };
            (fill, part)
        })
        .collect()
}

/// The usage overlay.
#[derive(Debug, Clone)]
pub struct UsageView {
    days: Vec<DayUsage>,
    by_session: Vec<(String, String, TokenTotals)>,
    cost: CostEstimate,
    period_days: u32,
    /// The last day of the period (day number); without it, the last day with usage.
    end_day: Option<i64>,
    totals: TokenTotals,
    /// The sessions table's scroll position.
    scroll: Scroll,
    keymap: Keymap,
}

impl UsageView {
    /// `days`: usage per UTC day, oldest first (days without usage may be missing);
    /// `by_session`: (id, title, totals), most tokens first; `cost`: the estimate and where each
    /// model's price came from; `period_days`: how many days the view covers.
    pub fn new(
        days: Vec<DayUsage>,
        by_session: Vec<(String, String, TokenTotals)>,
        cost: CostEstimate,
        period_days: u32,
    ) -> Self {
        let mut totals = TokenTotals::default();
        for day in &days {
            totals.add(&day.totals);
        }
        Self {
            days,
            by_session,
            cost,
            period_days: period_days.max(1),
            end_day: None,
            totals,
            scroll: Scroll::default(),
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// The period ends on `day` (`YYYY-MM-DD`, today in UTC), so that days without usage at the
    /// end of the period show as empty bars. Ignored when it is not such a date.
    pub fn with_end_day(mut self, day: &str) -> Self {
        self.end_day = crate::time::parse_day(day);
        self
    }

    /// The same, from a Unix time in milliseconds (now).
    pub fn with_end_ms(mut self, unix_ms: i64) -> Self {
        self.end_day = Some(crate::time::day_number(unix_ms));
        self
    }

    /// Every day of the period, oldest first, with zero usage where there was none.
    fn chart_days(&self) -> Vec<(i64, TokenTotals)> {
        let parsed: Vec<(i64, TokenTotals)> = self
            .days
            .iter()
            .filter_map(|d| Some((crate::time::parse_day(&d.day)?, d.totals)))
            .collect();
        let Some(end) = self
            .end_day
            .or_else(|| parsed.iter().map(|(day, _)| *day).max())
        else {
            return Vec::new();
        };
        let start = end - i64::from(self.period_days) + 1;
        (start..=end)
            .map(|day| {
                let mut totals = TokenTotals::default();
                for (_, t) in parsed.iter().filter(|(d, _)| *d == day) {
                    totals.add(t);
                }
                (day, totals)
            })
            .collect()
    }

    fn summary_line(&self, theme: &Theme, width: u16) -> Line<'static> {
        let t = &self.totals;
        let value = strong(theme, Role::Text);
        let label = theme.style(Role::Dim);
        let hits = cache_hit_percent(t).map_or("—".to_string(), |p| format!("{p:.1}%"));
        // Models without a price leave the sum short of the cost: "at least".
        let at_least = if self.cost.complete() { "" } else { "≥" };
        let cost = match self.cost.usd {
            _ if self.cost.models.is_empty() => "$0.00".to_string(),
            _ if !self.cost.priced_any() => "—".to_string(),
            c if c > 0.0 && c < 0.005 => format!("{at_least}<$0.01"),
            c => format!("{at_least}${c:.2}"),
        };
        let mut parts: Vec<Vec<Span<'static>>> = vec![
            vec![
                Span::styled(approx(t, t.all_tokens()), value),
                Span::styled(" tokens", label),
            ],
            vec![
                Span::styled("cache hits ", label),
                Span::styled(hits, value),
            ],
            vec![Span::styled("est. cost ", label), Span::styled(cost, value)],
            vec![
                Span::styled(t.responses.to_string(), value),
                Span::styled(
                    if t.responses == 1 {
                        " response"
                    } else {
                        " responses"
                    },
                    label,
                ),
            ],
        ];
        if t.is_estimated() {
            parts.push(vec![
                Span::styled("~ ", value),
                Span::styled(format!("{} estimated", t.estimated_responses), label),
            ]);
        }
        join_fitting(parts, "  ·  ", label, usize::from(width))
    }

    /// Where the prices of the estimate came from, model by model: the config, the built-in
    /// list prices (with their date), or none. Empty when nothing was used.
    fn prices_line(&self, theme: &Theme, width: u16) -> Line<'static> {
        let label = theme.style(Role::Dim);
        let value = theme.style(Role::Text);
        let named = |models: Vec<&str>| one_line(&models.join(", "));
        let mut parts: Vec<Vec<Span<'static>>> = Vec::new();
        let built_in = self.cost.models_by(Some(PriceSource::BuiltIn));
        if !built_in.is_empty() {
            parts.push(vec![
                Span::styled(
                    format!(
                        "built-in list prices of {}: ",
                        crate::config::BUILT_IN_AS_OF
                    ),
                    label,
                ),
                Span::styled(named(built_in), value),
            ]);
        }
        let configured = self.cost.models_by(Some(PriceSource::Config));
        if !configured.is_empty() {
            parts.push(vec![
                Span::styled("[prices] in config: ", label),
                Span::styled(named(configured), value),
            ]);
        }
        let unpriced = self.cost.models_by(None);
        if !unpriced.is_empty() {
            parts.push(vec![
                Span::styled("no price: ", label),
                Span::styled(named(unpriced), value),
                Span::styled(" (add it to [prices])", label),
            ]);
        }
        if parts.is_empty() {
            return Line::default();
        }
        let mut spans = vec![Span::styled("prices: ", label)];
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled("  ·  ", label));
            }
            spans.extend(part);
        }
        // Many models make a long line: it is cut with an ellipsis rather than dropped.
        Line::from(crate::tui::chat::wrap::truncate(&spans, usize::from(width)))
    }

    fn legend_line(&self, theme: &Theme) -> Line<'static> {
        let t = &self.totals;
        let label = theme.style(Role::Dim);
        let value = theme.style(Role::Text);
        Line::from(vec![
            Span::styled("█ ", theme.style(Role::ChartInput)),
            Span::styled("input ", label),
            Span::styled(approx(t, t.input_tokens), value),
            Span::raw("   "),
            Span::styled("█ ", theme.style(Role::ChartOutput)),
            Span::styled("output ", label),
            Span::styled(approx(t, t.output_tokens), value),
            Span::raw("   "),
            Span::styled("█ ", theme.style(Role::ChartCache)),
            Span::styled("cache ", label),
            Span::styled(compact(t.cache_read_tokens + t.cache_write_tokens), value),
            Span::styled(
                format!(
                    " (read {}, write {})",
                    compact(t.cache_read_tokens),
                    compact(t.cache_write_tokens)
                ),
                label,
            ),
        ])
    }

    /// The bars in `area`: its last row holds the day labels, its first row is room for the
    /// value above the tallest bar.
    fn draw_chart(&self, buf: &mut Buffer, theme: &Theme, area: Rect) {
        let days = self.chart_days();
        let bar_rows = area.height.saturating_sub(2);
        let label_row = usize::from(area.height.saturating_sub(1));
        let max = days.iter().map(|(_, t)| t.all_tokens()).max().unwrap_or(0);
        if max == 0 || bar_rows == 0 {
            put_centered(
                buf,
                area,
                usize::from(area.height / 2),
                &format!(
                    "No tokens used in the last {} day{}.",
                    self.period_days,
                    if self.period_days == 1 { "" } else { "s" }
                ),
                theme.style(Role::Dim),
            );
            return;
        }
        let axis_width = draw_axis(buf, theme, area, max, bar_rows);
        let bars_x = axis_width + 3;
        let room = usize::from(area.width).saturating_sub(bars_x);
        if room == 0 {
            return;
        }
        // Each day gets a slot; the newest days win when the period does not fit.
        let shown = days.len().min(room);
        let days = &days[days.len() - shown..];
        // Slots spread over the whole width (some a column wider than others); every bar is
        // as wide as the narrowest slot allows, less a gap.
        let slot = (room / shown).max(1);
        let bar_width = (slot - (slot / 3).max(1)).clamp(1, 8).min(slot);
        // Labels every `step` days, counted from the newest, so that they never touch.
        let label_width: usize = if slot >= 6 || shown <= 1 { 5 } else { 2 };
        let step = (label_width + 1).div_ceil(slot);
        let mut next_label_start: Option<usize> = None;
        let mut labels: Vec<(usize, String)> = Vec::new();
        for (i, (day, totals)) in days.iter().enumerate().rev() {
            let slot_x = bars_x + i * room / shown;
            let bar_x = slot_x + (slot - bar_width) / 2;
            let height = bar_eighths(totals.all_tokens(), max, bar_rows);
            let cells = bar_cells(totals, height);
            for (r, (fill, part)) in cells.iter().enumerate() {
                let screen_row = 1 + usize::from(bar_rows) - 1 - r;
                let symbol = EIGHTHS[*fill as usize].repeat(bar_width);
                put_at(
                    buf,
                    area,
                    bar_x,
                    screen_row,
                    &Span::styled(symbol, theme.style(part.role())),
                );
            }
            // The value above the bar, when the slot is wide enough for it.
            let value = approx(totals, totals.all_tokens());
            if totals.all_tokens() > 0 && text_width(&value) < slot {
                let above = 1 + usize::from(bar_rows) - cells.len();
                let x = slot_x + (slot - text_width(&value)) / 2;
                put_at(
                    buf,
                    area,
                    x,
                    above - 1,
                    &Span::styled(value, theme.style(Role::Dim)),
                );
            }
            // Day labels from the newest back, skipping any that would touch the next one.
            let (_, month, day_of_month) = crate::time::calendar_date(*day);
            let label = if label_width == 5 {
                format!("{month:02}-{day_of_month:02}")
            } else {
                format!("{day_of_month:02}")
            };
            let label_x = (slot_x + slot / 2).saturating_sub(text_width(&label) / 2);
            let end = label_x + text_width(&label);
            if (shown - 1 - i) % step == 0
                && next_label_start.is_none_or(|next_start| end < next_start)
            {
                labels.push((label_x, label));
                next_label_start = Some(label_x);
            }
        }
        for (x, label) in labels {
            put_at(
                buf,
                area,
                x,
                label_row,
                &Span::styled(label, theme.style(Role::Dim)),
            );
        }
    }

    fn draw_table(&mut self, buf: &mut Buffer, theme: &Theme, area: Rect) {
        let height = usize::from(area.height);
        if height < 2 {
            return;
        }
        let columns = TableColumns::for_width(usize::from(area.width));
        put_line(buf, area, 1, &columns.heading(theme));
        let rows = Rect::new(
            area.x,
            area.y + 2,
            area.width,
            area.height.saturating_sub(2),
        );
        let visible = usize::from(rows.height);
        if self.by_session.is_empty() {
            put_line(
                buf,
                rows,
                0,
                &Line::from(Span::styled(
                    "No session used tokens in this period.",
                    theme.style(Role::Dim),
                )),
            );
            return;
        }
        self.scroll.clamp(self.by_session.len(), visible);
        for (row, (id, title, totals)) in self
            .by_session
            .iter()
            .skip(self.scroll.offset)
            .take(visible)
            .enumerate()
        {
            put_line(buf, rows, row, &columns.row(id, title, totals, theme));
        }
        draw_scrollbar(
            buf,
            theme,
            rows,
            self.by_session.len(),
            self.scroll.offset,
            visible,
        );
    }
}

impl View for UsageView {
    /// A key with its action in the List context.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        super::reader_keys(&mut self.scroll, action, key, Some(Action::ShowUsage))
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "scroll sessions"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let title = format!(
            "Usage · last {} day{}",
            self.period_days,
            if self.period_days == 1 { "" } else { "s" }
        );
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let height = usize::from(inner.height);
        put_line(buf, inner, 0, &self.summary_line(theme, inner.width));
        put_line(buf, inner, 1, &self.legend_line(theme));
        put_line(buf, inner, 2, &self.prices_line(theme, inner.width));
        let layout = Layout::for_height(height, self.by_session.len());
        if layout.chart_rows > 0 {
            let chart = Rect::new(
                inner.x,
                inner.y + 3,
                inner.width,
                (layout.chart_rows + 1) as u16,
            );
            self.draw_chart(buf, theme, chart);
        }
        if layout.table_top < height {
            let table = Rect::new(
                inner.x,
                inner.y + layout.table_top as u16,
                inner.width,
                (height - layout.table_top) as u16,
            );
            self.draw_table(buf, theme, table);
        }
    }
}

/// Rows of the content area: the bars get what the table does not need, within limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// Rows for the bars and the value labels above them (0: no chart); the day labels follow.
    chart_rows: usize,
    /// The first row of the table (a blank row, the heading, then the sessions).
    table_top: usize,
}

impl Layout {
    fn for_height(height: usize, sessions: usize) -> Layout {
        // Summary, legend and a blank line come first.
        let available = height.saturating_sub(3);
        let table_wants = 2 + sessions.clamp(1, 8);
        let chart_rows = available
            .saturating_sub(1 + table_wants)
            .clamp(4, MAX_CHART_ROWS)
            .min(available.saturating_sub(1));
        if chart_rows < 3 {
            return Layout {
                chart_rows: 0,
                table_top: 3,
            };
        }
        Layout {
            chart_rows,
            table_top: 3 + chart_rows + 1,
        }
    }
}

/// Columns of the sessions table (0: not shown).
#[derive(Debug, Clone, Copy)]
struct TableColumns {
    title: usize,
    output: usize,
    cache: usize,
    hits: usize,
}

/// Width of a number column.
const NUMBER: usize = 8;

impl TableColumns {
    fn for_width(width: usize) -> TableColumns {
        let (output, cache, hits) = match width {
            62.. => (NUMBER, NUMBER, NUMBER),
            52.. => (NUMBER, NUMBER, 0),
            42.. => (NUMBER, 0, 0),
            _ => (0, 0, 0),
        };
        // Input and total are always there.
        let title = width.saturating_sub(2 * NUMBER + output + cache + hits);
        TableColumns {
            title,
            output,
            cache,
            hits,
        }
    }

    fn cells(&self, title: String, values: [String; 5]) -> String {
        let [input, output, cache, total, hits] = values;
        let mut text = pad_right(&title, self.title);
        text.push_str(&pad_left(&input, NUMBER));
        if self.output > 0 {
            text.push_str(&pad_left(&output, NUMBER));
        }
        if self.cache > 0 {
            text.push_str(&pad_left(&cache, NUMBER));
        }
        text.push_str(&pad_left(&total, NUMBER));
        if self.hits > 0 {
            text.push_str(&pad_left(&hits, NUMBER));
        }
        text
    }

    fn heading(&self, theme: &Theme) -> Line<'static> {
        let text = self.cells(
            "Session".into(),
            [
                "Input".into(),
                "Output".into(),
                "Cache".into(),
                "Total".into(),
                "Hits".into(),
            ],
        );
        Line::from(Span::styled(text, theme.style(Role::Title)))
    }

    fn row(&self, id: &str, title: &str, t: &TokenTotals, theme: &Theme) -> Line<'static> {
        let untitled = title.trim().is_empty();
        let name = if untitled {
            format!("untitled · {}", id.chars().take(8).collect::<String>())
        } else {
            one_line(title)
        };
        let text = self.cells(
            name,
            [
                approx(t, t.input_tokens),
                approx(t, t.output_tokens),
                compact(t.cache_read_tokens + t.cache_write_tokens),
                approx(t, t.all_tokens()),
                cache_hit_percent(t).map_or("—".into(), |p| format!("{p:.0}%")),
            ],
        );
        // The title keeps its own look (dim when untitled); the numbers are plain text.
        let split = text
            .char_indices()
            .scan(0, |width, (i, c)| {
                let at = (*width, i);
                *width += text_width(&c.to_string());
                Some(at)
            })
            .find(|(width, _)| *width >= self.title)
            .map_or(text.len(), |(_, i)| i);
        let (title_part, numbers) = text.split_at(split);
        let title_style = if untitled {
            theme.style(Role::Dim).add_modifier(Modifier::ITALIC)
        } else {
            theme.style(Role::Text)
        };
        Line::from(vec![
            Span::styled(title_part.to_string(), title_style),
            Span::styled(numbers.to_string(), theme.style(Role::Text)),
        ])
    }
}

/// The chart's y axis: the top value and the middle, right-aligned before a tick, and the
/// corner on the label row. Returns the width of the values.
fn draw_axis(buf: &mut Buffer, theme: &Theme, area: Rect, max: u64, bar_rows: u16) -> usize {
    let label_row = usize::from(area.height.saturating_sub(1));
    let top_label = compact(max);
    let axis_width = text_width(&top_label).max(3);
    let axis = theme.style(Role::Dim);
    let middle_row = usize::from(bar_rows / 2);
    for r in 0..usize::from(bar_rows) {
        let screen_row = 1 + usize::from(bar_rows) - 1 - r;
        let (text, tick) = if r + 1 == usize::from(bar_rows) {
            (top_label.clone(), "┤")
        } else if r + 1 == middle_row && middle_row > 1 {
            let value = u128::from(max) * (r as u128 + 1) / u128::from(bar_rows);
            (compact(u64::try_from(value).unwrap_or(u64::MAX)), "┤")
        } else {
            (String::new(), "│")
        };
        put_line(
            buf,
            area,
            screen_row,
            &Line::from(Span::styled(
                format!("{} {tick}", pad_left(&text, axis_width)),
                axis,
            )),
        );
    }
    put_line(
        buf,
        area,
        label_row,
        &Line::from(Span::styled(format!("{} └", " ".repeat(axis_width)), axis)),
    );
    axis_width
}

/// Parts joined by `separator`, as many as fit in `width` (the first ones first).
fn join_fitting(
    parts: Vec<Vec<Span<'static>>>,
    separator: &'static str,
    separator_style: Style,
    width: usize,
) -> Line<'static> {
    let mut spans = Vec::new();
    let mut used = 0;
    for part in parts {
        let part_width: usize = part.iter().map(Span::width).sum();
        let gap = if spans.is_empty() {
            0
        } else {
            text_width(separator)
        };
        if used + gap + part_width > width {
            break;
        }
        if gap > 0 {
            spans.push(Span::styled(separator, separator_style));
        }
        used += gap + part_width;
        spans.extend(part);
    }
    Line::from(spans)
}

/// Draw `span` at column `x` of row `row` of `area`, cut at the area's right edge.
fn put_at(buf: &mut Buffer, area: Rect, x: usize, row: usize, span: &Span<'_>) {
    let area = buf.area.intersection(area);
    if row >= usize::from(area.height) || x >= usize::from(area.width) {
        return;
    }
    let room = area.width - x as u16;
    buf.set_span(area.x + x as u16, area.y + row as u16, span, room);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn totals(input: u64, output: u64, read: u64, write: u64, responses: u64) -> TokenTotals {
        TokenTotals {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            responses,
            estimated_responses: 0,
        }
    }

    fn day(day: &str, t: TokenTotals) -> DayUsage {
        DayUsage {
            day: day.into(),
            totals: t,
            by_model: vec![("anthropic/claude-sonnet-4-5".into(), t)],
        }
    }

    /// A week of usage, one day without any.
    fn week() -> Vec<DayUsage> {
        vec![
            day("2026-03-08", totals(12_400, 3_100, 88_000, 9_000, 9)),
            day("2026-03-09", totals(30_200, 8_800, 240_000, 21_000, 22)),
            day("2026-03-10", totals(4_100, 900, 12_000, 3_000, 3)),
            day("2026-03-12", totals(51_000, 14_500, 410_000, 30_500, 35)),
            day("2026-03-13", totals(22_800, 6_400, 150_000, 8_800, 14)),
            day("2026-03-14", totals(9_900, 2_600, 61_000, 4_000, 6)),
        ]
    }

    fn sessions() -> Vec<(String, String, TokenTotals)> {
        vec![
            (
                "a1b2c3d4e5f60718".into(),
                "Plan the Lisbon trip".into(),
                totals(61_000, 17_000, 520_000, 38_000, 40),
            ),
            (
                "b2c3d4e5f6071829".into(),
                "Budget for the flat: rent, bills and the deposit".into(),
                totals(40_000, 11_000, 300_000, 20_000, 28),
            ),
            (
                "c3d4e5f60718293a".into(),
                String::new(),
                totals(18_000, 5_000, 90_000, 9_000, 12),
            ),
            (
                "d4e5f60718293a4b".into(),
                "Reading list".into(),
                totals(11_400, 3_300, 51_000, 9_300, 9),
            ),
        ]
    }

    /// An estimate of `usd` with every model priced by `source` (`None`: none has a price).
    fn cost(usd: f64, source: Option<PriceSource>) -> CostEstimate {
        CostEstimate {
            usd,
            models: vec![("anthropic/claude-sonnet-4-5".into(), source)],
        }
    }

    /// The week priced from `[prices]` in the config.
    fn configured(usd: f64) -> CostEstimate {
        cost(usd, Some(PriceSource::Config))
    }

    fn unpriced() -> CostEstimate {
        cost(0.0, None)
    }

    fn view() -> UsageView {
        UsageView::new(week(), sessions(), configured(4.87), 7).with_end_day("2026-03-14")
    }

    fn rendered(view: &mut UsageView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    #[test]
    fn cache_hits_are_reads_over_all_input() {
        let t = totals(100, 999, 300, 100, 1);
        assert_eq!(cache_hit_percent(&t), Some(60.0));
        assert_eq!(cache_hit_percent(&totals(0, 50, 0, 0, 1)), None);
        assert_eq!(cache_hit_percent(&totals(10, 0, 0, 0, 1)), Some(0.0));
    }

    #[test]
    fn bars_scale_to_the_biggest_day() {
        assert_eq!(bar_eighths(1_000, 1_000, 10), 80);
        assert_eq!(bar_eighths(500, 1_000, 10), 40);
        assert_eq!(bar_eighths(250, 1_000, 4), 8);
        // Tiny but not nothing: one eighth.
        assert_eq!(bar_eighths(1, 1_000_000, 10), 1);
        assert_eq!(bar_eighths(0, 1_000, 10), 0);
        assert_eq!(bar_eighths(5, 0, 10), 0);
        assert_eq!(
            bar_eighths(u64::MAX, u64::MAX, u16::MAX),
            u32::from(u16::MAX) * 8
        );
    }

    #[test]
    fn stacked_cells_put_input_below_output_below_cache() {
        // 16 eighths = two full rows: input 6, output 2, cache 8 eighths. The bottom cell's middle
        // is input; the top one is all cache.
        let cells = bar_cells(&totals(150, 50, 150, 50, 1), 16);
        assert_eq!(cells, [(8, Part::Input), (8, Part::Cache)]);
        // Input 4, output 4: the middle of the bottom cell is where output starts.
        let cells = bar_cells(&totals(100, 100, 150, 50, 1), 16);
        assert_eq!(cells, [(8, Part::Output), (8, Part::Cache)]);
        let cells = bar_cells(&totals(150, 50, 150, 50, 1), 16);
        assert_eq!(cells, [(8, Part::Input), (8, Part::Cache)]);
        let cells = bar_cells(&totals(100, 100, 200, 0, 1), 32);
        assert_eq!(
            cells,
            [
                (8, Part::Input),
                (8, Part::Output),
                (8, Part::Cache),
                (8, Part::Cache)
            ]
        );
        // A partial top cell.
        let cells = bar_cells(&totals(0, 0, 10, 0, 1), 11);
        assert_eq!(cells, [(8, Part::Cache), (3, Part::Cache)]);
        assert!(bar_cells(&totals(0, 0, 0, 0, 0), 8).is_empty());
    }

    #[test]
    fn the_chart_covers_every_day_of_the_period() {
        let days = view().chart_days();
        assert_eq!(days.len(), 7);
        assert_eq!(days[0].0, crate::time::parse_day("2026-03-08").unwrap());
        assert_eq!(days[3].1.all_tokens(), 0, "03-11 had no usage");
        assert_eq!(days[6].1.input_tokens, 9_900);
        // Without an end day the period ends on the last day with usage.
        let days = UsageView::new(week(), vec![], unpriced(), 3).chart_days();
        assert_eq!(days.len(), 3);
        assert_eq!(days[2].0, crate::time::parse_day("2026-03-14").unwrap());
        assert!(
            UsageView::new(vec![], vec![], CostEstimate::default(), 7)
                .chart_days()
                .is_empty()
        );
    }

    #[test]
    fn totals_cost_and_cache_hits_are_shown() {
        let text = buffer_text(&rendered(&mut view(), 120, 40));
        // 130.4k input, 36.3k output, 961k read, 76.3k write.
        assert!(text.contains("1.2M tokens"), "{text}");
        assert!(text.contains("cache hits 82.3%"), "{text}");
        assert!(text.contains("est. cost $4.87"), "{text}");
        assert!(text.contains("89 responses"), "{text}");
        assert!(text.contains("cache 1M (read 961k, write 76k)"), "{text}");
        let text = buffer_text(&rendered(
            &mut UsageView::new(week(), vec![], unpriced(), 7),
            120,
            40,
        ));
        assert!(text.contains("est. cost —"), "{text}");
        assert!(
            text.contains("prices: no price: claude-sonnet-4-5 (add it to [prices])"),
            "{text}"
        );
    }

    #[test]
    fn bars_use_the_chart_roles() {
        let buf = rendered(&mut view(), 120, 40);
        let theme = Theme::builtin_dark();
        // The biggest day (03-12) is a full column of █ whose bottom is input and top is cache.
        let mut found = Vec::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                let cell = &buf[(x, y)];
                if cell.symbol() == "█" {
                    found.push(cell.fg);
                }
            }
        }
        for role in [Role::ChartInput, Role::ChartOutput, Role::ChartCache] {
            assert!(
                found.contains(&theme.style(role).fg.unwrap()),
                "{role:?} not drawn"
            );
        }
        assert_eq!(
            style_at(&buf, "█ input").unwrap().fg,
            theme.style(Role::ChartInput).fg
        );
    }

    #[test]
    fn the_sessions_table_scrolls_and_esc_closes() {
        let mut v = view();
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let buf = rendered(&mut v, 80, 24);
        assert!(buffer_text(&buf).contains("Plan the Lisbon trip"));
        assert_eq!(v.handle(Some(Action::Down), &key(KeyCode::Down)), None);
        v.handle(Some(Action::Down), &key(KeyCode::Down));
        // With room for every row there is nothing to scroll.
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(text.contains("Plan the Lisbon trip"), "{text}");
        // A short screen hides rows, and scrolling shows them.
        let mut many = sessions();
        for i in 0..30 {
            many.push((
                format!("{i:016x}"),
                format!("Old chat {i}"),
                totals(1_000, 100, 0, 0, 1),
            ));
        }
        let mut v = UsageView::new(week(), many, configured(4.87), 7).with_end_day("2026-03-14");
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(!text.contains("Old chat 29"), "{text}");
        v.handle(None, &key(KeyCode::End));
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(text.contains("Old chat 29"), "{text}");
        assert!(!text.contains("Plan the Lisbon trip"), "{text}");
        assert_eq!(
            v.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
    }

    #[test]
    fn snapshot_a_week_80x24() {
        insta::assert_snapshot!(
            "usage_week_80x24",
            buffer_text(&rendered(&mut view(), 80, 24))
        );
    }

    #[test]
    fn snapshot_a_week_120x40() {
        insta::assert_snapshot!(
            "usage_week_120x40",
            buffer_text(&rendered(&mut view(), 120, 40))
        );
    }

    #[test]
    fn snapshot_thirty_days_and_no_usage() {
        let mut days = Vec::new();
        for d in 1..=30u64 {
            if d % 6 == 0 {
                continue;
            }
            let n = 1_000 * ((d * 37) % 23 + 2);
            days.push(day(
                &format!("2026-03-{d:02}"),
                totals(n, n / 4, n * 6, n / 2, d % 5 + 1),
            ));
        }
        let mut v = UsageView::new(days, sessions(), unpriced(), 30).with_end_day("2026-03-30");
        insta::assert_snapshot!(
            "usage_month_120x40",
            buffer_text(&rendered(&mut v, 120, 40))
        );
        let mut v = UsageView::new(vec![], vec![], CostEstimate::default(), 7);
        insta::assert_snapshot!("usage_empty_80x24", buffer_text(&rendered(&mut v, 80, 24)));
    }

    /// A week in which a local server reported no usage on two days: `~` marks every figure
    /// that holds an estimate (the totals, the input and output sums, those days' bars and the
    /// session that used that server), and the summary says how many responses were estimated.
    #[test]
    fn estimated_figures_are_marked() {
        let estimated = |mut t: TokenTotals, n: u64| {
            t.estimated_responses = n;
            t
        };
        let mut days = week();
        days[1].totals = estimated(days[1].totals, 4);
        days[4].totals = estimated(days[4].totals, 2);
        let mut by_session = sessions();
        by_session[1].2 = estimated(by_session[1].2, 6);
        let mut v =
            UsageView::new(days, by_session, configured(4.87), 7).with_end_day("2026-03-14");
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(text.contains("~1.2M tokens"), "{text}");
        assert!(text.contains("input ~130k"), "{text}");
        assert!(text.contains("output ~36k"), "{text}");
        assert!(
            text.contains("cache 1M (read"),
            "cache figures are always reported: {text}"
        );
        assert!(text.contains("~40k"), "the budget session's input: {text}");
        insta::assert_snapshot!("usage_week_estimated_80x24", text);
        let wide = buffer_text(&rendered(&mut v, 120, 40));
        assert!(wide.contains("~ 6 estimated"), "{wide}");
    }

    /// The week as the app prices it without `[prices]`: the built-in list price of
    /// claude-sonnet-4-5, computed by the same function the host uses, and the line that says
    /// where it came from and its date.
    #[test]
    fn built_in_prices_are_used_and_named_with_their_date() {
        let config = crate::config::Config::default();
        let estimate = crate::store::estimate_cost(&week(), |m| config.price_of(m));
        assert_eq!(
            estimate.models,
            [(
                "anthropic/claude-sonnet-4-5".to_string(),
                Some(PriceSource::BuiltIn)
            )]
        );
        // 130.4k input at $3, 36.3k output at $15, 961k cache reads at $0.30, 76.3k writes at
        // $3.75 per million.
        let expected =
            (130_400.0 * 3.0 + 36_300.0 * 15.0 + 961_000.0 * 0.30 + 76_300.0 * 3.75) / 1e6;
        assert!((estimate.usd - expected).abs() < 1e-9, "{}", estimate.usd);
        let mut v = UsageView::new(week(), sessions(), estimate, 7).with_end_day("2026-03-14");
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(
            text.contains(&format!("est. cost ${expected:.2}")),
            "{text}"
        );
        assert!(
            text.contains("prices: built-in list prices of 2025-11-24: claude-sonnet-4-5"),
            "{text}"
        );
        insta::assert_snapshot!("usage_week_built_in_prices_80x24", text);
        insta::assert_snapshot!(
            "usage_week_built_in_prices_120x40",
            buffer_text(&rendered(&mut v, 120, 40))
        );
    }

    #[test]
    fn mixed_sources_and_a_model_without_price_are_each_named() {
        let estimate = CostEstimate {
            usd: 1.5,
            models: vec![
                (
                    "anthropic/claude-haiku-4-5".into(),
                    Some(PriceSource::BuiltIn),
                ),
                ("openai/house-model".into(), Some(PriceSource::Config)),
                ("openai/llama3.2\u{1b}[31m".into(), None),
            ],
        };
        let mut v = UsageView::new(week(), sessions(), estimate, 7).with_end_day("2026-03-14");
        let text = buffer_text(&rendered(&mut v, 200, 40));
        // Not the whole cost: one model has no price.
        assert!(text.contains("est. cost ≥$1.50"), "{text}");
        assert!(
            text.contains(
                "prices: built-in list prices of 2025-11-24: claude-haiku-4-5  ·  [prices] in config: house-model  ·  no price: llama3.2 [31m (add it to [prices])"
            ),
            "the escape is drawn as text, not sent: {text}"
        );
        // Cut with an ellipsis when the screen is narrow.
        let narrow = buffer_text(&rendered(&mut v, 80, 24));
        assert!(
            narrow
                .contains("prices: built-in list prices of 2025-11-24: claude-haiku-4-5  ·  [pri"),
            "{narrow}"
        );
        assert!(narrow.contains('…'), "{narrow}");
    }

    #[test]
    fn never_panics_at_any_size() {
        for (w, h) in [
            (0, 0),
            (1, 1),
            (3, 2),
            (12, 5),
            (20, 8),
            (40, 12),
            (300, 100),
        ] {
            rendered(&mut view(), w, h);
            rendered(
                &mut UsageView::new(week(), sessions(), unpriced(), 365),
                w,
                h,
            );
            rendered(
                &mut UsageView::new(vec![], vec![], CostEstimate::default(), 0),
                w,
                h,
            );
        }
        let mut buf = buffer(50, 20);
        view().render(Rect::new(40, 12, 30, 30), &mut buf, &Theme::builtin_dark());
    }
}
