//! Overlay views: the sessions list, the usage view, the help overlay, `/rewind`, the tool and
//! MCP status view, and `/model`'s list of models. Each is a centred box over the app (full screen on small terminals) with a
//! title and a footer of key hints taken from the active key map.
//!
//! The views do no I/O: the App passes the data in and acts on the [`ViewOutcome`]s they return.
//! Keys arrive resolved in [`KeyContext::List`]; a key without an action is raw input (typing).

pub mod backlinks;
pub mod help;
pub mod models;
pub mod rewind;
pub mod sessions;
pub mod tasks;
pub mod tools;
pub mod usage;

use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

/// An overlay that lists something (sessions, usage, help, the note's history, tools): it takes
/// keys already resolved in the list context and draws itself over the panes. The App keeps one at
/// a time and treats them alike through this trait.
pub trait View {
    /// A key (with its list action, if bound): what the App should do, if anything.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome>;
    /// Draw over `area`.
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme);
}

/// What a view asks the App to do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewOutcome {
    /// Close the view.
    Close,
    /// Resume the session with this id.
    ResumeSession(String),
    /// Delete the session with this id (the person has confirmed).
    DeleteSession(String),
    /// Give the session (id) a new title.
    RenameSession(String, String),
    /// The search query changed: the App calls `store.search_sessions` and then `set_sessions`.
    SearchSessions(String),
    /// Restore the text stored in that revision (the note as it was before that edit). The App
    /// shows the change as a diff first, and writes only when the person accepts it.
    Rewind { revision: i64 },
    /// Use this model for the next turns (`/model`).
    SetModel(String),
    /// Open the note at `path` with the cursor on `line` (1-based).
    OpenAtLine { path: String, line: usize },
    /// Toggle the task on `line` of `path`, which the view showed with `text`.
    ToggleTask {
        path: String,
        line: usize,
        text: String,
    },
}

/// Below this size the overlays take the whole screen: 80% of a small terminal is too cramped to
/// be worth the glimpse of the app behind it.
const FULL_SCREEN_BELOW: (u16, u16) = (100, 30);

/// Where an overlay goes on `screen`: about 80% × 80%, centred; the whole screen when small.
pub fn overlay_area(screen: Rect) -> Rect {
    if screen.width < FULL_SCREEN_BELOW.0 || screen.height < FULL_SCREEN_BELOW.1 {
        return screen;
    }
    let width = screen.width.saturating_mul(4) / 5;
    let height = screen.height.saturating_mul(4) / 5;
    Rect::new(
        screen.x + (screen.width - width) / 2,
        screen.y + (screen.height - height) / 2,
        width,
        height,
    )
}

/// Clear `area`, draw the box with `title` and the `footer` hints on its bottom border, and return
/// the content area inside (one column of padding each side).
pub(crate) fn draw_box(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    title: &str,
    footer: Line<'static>,
) -> Rect {
    let area = buf.area.intersection(area);
    if area.is_empty() {
        return area;
    }
    Clear.render(area, buf);
    buf.set_style(area, theme.style(Role::Text));
    // Room for the corners and a space each side of the title.
    let title_room = usize::from(area.width.saturating_sub(4));
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Role::BorderFocused));
    if title_room > 2 {
        block = block.title(Line::from(Span::styled(
            format!(" {} ", truncate(title, title_room.saturating_sub(2))),
            theme.style(Role::TitleFocused),
        )));
    }
    if footer.width() + 2 <= usize::from(area.width) {
        block = block.title_bottom(footer);
    }
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.width > 2 {
        Rect::new(inner.x + 1, inner.y, inner.width - 2, inner.height)
    } else {
        inner
    }
}

/// One key hint of a footer: the actions whose keys are shown (joined by `/`) and what they do.
pub(crate) type Hint<'a> = (&'a [Action], &'a str);

/// The footer: ` ↑/↓ move  enter resume  esc close `, with each action's first key in the List
/// context of `keymap`. Hints whose actions have no key are left out, and so are the last ones
/// when they do not fit in `width`. `extra` hints are literal keys (for prompts such as `y/n`
/// that the key map does not bind).
pub(crate) fn footer(
    keymap: &Keymap,
    theme: &Theme,
    hints: &[Hint<'_>],
    extra: &[(&str, &str)],
    width: u16,
) -> Line<'static> {
    let mut pairs: Vec<(String, String)> = hints
        .iter()
        .filter_map(|(actions, label)| {
            let keys: Vec<String> = actions
                .iter()
                .filter_map(|a| first_key(keymap, *a))
                .collect();
            (!keys.is_empty()).then(|| (keys.join("/"), (*label).to_string()))
        })
        .collect();
    pairs.extend(
        extra
            .iter()
            .map(|(k, l)| ((*k).to_string(), (*l).to_string())),
    );
    // Two corners and a space before and after the hints.
    let room = usize::from(width).saturating_sub(4);
    let mut spans = vec![Span::raw(" ")];
    let mut used = 0;
    for (key, label) in pairs {
        let gap = if used == 0 { 0 } else { 2 };
        let needed = gap + text_width(&key) + 1 + text_width(&label);
        if used + needed > room {
            break;
        }
        if gap > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(key, theme.style(Role::TitleFocused)));
        spans.push(Span::styled(format!(" {label}"), theme.style(Role::Dim)));
        used += needed;
    }
    if used == 0 {
        return Line::default();
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

/// The first key of `action` in the List context, as a hint shows it (arrows as glyphs).
pub(crate) fn first_key(keymap: &Keymap, action: Action) -> Option<String> {
    keymap
        .keys_for(KeyContext::List, action)
        .into_iter()
        .next()
        .map(|k| pretty_key(&k))
}

/// Arrow and paging keys as people read them on a keyboard.
pub(crate) fn pretty_key(key: &str) -> String {
    match key {
        "up" => "↑".into(),
        "down" => "↓".into(),
        "left" => "←".into(),
        "right" => "→".into(),
        "pageup" => "PgUp".into(),
        "pagedown" => "PgDn".into(),
        other => other.into(),
    }
}

/// A movement in a list or a scrolled text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
}

/// The movement a key asks for: the key map's actions, or Home/End when they are not bound.
pub(crate) fn nav_of(action: Option<Action>, key: &KeyEvent) -> Option<Nav> {
    match action {
        Some(Action::Up | Action::ScrollUp | Action::PrevHunk) => Some(Nav::Up),
        Some(Action::Down | Action::ScrollDown | Action::NextHunk) => Some(Nav::Down),
        Some(Action::PageUp) => Some(Nav::PageUp),
        Some(Action::PageDown) => Some(Nav::PageDown),
        Some(Action::ScrollTop) => Some(Nav::Top),
        Some(Action::ScrollBottom) => Some(Nav::Bottom),
        Some(_) => None,
        None => match key.code {
            KeyCode::Home => Some(Nav::Top),
            KeyCode::End => Some(Nav::Bottom),
            _ => None,
        },
    }
}

/// Key releases (reported by terminals with enhanced keyboard flags) are not presses.
pub(crate) fn is_release(key: &KeyEvent) -> bool {
    key.kind == KeyEventKind::Release
}

/// The keys of a view that is only read (help, usage, tools): movement scrolls it; Esc, Enter and
/// the key that opened it (`opener`) close it.
pub(crate) fn reader_keys(
    scroll: &mut Scroll,
    action: Option<Action>,
    key: &KeyEvent,
    opener: Option<Action>,
) -> Option<ViewOutcome> {
    if is_release(key) {
        return None;
    }
    if let Some(nav) = nav_of(action, key) {
        scroll.apply(nav);
        return None;
    }
    match action {
        Some(Action::Cancel | Action::Confirm) => Some(ViewOutcome::Close),
        Some(other) if Some(other) == opener => Some(ViewOutcome::Close),
        _ => None,
    }
}

/// A character typed without Ctrl or Alt (Shift only makes capitals).
pub(crate) fn typed_char(key: &KeyEvent) -> Option<char> {
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    }
}

/// Scroll position of a text that is taller than its window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Scroll {
    /// The first line shown.
    pub offset: usize,
    /// Lines in the window at the last render (what a page is).
    pub page: usize,
}

impl Scroll {
    /// Apply a movement; the offset is clamped against the length at render time.
    pub fn apply(&mut self, nav: Nav) {
        let page = self.page.max(1);
        self.offset = match nav {
            Nav::Up => self.offset.saturating_sub(1),
            Nav::Down => self.offset.saturating_add(1),
            Nav::PageUp => self.offset.saturating_sub(page),
            Nav::PageDown => self.offset.saturating_add(page),
            Nav::Top => 0,
            Nav::Bottom => usize::MAX,
        };
    }

    /// Fit the offset to `total` lines in a window of `visible` lines.
    pub fn clamp(&mut self, total: usize, visible: usize) {
        self.page = visible;
        self.offset = self.offset.min(total.saturating_sub(visible));
    }
}

/// The selected row of a list and the first row shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ListCursor {
    pub selected: usize,
    pub offset: usize,
    /// Rows in the window at the last render.
    pub page: usize,
}

impl ListCursor {
    /// Move the selection within `len` rows.
    pub fn apply(&mut self, nav: Nav, len: usize) {
        if len == 0 {
            self.selected = 0;
            return;
        }
        let page = self.page.max(1);
        let last = len - 1;
        self.selected = match nav {
            Nav::Up => self.selected.saturating_sub(1),
            Nav::Down => (self.selected + 1).min(last),
            Nav::PageUp => self.selected.saturating_sub(page),
            Nav::PageDown => self.selected.saturating_add(page).min(last),
            Nav::Top => 0,
            Nav::Bottom => last,
        }
        .min(last);
    }

    /// Keep the selection inside `len` rows and visible in a window of `visible` rows.
    pub fn fit(&mut self, len: usize, visible: usize) {
        self.page = visible;
        self.selected = self.selected.min(len.saturating_sub(1));
        if visible == 0 {
            return;
        }
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + visible {
            self.offset = self.selected + 1 - visible;
        }
        self.offset = self.offset.min(len.saturating_sub(visible));
    }

    /// Draw the rows of a list of `len` that fit in `list`, from the first one shown, the
    /// selected one on the selection's background, and the scroll bar beside them; `line` lays
    /// out the row of an index (and whether it is selected). Call after [`ListCursor::fit`].
    pub fn draw(
        &self,
        buf: &mut Buffer,
        theme: &Theme,
        list: Rect,
        len: usize,
        mut line: impl FnMut(usize, bool) -> Line<'static>,
    ) {
        let visible = usize::from(list.height);
        for (row, index) in (self.offset..len).take(visible).enumerate() {
            let selected = index == self.selected;
            if selected {
                style_row(buf, list, row, theme.style(Role::PickerSelected));
            }
            put_line(buf, list, row, &line(index, selected));
        }
        draw_scrollbar(buf, theme, list, len, self.offset, visible);
    }

    /// Fit to `list` and draw its `len` rows as [`ListCursor::draw`] does, or, when the list is
    /// empty, say `empty` (dim, centred) instead.
    pub fn fit_and_draw(
        &mut self,
        buf: &mut Buffer,
        theme: &Theme,
        list: Rect,
        len: usize,
        empty: &str,
        line: impl FnMut(usize, bool) -> Line<'static>,
    ) {
        let visible = usize::from(list.height);
        self.fit(len, visible);
        if len == 0 {
            put_centered(buf, list, visible / 2, empty, theme.style(Role::Dim));
            return;
        }
        self.draw(buf, theme, list, len, line);
    }
}

/// The style a list row's cells are patched over: the selection's background on the selected
/// row, nothing on the others.
pub(crate) fn row_style(theme: &Theme, selected: bool) -> Style {
    if selected {
        theme.style(Role::PickerSelected)
    } else {
        Style::default()
    }
}

/// The two marker columns of a list that has an item in use (the model, the session): `› ` on
/// the selected row, `● ` on the current one, over the row's `base` style.
pub(crate) fn row_markers(
    theme: &Theme,
    base: Style,
    selected: bool,
    current: bool,
) -> Vec<Span<'static>> {
    let style = base.patch(theme.style(Role::TitleFocused));
    vec![
        Span::styled(if selected { "› " } else { "  " }, style),
        Span::styled(if current { "● " } else { "  " }, style),
    ]
}

/// Draw `line` on row `row` of `area`, cut to its width; nothing when the row is outside.
pub(crate) fn put_line(buf: &mut Buffer, area: Rect, row: usize, line: &Line<'_>) {
    let area = buf.area.intersection(area);
    if area.is_empty() || row >= usize::from(area.height) {
        return;
    }
    let y = area.y + row as u16;
    buf.set_line(area.x, y, line, area.width);
}

/// Give row `row` of `area` a style (a selected row's background).
pub(crate) fn style_row(buf: &mut Buffer, area: Rect, row: usize, style: Style) {
    if row < usize::from(area.height) {
        buf.set_style(Rect::new(area.x, area.y + row as u16, area.width, 1), style);
    }
}

/// A scroll bar on the box's right border beside the rows `area.y..area.bottom()`, when `total`
/// rows do not fit in `visible`: the thumb (`┃`) shows where the window is and how much it shows.
/// Draw `lines` in `inner`, scrolled by `scroll` (clamped to what fits), with a scroll bar.
pub(crate) fn draw_scrolled(
    buf: &mut Buffer,
    theme: &Theme,
    inner: Rect,
    lines: &[Line<'_>],
    scroll: &mut Scroll,
) {
    let visible = usize::from(inner.height);
    scroll.clamp(lines.len(), visible);
    for (row, line) in lines.iter().skip(scroll.offset).take(visible).enumerate() {
        put_line(buf, inner, row, line);
    }
    draw_scrollbar(buf, theme, inner, lines.len(), scroll.offset, visible);
}

pub(crate) fn draw_scrollbar(
    buf: &mut Buffer,
    theme: &Theme,
    area: Rect,
    total: usize,
    offset: usize,
    visible: usize,
) {
    // The content area has one column of padding before the border.
    let x = area.right().saturating_add(1);
    let height = usize::from(area.height);
    if total <= visible || height == 0 || x >= buf.area.right() || area.is_empty() {
        return;
    }
    let thumb = (height * visible / total).clamp(1, height);
    let room = height - thumb;
    let max_offset = total - visible;
    let start = (room * offset.min(max_offset) + max_offset / 2)
        .checked_div(max_offset)
        .unwrap_or(0);
    for i in 0..height {
        let y = area.y + i as u16;
        if y >= buf.area.bottom() {
            break;
        }
        let (symbol, style) = if (start..start + thumb).contains(&i) {
            ("┃", theme.style(Role::Scrollbar))
        } else {
            ("│", theme.style(Role::BorderFocused))
        };
        buf[(x, y)].set_symbol(symbol).set_style(style);
    }
}

/// A message centred in `area` (empty lists).
pub(crate) fn put_centered(buf: &mut Buffer, area: Rect, row: usize, text: &str, style: Style) {
    let text = truncate(text, usize::from(area.width));
    let pad = usize::from(area.width).saturating_sub(text_width(&text)) / 2;
    put_line(
        buf,
        area,
        row,
        &Line::from(vec![Span::raw(" ".repeat(pad)), Span::styled(text, style)]),
    );
}

pub(crate) use crate::tui::width::{display_width as text_width, truncate};

/// `text` cut or padded with spaces to exactly `width` columns, left-aligned.
pub(crate) fn pad_right(text: &str, width: usize) -> String {
    let text = truncate(text, width);
    let fill = width.saturating_sub(text_width(&text));
    format!("{text}{}", " ".repeat(fill))
}

/// `text` cut or padded with spaces to exactly `width` columns, right-aligned (numbers).
pub(crate) fn pad_left(text: &str, width: usize) -> String {
    let text = truncate(text, width);
    let fill = width.saturating_sub(text_width(&text));
    format!("{}{text}", " ".repeat(fill))
}

/// One line of text: line breaks and tabs become spaces (titles may hold anything).
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A token count in four columns or so: `950`, `1.2k`, `45k`, `3.4M`, `12M`, `1.1B`.
pub(crate) fn compact(n: u64) -> String {
    fn scaled(n: u64, unit: u64, suffix: &str) -> String {
        if n < 10 * unit {
            // One decimal, rounded half up, without going through floats.
            let tenths = (n * 10 + unit / 2) / unit;
            if tenths.is_multiple_of(10) {
                format!("{}{suffix}", tenths / 10)
            } else {
                format!("{}.{}{suffix}", tenths / 10, tenths % 10)
            }
        } else {
            format!("{}{suffix}", (n + unit / 2) / unit)
        }
    }
    match n {
        0..=999 => n.to_string(),
        1_000..=999_499 => scaled(n, 1_000, "k"),
        999_500..=999_499_999 => scaled(n.max(1_000_000), 1_000_000, "M"),
        _ => scaled(n.max(1_000_000_000), 1_000_000_000, "B"),
    }
}

/// A bold variant of a role's style, for values that should stand out from their labels.
pub(crate) fn strong(theme: &Theme, role: Role) -> Style {
    theme.style(role).add_modifier(Modifier::BOLD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text};

    #[test]
    fn overlays_are_centred_on_big_screens_and_full_screen_on_small_ones() {
        assert_eq!(
            overlay_area(Rect::new(0, 0, 120, 40)),
            Rect::new(12, 4, 96, 32)
        );
        assert_eq!(
            overlay_area(Rect::new(0, 0, 80, 24)),
            Rect::new(0, 0, 80, 24)
        );
        assert_eq!(overlay_area(Rect::new(0, 0, 0, 0)), Rect::new(0, 0, 0, 0));
    }

    #[test]
    fn the_footer_shows_the_keymaps_keys_and_drops_what_does_not_fit() {
        let keymap = Keymap::default_map();
        let theme = Theme::builtin_dark();
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "move"),
            (&[Action::Confirm], "resume"),
            (&[Action::Cancel], "close"),
        ];
        let text = |w| {
            footer(&keymap, &theme, hints, &[], w)
                .spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<String>()
        };
        assert_eq!(text(80), " ↑/↓ move  enter resume  esc close ");
        assert_eq!(text(26), " ↑/↓ move  enter resume ");
        assert_eq!(text(25), " ↑/↓ move ");
        assert_eq!(text(3), "");
        // An unbound action has no hint; literal extras come last.
        let line = footer(
            &keymap,
            &theme,
            &[(&[Action::Save], "save")],
            &[("y", "yes")],
            80,
        );
        assert_eq!(line.to_string(), " y yes ");
    }

    #[test]
    fn the_footer_follows_a_changed_key_map() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[list]\ncancel = \"q\"\n",
        )
        .unwrap();
        let (keymap, errors) = Keymap::load("default", Some(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        let line = footer(
            &keymap,
            &Theme::builtin_dark(),
            &[(&[Action::Cancel], "close")],
            &[],
            80,
        );
        assert_eq!(line.to_string(), " q close ");
    }

    #[test]
    fn hint_keys_use_the_key_style() {
        let theme = Theme::builtin_dark();
        let line = footer(
            &Keymap::default_map(),
            &theme,
            &[(&[Action::Cancel], "close")],
            &[],
            40,
        );
        assert_eq!(line.spans[1].style, theme.style(Role::TitleFocused));
        assert_eq!(line.spans[2].style, theme.style(Role::Dim));
    }

    #[test]
    fn the_box_has_a_title_a_footer_and_padding() {
        let mut buf = buffer(30, 5);
        let theme = Theme::builtin_dark();
        let footer = Line::from(" esc close ");
        let inner = draw_box(buf.area, &mut buf, &theme, "Sessions", footer);
        assert_eq!(inner, Rect::new(2, 1, 26, 3));
        assert_eq!(
            buffer_text(&buf),
            "╭ Sessions ──────────────────╮\n│                            │\n│                            │\n│                            │\n╰ esc close ─────────────────╯\n"
        );
        for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
            let mut buf = buffer(w, h);
            draw_box(buf.area, &mut buf, &theme, "Sessions", Line::from("x"));
        }
    }

    #[test]
    fn scrolling_and_list_cursors_stay_in_range() {
        let mut scroll = Scroll::default();
        scroll.apply(Nav::Bottom);
        scroll.clamp(50, 10);
        assert_eq!(scroll.offset, 40);
        scroll.apply(Nav::PageUp);
        assert_eq!(scroll.offset, 30);
        scroll.apply(Nav::Top);
        scroll.apply(Nav::Up);
        assert_eq!(scroll.offset, 0);
        scroll.clamp(5, 10);
        assert_eq!(scroll.offset, 0);

        let mut cursor = ListCursor::default();
        cursor.fit(20, 5);
        cursor.apply(Nav::PageDown, 20);
        assert_eq!(cursor.selected, 5);
        cursor.fit(20, 5);
        assert_eq!(cursor.offset, 1);
        cursor.apply(Nav::Bottom, 20);
        cursor.fit(20, 5);
        assert_eq!((cursor.selected, cursor.offset), (19, 15));
        cursor.apply(Nav::Down, 20);
        assert_eq!(cursor.selected, 19);
        cursor.fit(3, 5);
        assert_eq!((cursor.selected, cursor.offset), (2, 0));
        cursor.apply(Nav::Up, 0);
        assert_eq!(cursor.selected, 0);
    }

    #[test]
    fn text_is_cut_with_an_ellipsis_by_display_width() {
        assert_eq!(truncate("Plan the trip", 20), "Plan the trip");
        assert_eq!(truncate("Plan the trip", 8), "Plan th…");
        assert_eq!(truncate("日本語のノート", 6), "日本…");
        assert_eq!(truncate("abc", 0), "");
        assert_eq!(pad_right("ab", 4), "ab  ");
        assert_eq!(pad_left("ab", 4), "  ab");
        assert_eq!(pad_left("abcdef", 4), "abc…");
        assert_eq!(one_line("a\nb\tc"), "a b c");
    }

    #[test]
    fn counts_are_compact() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1_000, "1k"),
            (1_250, "1.3k"),
            (9_949, "9.9k"),
            (45_000, "45k"),
            (999_499, "999k"),
            (999_500, "1M"),
            (3_440_000, "3.4M"),
            (12_345_678, "12M"),
            (1_100_000_000, "1.1B"),
        ];
        for (n, text) in cases {
            assert_eq!(compact(n), text, "{n}");
        }
    }

    #[test]
    fn keys_become_movements() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(
            nav_of(Some(Action::Down), &key(KeyCode::Down)),
            Some(Nav::Down)
        );
        assert_eq!(nav_of(None, &key(KeyCode::Home)), Some(Nav::Top));
        assert_eq!(nav_of(None, &key(KeyCode::Char('j'))), None);
        assert_eq!(nav_of(Some(Action::Quit), &key(KeyCode::End)), None);
        assert_eq!(typed_char(&key(KeyCode::Char('x'))), Some('x'));
        assert_eq!(
            typed_char(&KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL)),
            None
        );
        assert_eq!(
            typed_char(&KeyEvent::new(KeyCode::Char('X'), KeyModifiers::SHIFT)),
            Some('X')
        );
    }
}
