//! The note picker (`Ctrl+P`): find a note by title, path or alias.
//!
//! Ranked as Obsidian's quick switcher ranks ([`crate::tui::name_rank`], the rule the `[[` list
//! shares): a note whose title, file name or alias is the query first, then one whose name starts
//! with it, then one where it starts a word, then every other match; within each, the matcher's
//! score, then the note touched last. Matching uses nucleo (the matcher of helix): each word of
//! the query must match one of a note's title, path or aliases, so a query may mix them (`proj
//! plan`); fzf's syntax works (`^prefix`, `suffix$`, `'exact`, `!not`). A word scores its best
//! field, a title with a bonus and an alias with a smaller one. An empty query lists every note by
//! path. A query that extends the previous one only re-checks the previous matches. At 137k notes
//! a keystroke decides most matches without the matcher's alignment (letters in order, for ASCII)
//! and scores only the tiers the first pages draw on; the rest are scored when the list nears
//! them (docs/decisions.md §69).
//!
//! The picker owns no copy of the vault's names: it reads the file pane's listing (one shared
//! [`NoteTable`]) and keeps only the indices of its matches, all of it dropped when it closes.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use std::collections::HashMap;

use crate::tui::files::{NoteEntry, NoteTable};
use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::name_rank::{self, NameQuery, Tier};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::{EDITOR, char_width, str_width};

/// Added to a title's own score: a title match outranks the same match in a path.
const TITLE_BONUS: u32 = 16;
/// Added to an alias's own score.
const ALIAS_BONUS: u32 = 8;

/// How the picker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// Open the note at this path.
    Open(String),
    Cancel,
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
    /// The vault's notes, sorted by path (shared with the file pane and the `[[` list).
    notes: NoteTable,
    /// When notes were opened or saved in the app (ns), beside their modification times: the
    /// note touched last wins a tie.
    touched: HashMap<String, i64>,
    /// Whether the listing has arrived (before, the list says it is coming).
    loaded: bool,
    query: String,
    pattern: Pattern,
    name_query: NameQuery,
    matcher: Matcher,
    /// Note indices, best first; `None` for an empty query (every note, by path).
    matches: Option<Vec<u32>>,
    /// Matches after those in `matches`, not sorted yet ([`Picker::rank_the_rest`]).
    unranked: Vec<Ranked>,
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
    /// A picker over `notes` (sorted by path), showing all of them by path. `touched`: when notes
    /// were opened or written in the app, for ties.
    pub fn new(notes: NoteTable, touched: HashMap<String, i64>) -> Self {
        Picker {
            notes,
            touched,
            loaded: true,
            query: String::new(),
            pattern: Pattern::default(),
            name_query: NameQuery::default(),
            matcher: Matcher::new(Config::DEFAULT),
            matches: None,
            unranked: Vec::new(),
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
    pub fn templates(items: Vec<NoteEntry>) -> Self {
        Picker {
            labels: TEMPLATE_LABELS,
            ..Picker::new(NoteTable::new(items), HashMap::new())
        }
    }

    /// A picker opened before the vault's listing arrived: it says so, and takes the listing
    /// through [`Picker::set_notes`].
    pub fn loading() -> Self {
        let mut picker = Picker::new(NoteTable::default(), HashMap::new());
        picker.loaded = false;
        picker
    }

    /// A fresh listing while the picker is open: the query is matched again, and the note the
    /// person had selected stays selected (at the same row of the view when it can); when it is
    /// gone, the selection stays on the same row.
    pub fn set_notes(&mut self, notes: NoteTable, touched: HashMap<String, i64>) {
        let chosen = self.selected_path().map(str::to_string);
        let (row, view_row) = (self.selected, self.selected.saturating_sub(self.scroll));
        self.notes = notes;
        self.touched = touched;
        self.loaded = true;
        self.narrowable = None;
        self.refilter();
        let found = chosen.and_then(|path| self.position_of(&path));
        let count = self.match_count();
        self.selected = found.unwrap_or(row).min(count.saturating_sub(1));
        self.scroll = self.selected.saturating_sub(view_row);
        self.rank_if_near_the_rest();
    }

    /// Where the note at `path` is among the matches, sorting the rest first when it is there.
    fn position_of(&mut self, path: &str) -> Option<usize> {
        let index = self
            .notes
            .binary_search_by(|n| n.path.as_str().cmp(path))
            .ok()?;
        let index = u32::try_from(index).ok()?;
        let Some(matches) = &self.matches else {
            // An empty query lists every note in the listing's order.
            return Some(index as usize);
        };
        if let Some(found) = matches.iter().position(|&m| m == index) {
            return Some(found);
        }
        if !self.unranked.iter().any(|r| r.3 == index) {
            return None;
        }
        self.rank_the_rest();
        self.matches.as_ref()?.iter().position(|&m| m == index)
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
        (0..self.match_count())
            .filter_map(|n| self.match_at(n))
            .map(|note| note.path.as_str())
            .collect()
    }

    /// The path of the selected match.
    pub fn selected_path(&self) -> Option<&str> {
        self.match_at(self.selected).map(|note| note.path.as_str())
    }

    /// How many notes match the query.
    fn match_count(&self) -> usize {
        self.matches
            .as_ref()
            .map_or(self.notes.len(), |m| m.len() + self.unranked.len())
    }

    /// The `n`th match, best first.
    fn match_at(&self, n: usize) -> Option<&NoteEntry> {
        self.notes.get(self.match_index(n)?)
    }

    /// The index in the listing of the `n`th match.
    fn match_index(&self, n: usize) -> Option<usize> {
        match &self.matches {
            // Past the sorted ones: the rest in no order yet (the list sorts them before it
            // shows them or moves onto them).
            Some(matches) => matches
                .get(n)
                .copied()
                .or_else(|| self.unranked.get(n - matches.len()).map(|r| r.3))
                .map(|index| index as usize),
            None => (n < self.notes.len()).then_some(n),
        }
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
        let count = format!("{} of {}", self.match_count(), self.notes.len());
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
        self.rank_if_near_the_rest();
        if list.is_empty() {
            return;
        }
        if self.match_count() == 0 {
            let message = if !self.loaded {
                "Listing the vault's notes…".to_string()
            } else if self.notes.is_empty() {
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
        // Its own handle on the listing, so rows can be read while the matcher is borrowed.
        let notes = std::sync::Arc::clone(&self.notes);
        for row in 0..height {
            let Some(note) = self
                .match_index(self.scroll + row)
                .and_then(|index| notes.get(index))
            else {
                break;
            };
            let y = list.y + row as u16;
            let selected = self.scroll + row == self.selected;
            let hits = hits(&self.pattern, &mut self.matcher, note);
            let row_area = Rect::new(list.x, y, list.width, 1);
            if selected {
                buf.set_style(row_area, theme.style(Role::PickerSelected));
            }
            render_row(row_area, buf, theme, note, &hits, selected);
        }
    }

    fn render_scrollbar(&self, popup: Rect, list: Rect, buf: &mut Buffer, theme: &Theme) {
        let total = self.match_count();
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
        let Some(last) = self.match_count().checked_sub(1) else {
            self.selected = 0;
            return;
        };
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.rank_if_near_the_rest();
    }

    /// Sort the rest of the matches when the selection or the view comes within a page of them.
    fn rank_if_near_the_rest(&mut self) {
        let sorted = self.matches.as_ref().map_or(usize::MAX, Vec::len);
        let reach = self.selected.max(self.scroll) + self.list_height.max(1) * 2;
        if reach >= sorted {
            self.rank_the_rest();
        }
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
        self.name_query = NameQuery::new(&self.query);
        self.selected = 0;
        self.scroll = 0;
        if self.pattern.atoms.is_empty() {
            self.matches = None;
            self.unranked.clear();
            self.narrowable = None;
            return;
        }
        // Appending to the query only removes matches, unless it touches a negation (`!foo`
        // matches more as it grows) or an escape.
        let narrow = self.narrowable.as_deref().is_some_and(|previous| {
            self.query.starts_with(previous) && !self.query.contains(['!', '\\'])
        });
        let unranked = std::mem::take(&mut self.unranked);
        let candidates: Vec<u32> = match self.matches.take() {
            Some(mut previous) if narrow => {
                previous.extend(unranked.into_iter().map(|(.., index)| index));
                previous
            }
            // Indices fit in u32: a vault of four billion notes is not listed.
            _ => (0..self.notes.len() as u32).collect(),
        };
        let mut chars = Vec::new();
        let mut ranked: Vec<Ranked> = Vec::with_capacity(candidates.len());
        let mut per_tier = [0usize; 4];
        let ahead = (self.list_height.max(1) * 3).max(MIN_SCORED_AHEAD);
        // Whether the first pages will need the fuzzy tier is known only at the end; guessed from
        // the first eighth of the notes, so that when they will (a query whose letters start no
        // name) each note is scored while it is at hand rather than read again in a second pass.
        let guess_at = candidates.len() / 8;
        let mut score_now = false;
        for (n, index) in candidates.into_iter().enumerate() {
            if n == guess_at {
                score_now = (per_tier[0] + per_tier[1] + per_tier[2]) * 8 < ahead;
            }
            let Some(note) = self.notes.get(index as usize) else {
                continue;
            };
            // Whether it matches is decided without the matcher's alignment where it can be;
            // the score, which costs the alignment, only for the notes the first page draws on.
            let (score, may_tier) = match quick_match(&self.pattern, note) {
                Some(Quick::No) => continue,
                Some(Quick::Yes { by_name }) => (UNSCORED, by_name),
                None => match score(&self.pattern, &mut self.matcher, note, &mut chars) {
                    Some(score) => (score, true),
                    None => continue,
                },
            };
            // The file name counts as a name too; it is the title already when there is none.
            // A note only the path matches (most of them, for a short query in a big vault) can
            // have no better tier than fuzzy: a name that equals or starts the query holds it.
            let tier = if may_tier {
                let stem = (!note.title.trim().is_empty()).then(|| note.stem());
                self.name_query.best_tier(names(note).chain(stem))
            } else {
                Tier::Fuzzy
            };
            let opened = if self.touched.is_empty() {
                None
            } else {
                self.touched.get(&note.path)
            };
            let touched = opened.map_or(note.modified_ns, |&t| t.max(note.modified_ns));
            per_tier[tier as usize] += 1;
            let mut entry = (tier, score, touched, index);
            if score_now {
                fill_score(
                    &mut entry,
                    &self.notes,
                    &self.pattern,
                    &mut self.matcher,
                    &mut chars,
                );
            }
            ranked.push(entry);
        }
        // The first pages come from the best tiers: those up to the one that fills three lists'
        // worth of rows are scored and ranked now; matches of worse tiers (at 137k notes, tens of
        // thousands of path-only matches for `tar`) wait, unscored, until the list comes within a
        // page of them ([`Picker::rank_if_near_the_rest`]).
        let mut enough = Tier::Fuzzy;
        let mut seen = 0;
        for tier in [Tier::Exact, Tier::Prefix, Tier::WordStart, Tier::Fuzzy] {
            seen += per_tier[tier as usize];
            if seen >= ahead {
                enough = tier;
                break;
            }
        }
        let mut later = Vec::new();
        if enough != Tier::Fuzzy {
            let (now, rest): (Vec<Ranked>, Vec<Ranked>) =
                ranked.into_iter().partition(|r| r.0 <= enough);
            ranked = now;
            later = rest;
        }
        for entry in &mut ranked {
            fill_score(
                entry,
                &self.notes,
                &self.pattern,
                &mut self.matcher,
                &mut chars,
            );
        }
        let notes = &self.notes;
        let order = |a: &Ranked, b: &Ranked| rank_order(notes, a, b);
        // Only the first rows are seen at once: choose them, sort those, and leave the rest to be
        // sorted when the list is moved to them ([`Picker::rank_the_rest`]).
        if ranked.len() > RANKED_AHEAD {
            ranked.select_nth_unstable_by(RANKED_AHEAD, order);
            self.unranked = ranked.split_off(RANKED_AHEAD);
        }
        self.unranked.append(&mut later);
        ranked.sort_by(order);
        self.matches = Some(ranked.into_iter().map(|(.., index)| index).collect());
        self.narrowable = Some(self.query.clone());
    }

    /// Sort the matches past the first [`RANKED_AHEAD`] into place, once the selection or the
    /// view is about to reach them.
    fn rank_the_rest(&mut self) {
        if self.unranked.is_empty() {
            return;
        }
        let mut chars = Vec::new();
        for entry in &mut self.unranked {
            fill_score(
                entry,
                &self.notes,
                &self.pattern,
                &mut self.matcher,
                &mut chars,
            );
        }
        let notes = &self.notes;
        self.unranked.sort_by(|a, b| rank_order(notes, a, b));
        let rest = std::mem::take(&mut self.unranked);
        if let Some(matches) = self.matches.as_mut() {
            matches.extend(rest.into_iter().map(|(.., index)| index));
        }
    }
}

/// A match as it is ranked: its tier, the matcher's score, when it was last touched, its index.
type Ranked = (Tier, u32, i64, u32);

/// At least this many matches are scored at a keystroke, however small the list (the tiers that
/// hold them); the rest when the list reaches them.
const MIN_SCORED_AHEAD: usize = 64;

/// The score of a match whose score is not computed yet ([`fill_score`]).
const UNSCORED: u32 = u32::MAX;

/// Compute the score of a match that [`quick_match`] let through unscored.
fn fill_score(
    entry: &mut Ranked,
    notes: &[NoteEntry],
    pattern: &Pattern,
    matcher: &mut Matcher,
    chars: &mut Vec<char>,
) {
    if entry.1 == UNSCORED {
        // `quick_match` decides as the matcher does, so a score is there; 0 if it were not.
        entry.1 = notes
            .get(entry.3 as usize)
            .and_then(|note| score(pattern, matcher, note, chars))
            .unwrap_or(0);
    }
}

/// What [`quick_match`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quick {
    No,
    /// Every word matches some field. `by_name`: the note's names may tier it (it has a title or
    /// an alias of its own, or its file name holds every word); when false only its path holds
    /// them, so it is [`Tier::Fuzzy`] (an exact, prefix or word-start name holds the query's
    /// letters in order).
    Yes {
        by_name: bool,
    },
}

/// Whether every word of the query matches some field of `note` (title, path, an alias),
/// decided without the matcher where that gives the same answer: a fuzzy word of ASCII letters
/// against ASCII text matches where its letters appear in order — ignoring case unless the word
/// has a capital, as the matcher's smart case — which is what nucleo decides before it aligns
/// and scores. `None` when the matcher must decide (fzf's operators, text beyond ASCII).
fn quick_match(pattern: &Pattern, note: &NoteEntry) -> Option<Quick> {
    let title = note.display_title();
    let mut by_name = !note.title.trim().is_empty() || !note.aliases.is_empty();
    let mut name_holds_all = true;
    for atom in &pattern.atoms {
        if atom.negative || !matches!(atom.kind, AtomKind::Fuzzy) {
            return None;
        }
        let Utf32Str::Ascii(needle) = atom.needle_text() else {
            return None;
        };
        let ignore_case = !needle.iter().any(u8::is_ascii_uppercase);
        let fields = [title, note.path.as_str()]
            .into_iter()
            .chain(note.aliases.iter().map(String::as_str));
        let mut matched = false;
        for (n, field) in fields.enumerate() {
            if !field.is_ascii() {
                return None;
            }
            if in_order(needle, field.as_bytes(), ignore_case) {
                matched = true;
                break;
            }
            if n == 0 {
                name_holds_all = false;
            }
        }
        if !matched {
            return Some(Quick::No);
        }
    }
    by_name |= name_holds_all;
    Some(Quick::Yes { by_name })
}

/// Whether the bytes of `needle` appear in `text` in order.
fn in_order(needle: &[u8], text: &[u8], ignore_case: bool) -> bool {
    let mut wanted = needle.iter();
    let mut next = wanted.next();
    for &byte in text {
        let Some(&want) = next else {
            return true;
        };
        let byte = if ignore_case {
            byte.to_ascii_lowercase()
        } else {
            byte
        };
        if byte == want {
            next = wanted.next();
        }
    }
    next.is_none()
}

/// Matches past this many are sorted only when the list reaches them: a keystroke on a vault of
/// 137,000 notes sorts what the list can show, not the vault.
const RANKED_AHEAD: usize = 256;

/// The order of two matches: [`name_rank::compare`], then the shorter path, then the path.
fn rank_order(notes: &[NoteEntry], a: &Ranked, b: &Ranked) -> std::cmp::Ordering {
    name_rank::compare((a.0, a.1, a.2), (b.0, b.1, b.2)).then_with(|| {
        let (a, b) = (&notes[a.3 as usize], &notes[b.3 as usize]);
        a.path
            .len()
            .cmp(&b.path.len())
            .then_with(|| a.path.cmp(&b.path))
    })
}

/// A note's names for the query's tiers: its title (or file name) and its aliases.
fn names(note: &NoteEntry) -> impl Iterator<Item = &str> {
    std::iter::once(note.display_title()).chain(note.aliases.iter().map(String::as_str))
}

/// `text` as the matcher reads it: ASCII as it is, anything else one matcher char per Unicode
/// scalar value in `chars` (nucleo's own conversion works in graphemes, whose indices would not
/// line up with the chars drawn).
fn utf32<'a>(text: &'a str, chars: &'a mut Vec<char>) -> Utf32Str<'a> {
    if text.is_ascii() {
        Utf32Str::Ascii(text.as_bytes())
    } else {
        chars.clear();
        chars.extend(text.chars());
        Utf32Str::Unicode(chars)
    }
}

/// A note's score, or `None` when it does not match: every word of the query must match some
/// field (title, path or an alias; so `proj plan` finds "Plan" in `Projects/`), scoring its best
/// field, a title with [`TITLE_BONUS`] and an alias with [`ALIAS_BONUS`]; a `!word` must match none.
fn score(
    pattern: &Pattern,
    matcher: &mut Matcher,
    note: &NoteEntry,
    chars: &mut Vec<char>,
) -> Option<u32> {
    let mut total = 0;
    for atom in &pattern.atoms {
        let mut field = |text: &str, matcher: &mut Matcher| atom.score(utf32(text, chars), matcher);
        if atom.negative {
            // A negative atom scores `Some` when it does not match.
            field(note.display_title(), matcher)?;
            field(&note.path, matcher)?;
            for alias in &note.aliases {
                field(alias, matcher)?;
            }
            continue;
        }
        let title = field(note.display_title(), matcher).map(|s| u32::from(s) + TITLE_BONUS);
        let path = field(&note.path, matcher).map(u32::from);
        let alias = note
            .aliases
            .iter()
            .filter_map(|alias| field(alias, matcher))
            .max()
            .map(|s| u32::from(s) + ALIAS_BONUS);
        total += title.max(path).max(alias)?;
    }
    Some(total)
}

/// Where each word of the query matches each field of a note, for highlighting: every field a
/// word matches is lit, so `plan` lights both the title and the path.
fn hits(pattern: &Pattern, matcher: &mut Matcher, note: &NoteEntry) -> RowHits {
    let mut hits = RowHits::default();
    if pattern.atoms.is_empty() {
        return hits;
    }
    let (title, title_matches_all) = field_hits(pattern, matcher, note.display_title());
    hits.title = title;
    hits.path = field_hits(pattern, matcher, &note.path).0;
    if !title_matches_all {
        hits.alias = note.aliases.iter().enumerate().find_map(|(n, alias)| {
            let (found, _) = field_hits(pattern, matcher, alias);
            (!found.is_empty()).then_some((n, found))
        });
    }
    hits
}

/// One match on one row: a marker, the title with its matched chars lit (and the alias that
/// matched, when the title did not), and the path on the right. The path gets the room a short
/// title leaves, so notes of the same name show the folders that tell them apart; cut, it keeps
/// its first folder and its end.
fn render_row(
    row: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    note: &NoteEntry,
    hits: &RowHits,
    selected: bool,
) {
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
    let alias = hits
        .alias
        .as_ref()
        .and_then(|(n, found)| Some((note.aliases.get(*n)?.as_str(), found.as_slice())));
    let title = note.display_title();
    // What the title (and its alias) needs, up to three fifths of the row; the path has the rest.
    let wanted = str_width(title) + alias.map_or(0, |(alias, _)| 4 + str_width(alias));
    let path_width = str_width(&note.path);
    let path_room = path_width
        .min(body_width.saturating_sub(wanted.min(body_width * 3 / 5) + 2))
        .min(body_width);
    let title_room = body_width.saturating_sub(path_room + 2);
    let mut x = body_x;
    x = draw_highlighted(
        buf,
        x,
        row.y,
        title,
        &hits.title,
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
                hits,
                room,
                dim,
                matched(dim),
            );
        }
    }
    if path_room > 0 {
        let shown = cut_path(&note.path, path_room);
        let shown_width: usize = shown.iter().map(|&(_, c)| char_width(c)).sum();
        let mut x = row.x + (2 + body_width - shown_width.min(body_width)) as u16;
        let mut chunk = [0u8; 4];
        for (source, c) in shown {
            let lit = source.is_some_and(|i| hits.path.contains(&i));
            let style = if lit { matched(dim) } else { dim };
            x = buf
                .set_stringn(x, row.y, c.encode_utf8(&mut chunk), 2, style)
                .0;
        }
    }
}

/// `path` cut to `room` cells, as (index of the char in `path`, char) pairs (`None` for the `…`
/// put where chars were left out). Whole when it fits; else its first folder, `…` and as much of
/// its end as fits (`tldr-mirror/…/linux/tar.md`: copies of a tree differ in their first folder,
/// folders of a tree in their last); where even that does not fit, `…` and its end.
fn cut_path(path: &str, room: usize) -> Vec<(Option<usize>, char)> {
    let chars: Vec<char> = path.chars().collect();
    let width = |cs: &[char]| cs.iter().map(|&c| char_width(c)).sum::<usize>();
    let all = |range: std::ops::Range<usize>| range.map(|i| (Some(i), chars[i]));
    if width(&chars) <= room {
        return all(0..chars.len()).collect();
    }
    // The longest end of `chars[from..]` that fits `room`.
    let tail_start = |from: usize, room: usize| {
        let mut used = 0;
        let mut start = chars.len();
        while start > from && used + char_width(chars[start - 1]) <= room {
            used += char_width(chars[start - 1]);
            start -= 1;
        }
        start
    };
    let file_name = chars
        .iter()
        .rposition(|&c| c == '/')
        .map_or(0, |slash| slash + 1);
    let first_folder = chars.iter().position(|&c| c == '/').map(|slash| slash + 1);
    if let Some(head) = first_folder.filter(|&head| head < file_name) {
        let head_width = width(&chars[..head]);
        if head_width + 1 + width(&chars[file_name..]) <= room {
            let start = tail_start(head, room - head_width - 1);
            return all(0..head)
                .chain(std::iter::once((None, '…')))
                .chain(all(start..chars.len()))
                .collect();
        }
    }
    if room == 0 {
        return Vec::new();
    }
    let start = tail_start(0, room - 1);
    std::iter::once((None, '…'))
        .chain(all(start..chars.len()))
        .collect()
}

/// The chars of `field` that the query's words match, and whether every word matched it.
fn field_hits(pattern: &Pattern, matcher: &mut Matcher, field: &str) -> (Vec<usize>, bool) {
    let mut chars = Vec::new();
    let field = utf32(field, &mut chars);
    let mut hits = Vec::new();
    let mut all = true;
    let mut found = Vec::new();
    for atom in pattern.atoms.iter().filter(|atom| !atom.negative) {
        found.clear();
        if atom.indices(field, matcher, &mut found).is_some() {
            hits.extend(found.iter().map(|&i| i as usize));
        } else {
            all = false;
        }
    }
    hits.sort_unstable();
    hits.dedup();
    (hits, all)
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

    fn item(path: &str, title: &str, aliases: &[&str]) -> NoteEntry {
        NoteEntry {
            path: path.to_string(),
            title: title.to_string(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            modified_ns: 0,
        }
    }

    /// A picker over `notes`, sorted by path as the file pane's listing is.
    fn picker(mut notes: Vec<NoteEntry>) -> Picker {
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        Picker::new(std::sync::Arc::new(notes), HashMap::new())
    }

    fn sample() -> Vec<NoteEntry> {
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

    #[test]
    fn matches_past_the_first_page_are_sorted_when_the_list_reaches_them() {
        // More matches than are sorted at once; the names that are the query come last by path,
        // so the ranking has to bring them up.
        let notes = || -> Vec<NoteEntry> {
            (0..RANKED_AHEAD * 3)
                .map(|n| item(&format!("a/{n:04} note.md"), "", &[]))
                .chain((0..5).map(|n| item(&format!("z{n}/note.md"), "", &[])))
                .collect()
        };
        let mut lazy = picker(notes());
        type_query(&mut lazy, "note");
        assert_eq!(lazy.match_count(), RANKED_AHEAD * 3 + 5);
        assert!(!lazy.unranked.is_empty(), "the rest waits to be sorted");
        let first: Vec<&str> = lazy.matched_paths().into_iter().take(5).collect();
        assert!(first.iter().all(|p| p.ends_with("/note.md")), "{first:?}");
        // Moving to the last match sorts the rest: the order is that of one whole sort.
        lazy.move_selection(isize::MAX);
        let _ = rendered(&mut lazy, 80, 24);
        assert!(lazy.unranked.is_empty());
        let mut whole = picker(notes());
        whole.set_query("note");
        whole.rank_the_rest();
        assert_eq!(lazy.matched_paths(), whole.matched_paths());
        assert_eq!(lazy.matched_paths().len(), RANKED_AHEAD * 3 + 5);
        // A longer query narrows from every match, the unsorted ones included.
        type_query(&mut lazy, "m");
        assert_eq!(lazy.match_count(), RANKED_AHEAD * 3 + 5);
    }

    fn type_query(picker: &mut Picker, text: &str) {
        for c in text.chars() {
            picker.handle(None, &key(KeyCode::Char(c)));
        }
    }

    /// A tldr-like vault: the issue's names, each in two copies of a tree, and an alias.
    fn commands() -> Vec<NoteEntry> {
        let mut notes = Vec::new();
        for copy in ["tldr/pages/common", "tldr-mirror/pages/common"] {
            for name in [
                "tar", "tart", "git", "git-grep", "cp", "cpio", "guitar", "man",
            ] {
                notes.push(item(&format!("{copy}/{name}.md"), "", &[]));
            }
        }
        notes.push(item("tldr/pages/linux/bsdtar.md", "bsdtar", &["tarball"]));
        notes.push(item("tldr/pages/linux/compress.md", "compress", &["zip"]));
        notes.push(item("tldr/pages/linux/zipinfo.md", "zipinfo", &[]));
        notes
    }

    fn stems(picker: &Picker) -> Vec<&str> {
        picker
            .matched_paths()
            .into_iter()
            .map(crate::vault::name::stem)
            .collect()
    }

    #[test]
    fn the_exact_name_comes_first_then_prefixes_then_word_starts_then_fuzzy() {
        let mut picker = picker(commands());
        picker.set_query("tar");
        // Both copies of `tar`, then `tart` (prefix), then the alias `tarball` (prefix), then
        // `bsdtar` has no word starting with it and `guitar` neither: fuzzy, last.
        assert_eq!(
            stems(&picker)[..5],
            ["tar", "tar", "tart", "tart", "bsdtar"],
            "{:?}",
            picker.matched_paths()
        );
        assert!(
            stems(&picker).iter().rposition(|s| *s == "guitar") > Some(4),
            "fuzzy after"
        );
        for (query, first, second) in [
            ("git", "git", "git-grep"),
            ("cp", "cp", "cpio"),
            ("grep", "git-grep", ""),
        ] {
            picker.set_query(query);
            let found = stems(&picker);
            assert_eq!(found[..2], [first, first], "{query}: {found:?}");
            if !second.is_empty() {
                assert_eq!(found[2..4], [second, second], "{query}: {found:?}");
            }
        }
        // An alias that is the query counts as the name: `compress` before `zipinfo`.
        picker.set_query("zip");
        assert_eq!(stems(&picker)[..2], ["compress", "zipinfo"]);
    }

    /// The quick test of a match answers as the matcher does, or leaves it to the matcher.
    #[test]
    fn the_quick_match_agrees_with_the_matcher() {
        let notes = [
            item("tldr/pages.fr/linux/tar.md", "", &[]),
            item("tldr/pages/common/git-grep.md", "", &["GitGrep"]),
            item("Projects/Plan.md", "Plan for Q3", &["Q3 plan"]),
            item("日記/今日.md", "今日の日記", &["diary"]),
            item("Café/Crème.md", "Crème brûlée", &[]),
        ];
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut chars = Vec::new();
        let mut decided = 0;
        for query in [
            "t", "tar", "tr", "TAR", "Tar", "gg", "GitG", "gitg", "plan q3", "q3 PLAN", "xyz",
            "pl an", "^tl", "tar$", "'grep", "!tar", "diary", "日記", "creme", "crème",
        ] {
            let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
            for note in &notes {
                let matched = score(&pattern, &mut matcher, note, &mut chars).is_some();
                if let Some(quick) = quick_match(&pattern, note) {
                    decided += 1;
                    assert_eq!(quick != Quick::No, matched, "{query:?} on {}", note.path);
                    // A note its names cannot tier is fuzzy.
                    if quick == (Quick::Yes { by_name: false }) {
                        let query = NameQuery::new(query);
                        let stem = (!note.title.trim().is_empty()).then(|| note.stem());
                        let tier = query.best_tier(names(note).chain(stem));
                        assert_eq!(tier, Tier::Fuzzy, "{query:?} on {}", note.path);
                    }
                }
            }
        }
        assert!(decided > 30, "the quick test decided only {decided}");
    }

    /// Past the first page, matches of worse tiers are scored only when the list reaches them,
    /// and then come in the order ranking them all at once gives.
    #[test]
    fn matches_scored_late_come_in_the_order_of_a_full_ranking() {
        let mut notes = Vec::new();
        // Fewer exact names than the first sorted rows, more than three lists of rows.
        for n in 0..MIN_SCORED_AHEAD + 40 {
            notes.push(item(&format!("tldr/pages.{n}/common/tar.md"), "", &[]));
        }
        for (n, name) in [
            "star", "guitar", "tzar", "tiara", "altar", "retard", "t-a-r",
        ]
        .iter()
        .enumerate()
        {
            for copy in 0..30 {
                notes.push(item(&format!("misc{copy}/{n}/{name}.md"), "", &[]));
            }
        }
        notes.push(item("tools/a/r.md", "", &[]));
        let mut lazy = picker(notes.clone());
        lazy.set_query("tar");
        assert!(!lazy.unranked.is_empty(), "the worse tiers wait");
        assert!(lazy.unranked.iter().any(|r| r.1 == UNSCORED), "unscored");
        // The reference: every match scored and sorted at once.
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        let pattern = Pattern::parse("tar", CaseMatching::Smart, Normalization::Smart);
        let query = NameQuery::new("tar");
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut chars = Vec::new();
        let mut all: Vec<Ranked> = notes
            .iter()
            .enumerate()
            .filter_map(|(i, note)| {
                let score = score(&pattern, &mut matcher, note, &mut chars)?;
                Some((
                    query.best_tier(names(note)),
                    score,
                    note.modified_ns,
                    i as u32,
                ))
            })
            .collect();
        all.sort_by(|a, b| rank_order(&notes, a, b));
        let expected: Vec<&str> = all
            .iter()
            .map(|r| notes[r.3 as usize].path.as_str())
            .collect();
        assert_eq!(lazy.match_count(), expected.len());
        // Moving to the end ranks the rest.
        lazy.handle(Some(Action::PageDown), &key(KeyCode::PageDown));
        for _ in 0..100 {
            lazy.handle(Some(Action::PageDown), &key(KeyCode::PageDown));
        }
        assert!(lazy.unranked.is_empty());
        assert_eq!(lazy.matched_paths(), expected);
    }

    #[test]
    fn a_fresh_listing_keeps_the_selected_note_selected() {
        let mut picker = picker(commands());
        picker.set_query("tar");
        picker.handle(Some(Action::Down), &key(KeyCode::Down));
        picker.handle(Some(Action::Down), &key(KeyCode::Down));
        let chosen = picker.selected_path().map(str::to_string);
        assert_eq!(chosen.as_deref(), Some("tldr/pages/common/tart.md"));
        // A note is added before it in the ranking (another `tar`): the selection follows the
        // note, not the row.
        let mut notes = commands();
        notes.push(item("tldr/pages/osx/tar.md", "", &[]));
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        picker.set_notes(std::sync::Arc::new(notes), HashMap::new());
        assert_eq!(picker.selected_path().map(str::to_string), chosen);
        assert_eq!(stems(&picker)[..3], ["tar", "tar", "tar"]);
        // The selected note is gone: the selection stays on the same row.
        let row = picker.selected;
        let without: Vec<NoteEntry> = commands()
            .into_iter()
            .filter(|n| n.path != "tldr/pages/common/tart.md")
            .collect();
        picker.set_notes(std::sync::Arc::new(without), HashMap::new());
        assert_eq!(picker.selected, row);
        assert_ne!(picker.selected_path(), chosen.as_deref());
    }

    #[test]
    fn the_note_touched_last_wins_a_tie() {
        let mut notes = commands();
        for note in &mut notes {
            note.modified_ns = 10;
        }
        let table = std::sync::Arc::new({
            notes.sort_by(|a, b| a.path.cmp(&b.path));
            notes
        });
        let mut picker = Picker::new(table.clone(), HashMap::new());
        picker.set_query("tar");
        // Equal otherwise: the shorter path first.
        assert_eq!(picker.selected_path(), Some("tldr/pages/common/tar.md"));
        let opened = HashMap::from([("tldr-mirror/pages/common/tar.md".to_string(), 20)]);
        let mut picker = Picker::new(table, opened);
        picker.set_query("tar");
        assert_eq!(
            picker.matched_paths()[..2],
            [
                "tldr-mirror/pages/common/tar.md",
                "tldr/pages/common/tar.md"
            ]
        );
    }

    #[test]
    fn a_cut_path_keeps_its_first_folder_and_its_end() {
        let shown = |path: &str, room: usize| -> String {
            cut_path(path, room).into_iter().map(|(_, c)| c).collect()
        };
        let path = "tldr-mirror/pages.zh/linux/tar.md";
        assert_eq!(shown(path, 40), path);
        assert_eq!(shown(path, 24), "tldr-mirror/…inux/tar.md");
        assert_eq!(shown(path, 12), "…inux/tar.md");
        // The chars shown keep their place in the path (for the matched-char highlights).
        let cut = cut_path(path, 24);
        assert_eq!(cut[0], (Some(0), 't'));
        assert_eq!(cut[12], (None, '…'));
        assert_eq!(cut.last(), Some(&(Some(path.chars().count() - 1), 'd')));
        assert!(cut_path(path, 0).is_empty());
    }

    #[test]
    fn snapshot_equal_names_show_their_folders_80x24() {
        let mut picker = picker(commands());
        type_query(&mut picker, "tar");
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_namesakes_80x24", buffer_text(&buf));
    }

    #[test]
    fn snapshot_equal_names_show_their_folders_120x40() {
        let mut notes = commands();
        notes.push(item(
            "tldr-old/pages.zh/some/deeply/nested/folder/of/the/old/copy/tar.md",
            "",
            &[],
        ));
        let mut picker = picker(notes);
        type_query(&mut picker, "tar");
        let buf = rendered(&mut picker, 120, 40);
        insta::assert_snapshot!("picker_namesakes_120x40", buffer_text(&buf));
    }

    #[test]
    fn an_empty_query_lists_every_note_by_path() {
        let picker = picker(sample());
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
        let mut picker = picker(vec![
            item("notes/plan.md", "Budget", &[]),
            item("x/y.md", "Plan", &[]),
        ]);
        type_query(&mut picker, "plan");
        assert_eq!(picker.matched_paths(), vec!["x/y.md", "notes/plan.md"]);
    }

    #[test]
    fn aliases_find_notes() {
        let mut picker = picker(sample());
        type_query(&mut picker, "books");
        assert_eq!(picker.matched_paths(), vec!["Notes/Reading list.md"]);
        picker.set_query("diary");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
    }

    #[test]
    fn cjk_titles_and_paths_match() {
        let mut picker = picker(sample());
        type_query(&mut picker, "日記");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
        picker.set_query("今日");
        assert_eq!(picker.matched_paths(), vec!["日記/今日.md"]);
    }

    #[test]
    fn untitled_notes_match_by_file_name() {
        let mut picker = picker(sample());
        type_query(&mut picker, "2024-05");
        assert_eq!(picker.matched_paths(), vec!["Daily/2024-05-01.md"]);
    }

    #[test]
    fn words_may_come_from_different_fields() {
        let mut picker = picker(sample());
        type_query(&mut picker, "projects editor");
        assert_eq!(picker.matched_paths(), vec!["Projects/Editor.md"]);
    }

    #[test]
    fn typing_and_deleting_edit_the_query() {
        let mut picker = picker(sample());
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
        let mut narrowed = picker(sample());
        type_query(&mut narrowed, "pl");
        type_query(&mut narrowed, "a");
        let mut fresh = picker(sample());
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
        let mut picker = picker(sample());
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
        let items: Vec<NoteEntry> = (0..10_000)
            .map(|n| {
                item(
                    &format!("Folder {}/Sub {}/Note number {n}.md", n % 37, n % 11),
                    &format!("Note about topic {n}"),
                    &[],
                )
            })
            .collect();
        let mut picker = picker(items);
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
        let mut picker = picker(sample());
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
        let mut picker = picker(items);
        type_query(&mut picker, "wee");
        picker.handle(Some(Action::Down), &key(KeyCode::Down));
        let buf = rendered(&mut picker, 120, 40);
        insta::assert_snapshot!("picker_query_120x40", buffer_text(&buf));
    }

    #[test]
    fn snapshot_picker_empty_query_and_no_match_80x24() {
        let mut picker = picker(sample());
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_all_80x24", buffer_text(&buf));
        type_query(&mut picker, "nothing like this");
        let buf = rendered(&mut picker, 80, 24);
        insta::assert_snapshot!("picker_no_match_80x24", buffer_text(&buf));
    }

    fn templates() -> Vec<NoteEntry> {
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
        let mut picker = picker(vec![
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
        let mut picker = picker(sample());
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
        let mut picker = picker(vec![item(
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
        let mut picker = picker(sample());
        type_query(&mut picker, "日");
        for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 3), (10, 4), (20, 6), (300, 100)] {
            let _ = rendered(&mut picker, w, h);
            picker.handle(Some(Action::PageDown), &key(KeyCode::PageDown));
        }
        let mut empty = super::tests::picker(Vec::new());
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
