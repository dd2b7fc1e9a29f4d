//! The chat input: a multi-line box (ratatui-textarea) with a history of sent messages.

use super::wrap::{self, Breaks};
use crate::tui::keymap::Action;
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

/// The fewest rows the box takes (one line of text and the border).
const MIN_HEIGHT: u16 = 3;
/// The most rows the box takes; longer messages scroll inside it.
const MAX_HEIGHT: u16 = 10;
/// Sent messages kept for the history keys.
const HISTORY_LIMIT: usize = 500;
/// The prompt before the text.
const PROMPT: &str = "›";
/// Columns around the text inside the border: a space, the prompt, a space before; a space after.
const TEXT_LEFT: u16 = 3;
const TEXT_RIGHT: u16 = 1;
const TITLE: &str = " Message ";

/// The chat's input box.
pub struct ChatInput {
    textarea: TextArea<'static>,
    history: Vec<String>,
    /// The history entry shown, while browsing it.
    browsing: Option<usize>,
    /// What was typed before browsing began, restored when browsing past the newest entry.
    draft: String,
    placeholder: String,
}

impl Default for ChatInput {
    fn default() -> Self {
        Self::new()
    }
}

fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut textarea = TextArea::new(lines);
    textarea.set_wrap_mode(WrapMode::WordOrGlyph);
    // The box is the current line; underlining it would only add noise.
    textarea.set_cursor_line_style(Style::new());
    textarea
}

impl ChatInput {
    /// An empty box with an empty history.
    pub fn new() -> Self {
        ChatInput {
            textarea: new_textarea(vec![String::new()]),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
            placeholder: String::new(),
        }
    }

    /// A key without an action in the chat context: typing and editing go to the box.
    pub fn handle_key(&mut self, key: &KeyEvent) {
        if self.textarea.input(*key) {
            // Editing a recalled message makes it the message being written.
            self.browsing = None;
        }
    }

    /// The input box's actions (`Newline`, `HistoryPrev`, `HistoryNext`); true if handled.
    pub fn handle(&mut self, action: Action) -> bool {
        match action {
            Action::Newline => {
                self.textarea.insert_newline();
                self.browsing = None;
            }
            Action::HistoryPrev => self.history_prev(),
            Action::HistoryNext => self.history_next(),
            _ => return false,
        }
        true
    }

    fn history_prev(&mut self) {
        let index = match self.browsing {
            Some(0) => return,
            Some(i) => i - 1,
            None => {
                let Some(last) = self.history.len().checked_sub(1) else {
                    return;
                };
                self.draft = self.text();
                last
            }
        };
        self.browsing = Some(index);
        if let Some(text) = self.history.get(index).cloned() {
            self.set_text(&text);
        }
    }

    fn history_next(&mut self) {
        let Some(index) = self.browsing else {
            return;
        };
        if index + 1 < self.history.len() {
            self.browsing = Some(index + 1);
            if let Some(text) = self.history.get(index + 1).cloned() {
                self.set_text(&text);
            }
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
        }
    }

    /// The text (end trimmed); clears the box and records the text in the history (not when it
    /// is empty or the same as the newest entry).
    pub fn take(&mut self) -> String {
        let text = self.text().trim_end().to_string();
        self.set_text("");
        self.browsing = None;
        self.draft.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY_LIMIT {
                self.history.remove(0);
            }
        }
        text
    }

    /// The text in the box, lines joined with `\n`.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// True when the box holds nothing but whitespace.
    pub fn is_empty(&self) -> bool {
        self.textarea.lines().iter().all(|l| l.trim().is_empty())
    }

    /// Replace the text; the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        let lines = text.split('\n').map(str::to_string).collect();
        self.textarea = new_textarea(lines);
        self.textarea.move_cursor(CursorMove::Bottom);
        self.textarea.move_cursor(CursorMove::End);
    }

    /// Insert text at the cursor (a paste); `\r\n` and `\r` become line breaks.
    pub fn insert_str(&mut self, s: &str) {
        let text = s.replace("\r\n", "\n").replace('\r', "\n");
        if self.textarea.insert_str(text) {
            self.browsing = None;
        }
    }

    /// Rows the box wants at `width`: its lines as wrapped, plus the border, between 3 and 10.
    pub fn height(&self, width: u16) -> u16 {
        let room = usize::from(width.saturating_sub(2 + TEXT_LEFT + TEXT_RIGHT)).max(1);
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|line| {
                wrap::wrap(&[Span::raw(line.as_str())], room, &[], &[], Breaks::Words).len()
            })
            .sum();
        let rows = u16::try_from(rows).unwrap_or(u16::MAX);
        rows.saturating_add(2).clamp(MIN_HEIGHT, MAX_HEIGHT)
    }

    /// Draw the box; `placeholder` shows while it is empty.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        placeholder: &str,
    ) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let (border, title) = if focused {
            (Role::BorderFocused, Role::TitleFocused)
        } else {
            (Role::Border, Role::Title)
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(border))
            .title(Span::styled(TITLE, theme.style(title)));
        let inner = block.inner(area);
        buf.set_style(area, theme.style(Role::Input));
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let text_area = if inner.width > TEXT_LEFT + TEXT_RIGHT {
            let prompt_role = if focused { Role::User } else { Role::Dim };
            buf.set_string(inner.x + 1, inner.y, PROMPT, theme.style(prompt_role));
            Rect {
                x: inner.x + TEXT_LEFT,
                width: inner.width - TEXT_LEFT - TEXT_RIGHT,
                ..inner
            }
        } else {
            inner
        };

        if self.placeholder != placeholder {
            self.placeholder = placeholder.to_string();
            self.textarea.set_placeholder_text(placeholder);
        }
        self.textarea.set_style(theme.style(Role::Input));
        self.textarea
            .set_placeholder_style(theme.style(Role::Placeholder));
        self.textarea
            .set_selection_style(theme.style(Role::Selection));
        // Without focus the cursor is not drawn: only one place on screen takes typing.
        let cursor = if focused {
            theme
                .style(Role::Input)
                .add_modifier(ratatui::style::Modifier::REVERSED)
        } else {
            theme.style(Role::Input)
        };
        self.textarea.set_cursor_style(cursor);
        (&self.textarea).render(text_area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(input: &mut ChatInput, text: &str) {
        for c in text.chars() {
            input.handle_key(&key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn typing_newlines_and_take() {
        let mut input = ChatInput::new();
        assert!(input.is_empty());
        typed(&mut input, "hello");
        assert!(input.handle(Action::Newline));
        typed(&mut input, "world  ");
        assert_eq!(input.text(), "hello\nworld  ");
        assert!(!input.is_empty());
        assert_eq!(input.take(), "hello\nworld");
        assert!(input.is_empty());
        assert_eq!(input.text(), "");
        assert!(!input.handle(Action::Send), "sending is the App's business");
    }

    #[test]
    fn history_walks_back_and_forward_and_restores_the_draft() {
        let mut input = ChatInput::new();
        for message in ["first", "second", "second", "", "   "] {
            input.insert_str(message);
            input.take();
        }
        assert_eq!(input.history, ["first", "second"], "no empties, no repeats");
        typed(&mut input, "draft");
        input.handle(Action::HistoryPrev);
        assert_eq!(input.text(), "second");
        input.handle(Action::HistoryPrev);
        assert_eq!(input.text(), "first");
        input.handle(Action::HistoryPrev);
        assert_eq!(input.text(), "first", "stops at the oldest");
        input.handle(Action::HistoryNext);
        assert_eq!(input.text(), "second");
        input.handle(Action::HistoryNext);
        assert_eq!(input.text(), "draft");
        input.handle(Action::HistoryNext);
        assert_eq!(input.text(), "draft");
    }

    #[test]
    fn recalled_text_can_be_edited_and_the_cursor_sits_at_its_end() {
        let mut input = ChatInput::new();
        input.insert_str("old message");
        input.take();
        input.handle(Action::HistoryPrev);
        typed(&mut input, "!");
        assert_eq!(input.text(), "old message!");
        // Editing ended the browsing: the next history key starts from the newest entry again.
        input.handle(Action::HistoryNext);
        assert_eq!(input.text(), "old message!");
    }

    #[test]
    fn paste_keeps_line_breaks_of_every_kind() {
        let mut input = ChatInput::new();
        input.insert_str("a\r\nb\rc\nd");
        assert_eq!(input.text(), "a\nb\nc\nd");
    }

    #[test]
    fn height_grows_with_the_text_between_three_and_ten() {
        let mut input = ChatInput::new();
        assert_eq!(input.height(40), 3);
        input.insert_str("one\ntwo\nthree");
        assert_eq!(input.height(40), 5);
        // 40 columns leave 34 for text: 100 characters without spaces take three rows.
        input.set_text(&"x".repeat(100));
        assert_eq!(input.height(40), 5);
        input.set_text(&"line\n".repeat(30));
        assert_eq!(input.height(40), 10);
        assert_eq!(input.height(0), 10);
    }

    #[test]
    fn renders_at_any_size_without_panicking() {
        let theme = Theme::builtin_dark();
        let mut input = ChatInput::new();
        input.insert_str("some text\nmore");
        for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 3), (5, 3), (300, 100)] {
            let mut buf = buffer(w, h);
            input.render(Rect::new(0, 0, w, h), &mut buf, &theme, true, "Ask");
        }
        // An area outside the buffer is clipped, not a panic.
        let mut buf = buffer(10, 3);
        input.render(Rect::new(5, 1, 40, 9), &mut buf, &theme, true, "Ask");
    }

    #[test]
    fn placeholder_shows_while_empty_in_its_role() {
        let theme = Theme::builtin_dark();
        let mut input = ChatInput::new();
        let mut buf = buffer(80, 3);
        input.render(
            Rect::new(0, 0, 80, 3),
            &mut buf,
            &theme,
            true,
            "Ask about your notes",
        );
        insta::assert_snapshot!("chat_input_placeholder_80", buffer_text(&buf));
        assert_eq!(
            style_at(&buf, "Ask about").map(|s| s.fg),
            Some(theme.style(Role::Placeholder).fg)
        );
        assert!(super::super::drawn_as(
            style_at(&buf, "›"),
            theme.style(Role::User)
        ));
    }

    #[test]
    fn multi_line_text_renders_in_a_taller_box() {
        let theme = Theme::builtin_dark();
        let mut input = ChatInput::new();
        input.insert_str(
            "Summarise [[Projects/Plan]] in three bullets,\nthen list the open questions\nand tag them #review.",
        );
        for (width, name) in [
            (80u16, "chat_input_multiline_80"),
            (120, "chat_input_multiline_120"),
        ] {
            let height = input.height(width);
            assert_eq!(height, 5);
            let mut buf = buffer(width, height);
            input.render(
                Rect::new(0, 0, width, height),
                &mut buf,
                &theme,
                true,
                "Ask",
            );
            insta::assert_snapshot!(name, buffer_text(&buf));
        }
        let mut unfocused = buffer(80, 5);
        input.render(Rect::new(0, 0, 80, 5), &mut unfocused, &theme, false, "Ask");
        assert_eq!(
            style_at(&unfocused, "╭").map(|s| s.fg),
            Some(theme.style(Role::Border).fg)
        );
    }
}
