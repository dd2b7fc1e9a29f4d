//! The note picker (`Ctrl+P`): fuzzy-find a note by title, path or alias.
//!
//! Matching uses nucleo (the matcher of helix). Each word of the query must match one of a note's
//! title, path or aliases, so a query may mix them (`proj plan`); fzf's syntax works (`^prefix`,
//! `suffix$`, `'exact`, `!not`). A word scores its best field, a title with a bonus and an alias
//! with a smaller one, so a note whose title matches comes before one that matches only by its
//! path. An empty query lists every note by path. A query that extends the previous one only
//! re-checks the previous matches.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32String};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::{EDITOR, str_width};

/// Added to a title's own score: a title match outranks the same match in a path.
const TITLE_BONUS: u32 = 16;
/// Added to an alias's own score.
const ALIAS_BONUS: u32 = 8;

/// A note the picker can open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    /// Vault-relative path (`Projects/Plan.md`).
    pub path: String,
    /// The title (first heading or frontmatter title); the file name is shown when empty.
    pub title: String,
    /// Frontmatter aliases.
    pub aliases: Vec<String>,
}

/// How the picker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// Open the note at this path.
    Open(String),
    Cancel,
}

/// The matcher's view of one item's fields.
struct Haystack {
    title: Utf32String,
    path: Utf32String,
    aliases: Vec<Utf32String>,
}

/// Which chars of a row's fields the query matched.
#[derive(Debug, Default)]
struct RowHits {
    title: Vec<usize>,
    path: Vec<usize>,
    /// The first alias some word of the query matched, when the title does not match them all.
    alias: Option<(usize, Vec<usize>)>,
}

/// Key names for the hint line, from the active key map.
#[derive(Debug, Clone)]
struct Hints {
    up: String,
    down: String,
    confirm: String,
    cancel: String,
}

impl Hints {
    fn from_keymap(keymap: &Keymap) -> Self {
        let first = |action| {
            keymap
                .keys_for(KeyContext::List, action)
                .into_iter()
                .next()
                .map(|key| match key.as_str() {
                    "up" => "↑".to_string(),
                    "down" => "↓".to_string(),
                    _ => key,
                })
                .unwrap_or_else(|| "?".to_string())
        };
        Hints {
            up: first(Action::Up),
            down: first(Action::Down),
            confirm: first(Action::Confirm),
            cancel: first(Action::Cancel),
        }
    }
}

/// The picker overlay: a query, the ranked matches and the selected one.
pub struct Picker {
    items: Vec<PickerItem>,
    haystacks: Vec<Haystack>,
    /// Every item index sorted by path: the list for an empty query.
    by_path: Vec<usize>,
    query: String,
    pattern: Pattern,
    matcher: Matcher,
    /// Item indices, best first.
    matches: Vec<usize>,
    /// The query `matches` were computed for, when narrowing from them is sound.
    narrowable: Option<String>,
    selected: usize,
    scroll: usize,
    /// List rows in the last frame (for PageUp/PageDown).
    list_height: usize,
    cursor_screen: Option<(u16, u16)>,
    hints: Hints,
    /// What the picker is for: its title, what Enter does, the empty query's placeholder.
    labels: Labels,
}

/// The words of a picker.
#[derive(Debug, Clone, Copy)]
struct Labels {
    title: &'static str,
    confirm: &'static str,
    placeholder: &'static str,
}

const NOTE_LABELS: Labels = Labels {
    title: " Open note ",
    confirm: "open",
    placeholder: "title, path or alias",
};

const TEMPLATE_LABELS: Labels = Labels {
    title: " Insert template ",
    confirm: "insert",
    placeholder: "template name",
};

impl Picker {
    /// A picker over `items`, showing all of them by path.
    pub fn new(items: Vec<PickerItem>) -> Self {
        let haystacks = items.iter().map(haystack).collect();
        let mut by_path: Vec<usize> = (0..items.len()).collect();
        by_path.sort_by(|&a, &b| items[a].path.cmp(&items[b].path));
        Picker {
            matches: by_path.clone(),
            by_path,
            haystacks,
            items,
            query: String::new(),
            pattern: Pattern::default(),
            matcher: Matcher::new(Config::DEFAULT),
            narrowable: None,
            selected: 0,
            scroll: 0,
            list_height: 10,
            cursor_screen: None,
            hints: Hints::from_keymap(&Keymap::default_map()),
            labels: NOTE_LABELS,
        }
    }

    /// A picker of templates (`title`: the template's name in its folder): Enter inserts one.
    pub fn templates(items: Vec<PickerItem>) -> Self {
        Picker {
            labels: TEMPLATE_LABELS,
            ..Picker::new(items)
        }
    }

    /// Show the keys of `keymap` in the hint line.
    pub fn set_key_hints(&mut self, keymap: &Keymap) {
        self.hints = Hints::from_keymap(keymap);
    }

    /// The query typed so far.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Replace the query (and filter).
    pub fn set_query(&mut self, query: &str) {
        self.query = query.to_string();
        self.refilter();
    }

    /// Paths of the matches, best first.
    pub fn matched_paths(&self) -> Vec<&str> {
        self.matches
            .iter()
            .map(|&i| self.items[i].path.as_str())
            .collect()
    }

    /// The path of the selected match.
    pub fn selected_path(&self) -> Option<&str> {
        self.matches
            .get(self.selected)
            .map(|&i| self.items[i].path.as_str())
    }

    /// Where the query cursor was drawn in the last frame.
    pub fn cursor_position(&self) -> Option<(u16, u16)> {
        self.cursor_screen
    }

    /// A key: `KeyContext::List` actions move (Up, Down, PageUp, PageDown), choose (Confirm) or
    /// close (Cancel); keys without an action edit the query (Backspace, Ctrl+W a word, Ctrl+U
    /// all).
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<PickerOutcome> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        match action {
            Some(Action::Up) => self.move_selection(-1),
            // Pressing the picker's own key again moves down, as in editors that cycle with it.
            Some(Action::Down | Action::OpenPicker) => self.move_selection(1),
            Some(Action::PageUp) => self.move_selection(-(self.list_height.max(1) as isize)),
            Some(Action::PageDown) => self.move_selection(self.list_height.max(1) as isize),
            Some(Action::Confirm) => {
                return self
                    .selected_path()
                    .map(|path| PickerOutcome::Open(path.to_string()));
            }
            Some(Action::Cancel) => return Some(PickerOutcome::Cancel),
            Some(_) => {}
            None => self.edit_query(key),
        }
        None
    }

    /// Draw the picker centred over `area` (the whole screen).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.cursor_screen = None;
        let area = area.intersection(buf.area);
        if area.width < 3 || area.height < 3 {
            return;
        }
        let width = (area.width / 5 * 3)
            .clamp(60, 100)
            .min(area.width.saturating_sub(2).max(3));
        let height = (area.height / 5 * 3)
            .clamp(12, 24)
            .min(area.height.saturating_sub(2).max(3));
        let popup = Rect::new(
            area.x + (area.width - width) / 2,
            area.y + (area.height - height) / 2,
            width,
            height,
        );
        Clear.render(popup, buf);
        let border = theme.style(Role::BorderFocused);
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(border)
            .title(Line::from(vec![Span::styled(
                self.labels.title,
                theme.style(Role::TitleFocused),
            )]));
        let hint = format!(
            " {}{} select · {} {} · {} close ",
            self.hints.up,
            self.hints.down,
            self.hints.confirm,
            self.labels.confirm,
            self.hints.cancel
        );
        if str_width(&hint) + 4 <= usize::from(width) {
            block = block.title_bottom(Line::styled(hint, theme.style(Role::Dim)).right_aligned());
        }
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        self.render_query(inner, buf, theme);
        if inner.height < 3 {
            return;
        }
        // A rule under the query, joined to the border.
        let rule_y = inner.y + 1;
        for x in inner.left()..inner.right() {
            buf[(x, rule_y)].set_symbol("─").set_style(border);
        }
        buf[(popup.x, rule_y)].set_symbol("├").set_style(border);
        buf[(popup.right() - 1, rule_y)]
            .set_symbol("┤")
            .set_style(border);
        let list = Rect::new(inner.x, inner.y + 2, inner.width, inner.height - 2);
        self.render_list(list, buf, theme);
        self.render_scrollbar(popup, list, buf, theme);
    }

    fn render_query(&mut self, inner: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(inner.width);
        let count = format!("{} of {}", self.matches.len(), self.items.len());
        let count_width = str_width(&count);
        let show_count = count_width + 8 <= width;
        let prompt = " › ";
        let room = width
            .saturating_sub(str_width(prompt) + 1)
            .saturating_sub(if show_count { count_width + 2 } else { 0 });
        buf.set_stringn(
            inner.x,
            inner.y,
            prompt,
            width,
            theme.style(Role::TitleFocused),
        );
        let query = EDITOR.truncate_start(&self.query, room);
        let query_x = inner.x + str_width(prompt).min(width) as u16;
        let (end_x, _) = buf.set_stringn(query_x, inner.y, &query, room, theme.style(Role::Input));
        if self.query.is_empty() && room > 20 {
            buf.set_stringn(
                query_x + 1,
                inner.y,
                self.labels.placeholder,
                room - 1,
                theme.style(Role::Placeholder),
            );
        }
        if end_x < inner.right() {
            buf.set_style(
                Rect::new(end_x, inner.y, 1, 1),
                Style::new().add_modifier(Modifier::REVERSED),
            );
            self.cursor_screen = Some((end_x, inner.y));
        }
        if show_count {
            let x = inner.right() - count_width as u16 - 1;
            buf.set_stringn(x, inner.y, &count, count_width, theme.style(Role::Dim));
        }
    }

    fn render_list(&mut self, list: Rect, buf: &mut Buffer, theme: &Theme) {
        self.list_height = usize::from(list.height);
        if list.is_empty() {
            return;
        }
        if self.matches.is_empty() {
            let message = if self.items.is_empty() {
                "No notes in this vault".to_string()
            } else {
                format!("No note matches “{}”", self.query)
            };
            buf.set_stringn(
                list.x + 2,
                list.y,
                EDITOR.truncate_end(&message, usize::from(list.width).saturating_sub(3)),
                usize::from(list.width).saturating_sub(2),
                theme.style(Role::Dim),
            );
            return;
        }
        let height = usize::from(list.height);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + height {
            self.scroll = self.selected + 1 - height;
        }
        for row in 0..height {
            let Some(&item_index) = self.matches.get(self.scroll + row) else {
                break;
            };
            let y = list.y + row as u16;
            let selected = self.scroll + row == self.selected;
            let hits = self.hits(item_index);
            let row_area = Rect::new(list.x, y, list.width, 1);
            if selected {
                buf.set_style(row_area, theme.style(Role::PickerSelected));
            }
            self.render_row(row_area, buf, theme, item_index, &hits, selected);
        }
    }

    /// Where each word of the query matches each field of an item, for highlighting: every
    /// field a word matches is lit, so `plan` lights both the title and the path.
    fn hits(&mut self, item_index: usize) -> RowHits {
        let hay = &self.haystacks[item_index];
        let mut hits = RowHits::default();
        if self.pattern.atoms.is_empty() {
            return hits;
        }
        let (title, title_matches_all) = field_hits(&self.pattern, &mut self.matcher, &hay.title);
        hits.title = title;
        hits.path = field_hits(&self.pattern, &mut self.matcher, &hay.path).0;
        if !title_matches_all {
            hits.alias = hay.aliases.iter().enumerate().find_map(|(n, alias)| {
                let (found, _) = field_hits(&self.pattern, &mut self.matcher, alias);
                (!found.is_empty()).then_some((n, found))
            });
        }
        hits
    }

    fn render_row(
        &self,
        row: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        item_index: usize,
        hits: &RowHits,
        selected: bool,
    ) {
        let item = &self.items[item_index];
        let selection = if selected {
            theme.style(Role::PickerSelected)
        } else {
            Style::new()
        };
        let text = theme.style(Role::Text).patch(selection);
        let dim = theme.style(Role::Dim).patch(selection);
        let matched = |style: Style| style.patch(theme.style(Role::PickerMatch));
        let width = usize::from(row.width);
        let marker = if selected { " ▌" } else { "  " };
        buf.set_stringn(
            row.x,
            row.y,
            marker,
            width,
            theme.style(Role::BorderFocused).patch(selection),
        );
        let body_x = row.x + 2.min(row.width);
        let body_width = width.saturating_sub(3);
        let title_hits = &hits.title;
        let path_hits = &hits.path;
        let alias = hits
            .alias
            .as_ref()
            .and_then(|(n, found)| Some((item.aliases.get(*n)?.as_str(), found.clone())));

        let path_width = str_width(&item.path);
        let path_room = path_width.min(body_width * 2 / 5);
        let title_room = body_width.saturating_sub(path_room + 2);
        let title = display_title(item);
        let mut x = body_x;
        x = draw_highlighted(
            buf,
            x,
            row.y,
            title,
            title_hits,
            title_room,
            text,
            matched(text),
        );
        if let Some((alias, hits)) = alias {
            let used = usize::from(x - body_x);
            let room = title_room.saturating_sub(used);
            if room > 6 {
                let (after_label, _) = buf.set_stringn(x, row.y, "  = ", room, dim);
                let room = room.saturating_sub(4);
                draw_highlighted(
                    buf,
                    after_label,
                    row.y,
                    alias,
                    &hits,
                    room,
                    dim,
                    matched(dim),
                );
            }
        }
        // The path, right-aligned; cut from the front so the file name stays.
        if path_room > 0 {
            let shown = EDITOR.truncate_start(&item.path, path_room);
            let truncated = path_width > path_room;
            // Chars of the path cut off in front (the `…` takes one place of its own).
            let cut = item.path.chars().count() + usize::from(truncated) - shown.chars().count();
            let shown_hits: Vec<usize> = path_hits
                .iter()
                .filter(|&&i| i >= cut)
                .map(|&i| i - cut + usize::from(truncated))
                .collect();
            let path_x = row.x + (2 + body_width - str_width(&shown)) as u16;
            draw_highlighted(
                buf,
                path_x,
                row.y,
                &shown,
                &shown_hits,
                path_room,
                dim,
                matched(dim),
            );
        }
    }

    fn render_scrollbar(&self, popup: Rect, list: Rect, buf: &mut Buffer, theme: &Theme) {
        let total = self.matches.len();
        let height = usize::from(list.height);
        if total <= height || height == 0 {
            return;
        }
        let thumb = (height * height / total).clamp(1, height);
        let start = (height * self.scroll / total).min(height - thumb);
        let x = popup.right() - 1;
        for offset in start..start + thumb {
            buf.set_stringn(
                x,
                list.y + offset as u16,
                "┃",
                1,
                theme.style(Role::Scrollbar),
            );
        }
    }

    fn move_selection(&mut self, delta: isize) {
        if self.matches.is_empty() {
            self.selected = 0;
            return;
        }
        let last = self.matches.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    fn edit_query(&mut self, key: &KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let before = self.query.clone();
        match key.code {
            KeyCode::Char('u') if ctrl && !alt => self.query.clear(),
            KeyCode::Char('w') if ctrl && !alt => delete_word(&mut self.query),
            KeyCode::Char(c) if ctrl == alt => self.query.push(c),
            KeyCode::Backspace if ctrl || alt => delete_word(&mut self.query),
            KeyCode::Backspace => {
                self.query.pop();
            }
            _ => {}
        }
        if self.query != before {
            self.refilter();
        }
    }

    fn refilter(&mut self) {
        self.pattern
            .reparse(&self.query, CaseMatching::Smart, Normalization::Smart);
        self.selected = 0;
        self.scroll = 0;
        if self.pattern.atoms.is_empty() {
            self.matches = self.by_path.clone();
            self.narrowable = None;
            return;
        }
        // Appending to the query only removes matches, unless it touches a negation (`!foo`
        // matches more as it grows) or an escape.
        let narrow = self.narrowable.as_deref().is_some_and(|previous| {
            self.query.starts_with(previous) && !self.query.contains(['!', '\\'])
        });
        let candidates: Vec<usize> = if narrow {
            std::mem::take(&mut self.matches)
        } else {
            (0..self.items.len()).collect()
        };
        let mut ranked: Vec<(u32, usize)> = Vec::with_capacity(candidates.len());
        for index in candidates {
            if let Some(score) = rank(&self.pattern, &mut self.matcher, &self.haystacks[index]) {
                ranked.push((score, index));
            }
        }
        let items = &self.items;
        ranked.sort_by(|(score_a, a), (score_b, b)| {
            score_b
                .cmp(score_a)
                .then_with(|| items[*a].path.len().cmp(&items[*b].path.len()))
                .then_with(|| items[*a].path.cmp(&items[*b].path))
        });
        self.matches = ranked.into_iter().map(|(_, index)| index).collect();
        self.narrowable = Some(self.query.clone());
    }
}

/// An item's score, or `None` when it does not match: every word of the query must match some
/// field (title, path or an alias; so `proj plan` finds "Plan" in `Projects/`), scoring its best
/// field, a title with [`TITLE_BONUS`] and an alias with [`ALIAS_BONUS`]; a `!word` must match none.
fn rank(pattern: &Pattern, matcher: &mut Matcher, hay: &Haystack) -> Option<u32> {
    let mut total = 0;
    for atom in &pattern.atoms {
        if atom.negative {
            // A negative atom scores `Some` when it does not match.
            atom.score(hay.title.slice(..), matcher)?;
            atom.score(hay.path.slice(..), matcher)?;
            for alias in &hay.aliases {
                atom.score(alias.slice(..), matcher)?;
            }
            continue;
        }
        let title = atom
            .score(hay.title.slice(..), matcher)
            .map(|s| u32::from(s) + TITLE_BONUS);
        let path = atom.score(hay.path.slice(..), matcher).map(u32::from);
        let alias = hay
            .aliases
            .iter()
            .filter_map(|alias| atom.score(alias.slice(..), matcher))
            .max()
            .map(|s| u32::from(s) + ALIAS_BONUS);
        total += title.max(path).max(alias)?;
    }
    Some(total)
}

/// The chars of `field` that the query's words match, and whether every word matched it.
fn field_hits(pattern: &Pattern, matcher: &mut Matcher, field: &Utf32String) -> (Vec<usize>, bool) {
    let mut hits = Vec::new();
    let mut all = true;
    let mut found = Vec::new();
    for atom in pattern.atoms.iter().filter(|atom| !atom.negative) {
        found.clear();
        if atom.indices(field.slice(..), matcher, &mut found).is_some() {
            hits.extend(found.iter().map(|&i| i as usize));
        } else {
            all = false;
        }
    }
    hits.sort_unstable();
    hits.dedup();
    (hits, all)
}

/// The title shown for an item: its title, or the file name without `.md`.
fn display_title(item: &PickerItem) -> &str {
    if item.title.trim().is_empty() {
        let name = item.path.rsplit('/').next().unwrap_or(&item.path);
        name.strip_suffix(".md").unwrap_or(name)
    } else {
        &item.title
    }
}

fn haystack(item: &PickerItem) -> Haystack {
    Haystack {
        title: utf32(display_title(item)),
        path: utf32(&item.path),
        aliases: item.aliases.iter().map(|a| utf32(a)).collect(),
    }
}

/// One matcher char per Unicode scalar value (nucleo's own conversion works in graphemes, whose
/// indices would not line up with the chars drawn).
fn utf32(text: &str) -> Utf32String {
    if text.is_ascii() {
        Utf32String::Ascii(text.into())
    } else {
        Utf32String::Unicode(text.chars().collect())
    }
}

/// Draw `text` (cut to `room` cells) with the chars at `hits` in `hit_style`; returns the x after it.
#[allow(clippy::too_many_arguments)]
fn draw_highlighted(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    text: &str,
    hits: &[usize],
    room: usize,
    style: Style,
    hit_style: Style,
) -> u16 {
    let shown = EDITOR.truncate_end(text, room);
    let mut x = x;
    let mut left = room;
    let mut chunk = [0u8; 4];
    for (i, c) in shown.chars().enumerate() {
        if left == 0 {
            break;
        }
        let s = if hits.contains(&i) { hit_style } else { style };
        let symbol: &str = c.encode_utf8(&mut chunk);
        let (next, _) = buf.set_stringn(x, y, symbol, left, s);
        left = left.saturating_sub(usize::from(next - x));
        x = next;
    }
    x
}

fn delete_word(text: &mut String) {
    let trimmed = text.trim_end_matches([' ', '/']).len();
    text.truncate(trimmed);
    let keep = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace() || *c == '/')
        .map_or(0, |(i, c)| i + c.len_utf8());
    text.truncate(keep);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};

    fn item(path: &str, title: &str, aliases: &[&str]) -> PickerItem {
        PickerItem {
            path: path.to_string(),
            title: title.to_string(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
        }
    }

    fn sample() -> Vec<PickerItem> {
        vec![
            item("Projects/Plan.md", "Plan for Q3", &["Q3 plan"]),
            item("Archive/plans-2023.md", "Old budget", &[]),
            item("Daily/2024-05-01.md", "", &[]),
            item("Notes/Reading list.md", "Reading list", &["books"]),
            item("日記/今日.md", "今日の日記", &["diary"]),
            item("Projects/Editor.md", "The editor pane", &[]),
        ]
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn type_query(picker: &mut Picker, text: &str) {
        for c in text.chars() {
            picker.handle(None, &key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn an_empty_query_lists_every_note_by_path() {
        let picker = Picker::new(sample());
        assert_eq!(
            picker.matched_paths(),
            vec![
                "Archive/plans-2023.md",
                "Daily/2024-05-01.md",
                "Notes/Reading list.md",
                "Projects/Editor.md",
                "Projects/Plan.md",
                "日記/今日.md",
            ]
        );
        assert_eq!(picker.selected_path(), Some("Archive/plans-2023.md"));
    }

    #[test]
    fn a_title_match_ranks_before_a_path_only_match() {
        let mut picker = Picker::new(vec![
            item("notes/plan.md", "Budget", &[]),
            item("x/y.md", "Plan", &[]),
        ]);
        type_query(&mut picker, "plan");
        assert_eq!(picker.matched_paths(), vec!["x/y.md", "notes/plan.md"]);
    }

    #[test]
    fn aliases_find_notes() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "books");
        assert_eq!(picker.matched_paths(), vec!["Notes/Reading list.md"]);
        picker.set_query("diary");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
    }

    #[test]
    fn cjk_titles_and_paths_match() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "日記");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
        picker.set_query("今日");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
    }

    #[test]
    fn untitled_notes_match_by_file_name() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "2024-05");
        assert_eq!(picker.matched_paths(), vec!["Daily/2024-05-01.md"]);
    }

    #[test]
    fn words_may_come_from_different_fields() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "projects editor");
        assert_eq!(picker.matched_paths(), vec!["Projects/Editor.md"]);
    }

    #[test]
    fn typing_and_deleting_edit_the_query() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "plaX");
        assert_eq!(picker.query(), "plaX");
        assert!(picker.matched_paths().is_empty());
        picker.handle(None, &key(KeyCode::Backspace));
        assert_eq!(picker.query(), "pla");
        assert_eq!(picker.selected_path(), Some("Projects/Plan.md"));
        picker.handle(
            None,
            &KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        );
        assert_eq!(picker.query(), "");
        assert_eq!(picker.matched_paths().len(), 6);
        type_query(&mut picker, "read list");
        picker.handle(
            None,
            &KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL),
        );
        assert_eq!(picker.query(), "read ");
    }

    #[test]
    fn narrowing_gives_the_same_result_as_a_fresh_search() {
        let mut narrowed = Picker::new(sample());
        type_query(&mut narrowed, "pl");
        type_query(&mut narrowed, "a");
        let mut fresh = Picker::new(sample());
        fresh.set_query("pla");
        assert_eq!(narrowed.matched_paths(), fresh.matched_paths());
        // A negation widens as it grows, so it is searched afresh.
        narrowed.set_query("!pl");
        let excluded = narrowed.matched_paths().len();
        type_query(&mut narrowed, "a");
        assert!(narrowed.matched_paths().len() >= excluded);
        fresh.set_query("!pla");
        assert_eq!(narrowed.matched_paths(), fresh.matched_paths());
    }

    #[test]
    fn up_down_confirm_and_cancel() {
        let mut picker = Picker::new(sample());
        assert_eq!(picker.handle(Some(Action::Down), &key(KeyCode::Down)), None);
        assert_eq!(picker.selected_path(), Some("Daily/2024-05-01.md"));
        picker.handle(Some(Action::Up), &key(KeyCode::Up));
        picker.handle(Some(Action::Up), &key(KeyCode::Up));
        assert_eq!(
            picker.selected_path(),
            Some("Archive/plans-2023.md"),
            "stops at the top"
        );
        for _ in 0..10 {
            picker.handle(Some(Action::Down), &key(KeyCode::Down));
        }
        assert_eq!(
            picker.selected_path(),
            Some("日記/今日.md"),
            "stops at the bottom"
        );
        assert_eq!(
            picker.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(PickerOutcome::Open("日記/今日.md".to_string()))
        );
        assert_eq!(
            picker.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(PickerOutcome::Cancel)
        );
        // Actions that are not the picker's are ignored, and do not type.
        assert_eq!(
            picker.handle(Some(Action::Delete), &key(KeyCode::Char('d'))),
            None
        );
        assert_eq!(picker.query(), "");
        // Typing resets the selection to the best match.
        type_query(&mut picker, "editor");
        assert_eq!(picker.selected_path(), Some("Projects/Editor.md"));
        // Nothing to open: Confirm does nothing.
        type_query(&mut picker, "zzz");
        assert_eq!(
            picker.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
    }

    #[test]
    fn ten_thousand_notes_filter_and_narrow() {
        // Correctness at size only; speed is measured by benchmarks, not by timed tests.
        let items: Vec<PickerItem> = (0..10_000)
            .map(|n| {
                item(
                    &format!("Folder {}/Sub {}/Note number {n}.md", n % 37, n % 11),
                    &format!("Note about topic {n}"),
                    &[],
                )
            })
            .collect();
        let mut picker = Picker::new(items);
        picker.set_query("topic 4");
        let broad = picker.matched_paths().len();
        assert!(broad > 0 && broad < 10_000, "{broad}");
        // Typing one more character narrows the matches so far.
        type_query(&mut picker, "2");
        let narrow = picker.matched_paths();
        assert!(narrow.len() < broad);
        assert!(
            narrow.iter().all(|p| p.contains('4') && p.contains('2')),
            "{narrow:?}"
        );
    }

    fn rendered(picker: &mut Picker, width: u16, height: u16) -> Buffer {
        let theme = Theme::builtin_dark();
        let mut buf = buffer(width, height);
        picker.render(buf.area, &mut buf, &theme);
        buf
    }

    #[test]
    fn snapshot_picker_with_query_80x24() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "pl");
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_query_80x24", buffer_text(&buf));
    }

    #[test]
    fn snapshot_picker_with_query_120x40() {
        let mut items = sample();
        items.extend((1..=40).map(|n| {
            item(
                &format!("Journal/2024/Week {n:02}.md"),
                &format!("Week {n} review"),
                &[],
            )
        }));
        let mut picker = Picker::new(items);
        type_query(&mut picker, "wee");
        picker.handle(Some(Action::Down), &key(KeyCode::Down));
        let buf = rendered(&mut picker, 120, 40);
        insta::assert_snapshot!("picker_query_120x40", buffer_text(&buf));
    }

    #[test]
    fn snapshot_picker_empty_query_and_no_match_80x24() {
        let mut picker = Picker::new(sample());
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_all_80x24", buffer_text(&buf));
        type_query(&mut picker, "nothing like this");
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_no_match_80x24", buffer_text(&buf));
    }

    fn templates() -> Vec<PickerItem> {
        [
            "Daily",
            "Meeting",
            "Weekly review",
            "Work/Standup",
            "Work/Retro",
        ]
        .iter()
        .map(|name| item(&format!("Templates/{name}.md"), name, &[]))
        .collect()
    }

    #[test]
    fn snapshot_template_picker_80x24() {
        let mut picker = Picker::templates(templates());
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("template_picker_all_80x24", buffer_text(&buf));
    }

    #[test]
    fn snapshot_template_picker_with_query_120x40() {
        let mut picker = Picker::templates(templates());
        type_query(&mut picker, "work");
        let buf = rendered(&mut picker, 120, 40);
        let text = buffer_text(&buf);
        assert!(
            text.contains(" Insert template ") && text.contains("insert"),
            "{text}"
        );
        insta::assert_snapshot!("template_picker_query_120x40", text);
        // Enter chooses the template: the app inserts the text it holds for that path.
        assert_eq!(
            picker.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(PickerOutcome::Open(
                picker.selected_path().unwrap_or_default().to_string()
            ))
        );
        assert!(
            picker
                .selected_path()
                .is_some_and(|p| p.starts_with("Templates/Work/")),
            "{:?}",
            picker.selected_path()
        );
    }

    #[test]
    fn matched_chars_and_the_selected_row_use_their_roles() {
        let theme = Theme::builtin_dark();
        let mut picker = Picker::new(vec![
            item("A/zeta.md", "Zeta", &[]),
            item("B/other.md", "Other", &[]),
        ]);
        type_query(&mut picker, "zet");
        let buf = rendered(&mut picker, 80, 24);
        let zeta = style_at(&buf, "Zeta").unwrap_or_default();
        assert_eq!(zeta.fg, theme.style(Role::PickerMatch).fg, "Z matched");
        assert_eq!(
            zeta.bg,
            theme.style(Role::PickerSelected).bg,
            "selected row"
        );
        let path = style_at(&buf, "A/zeta.md").unwrap_or_default();
        assert_eq!(path.fg, theme.style(Role::Dim).fg, "A is not matched");
        assert_eq!(
            picker.cursor_position().map(|(_, y)| y),
            Some(7),
            "the query row"
        );
    }

    #[test]
    fn an_alias_that_matched_is_shown_beside_the_title() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "books");
        let text = buffer_text(&rendered(&mut picker, 80, 24));
        assert!(text.contains("▌Reading list  = books"), "{text}");
        // When the title matches, the alias stays hidden.
        picker.set_query("reading");
        let text = buffer_text(&rendered(&mut picker, 80, 24));
        assert!(!text.contains("= books"), "{text}");
    }

    #[test]
    fn long_paths_keep_their_file_name() {
        let mut picker = Picker::new(vec![item(
            "A very long folder name/that goes deeper/and deeper still/into the vault/Target note.md",
            "Target",
            &[],
        )]);
        let buf = rendered(&mut picker, 80, 24);
        let text = buffer_text(&buf);
        assert!(text.contains("…"), "{text}");
        assert!(text.contains("Target note.md"), "{text}");
    }

    #[test]
    fn never_panics_at_any_size() {
        let mut picker = Picker::new(sample());
        type_query(&mut picker, "日");
        for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 3), (10, 4), (20, 6), (300, 100)] {
            let _ = rendered(&mut picker, w, h);
            picker.handle(Some(Action::PageDown), &key(KeyCode::PageDown));
        }
        let mut empty = Picker::new(Vec::new());
        let buf = rendered(&mut empty, 80, 24);
        assert!(buffer_text(&buf).contains("No notes in this vault"));
        assert_eq!(
            empty.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
    }

    #[test]
    fn delete_word_stops_at_spaces_and_slashes() {
        let mut text = "Projects/Plan for".to_string();
        delete_word(&mut text);
        assert_eq!(text, "Projects/Plan ");
        delete_word(&mut text);
        assert_eq!(text, "Projects/");
        delete_word(&mut text);
        assert_eq!(text, "");
    }
}
