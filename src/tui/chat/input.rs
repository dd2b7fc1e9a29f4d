//! The chat input: a multi-line box (ratatui-textarea) with a history of sent messages, and the
//! images attached to the message being written, shown as chips above the text.

use super::chips;
use super::wrap::{self, Breaks};
use crate::attach::Image;
use crate::tui::keymap::Action;
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

/// The fewest rows the box takes (one line of text and the border).
const MIN_HEIGHT: u16 = 3;
/// The most rows the box takes; longer messages scroll inside it.
const MAX_HEIGHT: u16 = 10;
/// The most rows of image chips; more images are counted in a `+N more`.
const MAX_CHIP_ROWS: usize = 3;
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
    /// Images attached to the message being written, in the order they were pasted.
    images: Vec<Image>,
    /// Shown in the bottom border while images wait and the text is empty (how to remove one).
    image_hint: String,
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
            images: Vec::new(),
            image_hint: String::new(),
        }
    }

    /// Attach an image to the message being written.
    pub fn attach_image(&mut self, image: Image) {
        self.images.push(image);
    }

    /// The images attached to the message being written.
    pub fn images(&self) -> &[Image] {
        &self.images
    }

    /// Remove the most recently attached image.
    pub fn remove_last_image(&mut self) -> Option<Image> {
        self.images.pop()
    }

    /// The attached images, leaving none (the message was sent).
    pub fn take_images(&mut self) -> Vec<Image> {
        std::mem::take(&mut self.images)
    }

    /// The hint in the bottom border while images wait and nothing is typed (the App names the
    /// key of the active key map: "backspace removes the last image").
    pub fn set_image_hint(&mut self, hint: impl Into<String>) {
        self.image_hint = hint.into();
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

    /// True when anything at all is typed (a space too): Backspace then edits the text.
    pub fn has_text(&self) -> bool {
        !self.textarea.is_empty()
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

    /// The cursor as (line, column), both 0-based, the column in chars.
    pub fn cursor_line_col(&self) -> (usize, usize) {
        let ratatui_textarea::DataCursor(row, col) = self.textarea.cursor();
        (row, col)
    }

    /// The text of line `row` (empty past the end).
    pub fn line(&self, row: usize) -> String {
        self.textarea.lines().get(row).cloned().unwrap_or_default()
    }

    /// Delete the `count` characters after the cursor (the rest of a name being completed).
    pub fn delete_after_cursor(&mut self, count: usize) {
        self.textarea.cancel_selection();
        for _ in 0..count {
            self.textarea.delete_next_char();
        }
    }

    /// Replace the `typed` characters before the cursor with `text` (a `[[` completion); when
    /// `text` ends with `]]` and `]]` already follows the cursor, the cursor steps over them.
    pub fn replace_before_cursor(&mut self, typed: usize, text: &str) {
        let (row, col) = self.cursor_line_col();
        let rest: String = self.line(row).chars().skip(col).take(2).collect();
        let (text, step_over) = match text.strip_suffix("]]") {
            Some(inner) if rest == "]]" => (inner, 2),
            _ => (text, 0),
        };
        self.textarea.cancel_selection();
        for _ in 0..typed {
            self.textarea.delete_char();
        }
        self.textarea.insert_str(text);
        for _ in 0..step_over {
            self.textarea.move_cursor(CursorMove::Forward);
        }
        self.browsing = None;
    }

    /// Rows the box wants at `width`: its lines as wrapped (at most 8 rows), the rows of image
    /// chips (at most 3), and the border; at least 3.
    pub fn height(&self, width: u16) -> u16 {
        let room = usize::from(width.saturating_sub(2 + TEXT_LEFT + TEXT_RIGHT)).max(1);
        let chip_rows = u16::try_from(self.chip_row_count(room)).unwrap_or(0);
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|line| {
                wrap::wrap(&[Span::raw(line.as_str())], room, &[], &[], Breaks::Words).len()
            })
            .sum();
        let rows = u16::try_from(rows).unwrap_or(u16::MAX);
        rows.saturating_add(2)
            .clamp(MIN_HEIGHT, MAX_HEIGHT)
            .saturating_add(chip_rows)
    }

    fn facts(&self) -> Vec<crate::attach::ImageFacts> {
        self.images.iter().map(Image::facts).collect()
    }

    fn chip_row_count(&self, room: usize) -> usize {
        if self.images.is_empty() {
            return 0;
        }
        chips::row_count(&self.facts(), room, MAX_CHIP_ROWS)
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
        let mut block = theme.pane_block(TITLE, focused);
        let hint = format!(" {} ", self.image_hint);
        if !self.images.is_empty()
            && !self.image_hint.is_empty()
            && self.textarea.is_empty()
            && wrap::text_width(&hint) + 4 <= usize::from(area.width)
        {
            block = block.title_bottom(
                Line::from(Span::styled(hint, theme.style(Role::Dim))).right_aligned(),
            );
        }
        let inner = block.inner(area);
        buf.set_style(area, theme.style(Role::Input));
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let columns = if inner.width > TEXT_LEFT + TEXT_RIGHT {
            Rect {
                x: inner.x + TEXT_LEFT,
                width: inner.width - TEXT_LEFT - TEXT_RIGHT,
                ..inner
            }
        } else {
            inner
        };
        // Chips first, in the text's column; the text keeps at least one row.
        let chip_rows = self
            .chip_row_count(usize::from(columns.width))
            .min(usize::from(inner.height.saturating_sub(1)));
        if chip_rows > 0 {
            let lines =
                chips::chip_rows(&self.facts(), usize::from(columns.width), chip_rows, theme);
            for (line, y) in lines.iter().zip(columns.y..) {
                buf.set_line(columns.x, y, line, columns.width);
            }
        }
        let chip_rows = u16::try_from(chip_rows).unwrap_or(0);
        let text_area = Rect {
            y: columns.y + chip_rows,
            height: columns.height - chip_rows,
            ..columns
        };
        if inner.width > TEXT_LEFT + TEXT_RIGHT {
            let prompt_role = if focused { Role::User } else { Role::Dim };
            buf.set_string(inner.x + 1, text_area.y, PROMPT, theme.style(prompt_role));
        }

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

    /// An attached image as the chips see it (the pixels do not matter here).
    fn image(width: u32, height: u32) -> Image {
        Image {
            media_type: "image/png",
            data: "iVBORw0KGgo=".into(),
            dimensions: Some((width, height)),
            size: (width * height) as usize,
        }
    }

    #[test]
    fn images_attach_remove_and_are_taken_apart_from_the_text() {
        let mut input = ChatInput::new();
        input.attach_image(image(4, 3));
        input.attach_image(image(2, 2));
        assert_eq!(input.images().len(), 2);
        assert_eq!(
            input.remove_last_image().and_then(|i| i.dimensions),
            Some((2, 2))
        );
        typed(&mut input, "what is this?");
        assert_eq!(input.take(), "what is this?");
        assert_eq!(input.images().len(), 1, "taking the text leaves the images");
        let taken = input.take_images();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].dimensions, Some((4, 3)));
        assert!(input.images().is_empty());
        assert_eq!(input.remove_last_image(), None);
    }

    #[test]
    fn has_text_counts_even_a_space() {
        let mut input = ChatInput::new();
        assert!(!input.has_text());
        typed(&mut input, " ");
        assert!(input.has_text());
        assert!(input.is_empty(), "but the message is still blank");
    }

    #[test]
    fn chips_add_rows_above_the_text() {
        let mut input = ChatInput::new();
        assert_eq!(input.height(80), 3);
        input.attach_image(image(8, 6));
        assert_eq!(input.height(80), 4, "one row of chips");
        for _ in 0..9 {
            input.attach_image(image(8, 6));
        }
        // 74 columns for chips of ~28: two a row, five rows wanted, three shown.
        assert_eq!(input.height(80), 6);
        input.insert_str(&"line\n".repeat(30));
        assert_eq!(
            input.height(80),
            13,
            "eight rows of text, three of chips, the border"
        );
    }

    fn rendered(input: &mut ChatInput, width: u16, focused: bool) -> Buffer {
        let height = input.height(width);
        let mut buf = buffer(width, height);
        input.render(
            Rect::new(0, 0, width, height),
            &mut buf,
            &Theme::builtin_dark(),
            focused,
            "Ask about your notes (Enter sends, /help for commands)",
        );
        buf
    }

    #[test]
    fn one_image_shows_as_a_chip_with_the_hint_to_remove_it() {
        let theme = Theme::builtin_dark();
        let mut input = ChatInput::new();
        input.set_image_hint("backspace removes the last image");
        input.attach_image(image(800, 600));
        for width in [80u16, 120] {
            let buf = rendered(&mut input, width, true);
            insta::assert_snapshot!(format!("chat_input_one_image_{width}"), buffer_text(&buf));
        }
        let buf = rendered(&mut input, 80, true);
        assert!(super::super::drawn_as(
            style_at(&buf, "[image 1"),
            theme.style(Role::Attachment)
        ));
        assert!(buffer_text(&buf).contains("backspace removes the last image"));
        // With text typed, Backspace edits the text: the hint goes.
        input.insert_str("What is this?");
        let buf = rendered(&mut input, 80, true);
        assert!(!buffer_text(&buf).contains("backspace removes"));
    }

    #[test]
    fn two_images_and_a_message() {
        let mut input = ChatInput::new();
        input.set_image_hint("backspace removes the last image");
        input.attach_image(image(800, 600));
        input.attach_image(image(1568, 882));
        input.insert_str("Which of these two layouts reads better on a phone?");
        for width in [80u16, 120] {
            let buf = rendered(&mut input, width, true);
            insta::assert_snapshot!(format!("chat_input_two_images_{width}"), buffer_text(&buf));
        }
        // Narrow: the chips wrap onto their own rows, the text keeps its row.
        let buf = rendered(&mut input, 40, false);
        let text = buffer_text(&buf);
        assert!(text.contains("[image 2"), "{text}");
        assert!(text.contains("› Which"), "{text}");
    }

    #[test]
    fn renders_at_any_size_without_panicking() {
        let theme = Theme::builtin_dark();
        let mut input = ChatInput::new();
        input.insert_str("some text\nmore");
        for with_images in [false, true] {
            if with_images {
                input.attach_image(image(3, 3));
                input.attach_image(image(3, 3));
                input.set_image_hint("backspace removes the last image");
            }
            for (w, h) in [(0, 0), (1, 1), (2, 2), (3, 3), (5, 3), (6, 4), (300, 100)] {
                let mut buf = buffer(w, h);
                input.render(Rect::new(0, 0, w, h), &mut buf, &theme, true, "Ask");
            }
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
