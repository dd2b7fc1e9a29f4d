//! Markdown for the terminal: the agent's replies laid out as styled lines of a given width
//! (pulldown-cmark events → lines). Headings, emphasis, inline code, fenced code highlighted in a
//! shaded block, lists with markers, block quotes and callouts, links, `[[wikilinks]]`, `#tags`,
//! tables and rules.
//!
//! Streaming support: [`stable_prefix_len`] finds where a growing reply can be cut into a settled
//! head (laid out once) and a tail (laid out again on each delta), so a delta costs only its tail.

use super::wrap::{self, Breaks};
use crate::tui::highlight::{Reuse, highlight_with};
use crate::tui::theme::{Role, Theme};
use pulldown_cmark::{
    Alignment, BlockQuoteKind, CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag,
    TagEnd,
};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Bullets of unordered lists, by nesting depth.
const BULLETS: [&str; 3] = ["•", "◦", "▪"];
/// The bar before every line of a block quote.
const QUOTE_BAR: &str = "▌ ";
/// Between table columns.
const COLUMN_SEPARATOR: &str = " │ ";
/// The narrowest a table column is squeezed to before the table is left to be cut at the edge.
const MIN_COLUMN: usize = 3;

/// `text` as lines at most `width` cells wide (a line may run over only where a single glyph is
/// wider than the room left, or a table cannot be squeezed further).
pub fn render_markdown(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    render_markdown_with(text, width, theme, true)
}

/// [`render_markdown`], reusing highlighted code from earlier calls when `reuse` (the picture is
/// the same either way; the benchmark's uncached baseline passes false).
pub(crate) fn render_markdown_with(
    text: &str,
    width: usize,
    theme: &Theme,
    reuse: bool,
) -> Vec<Line<'static>> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_GFM;
    let mut renderer = Renderer::new(width.max(1), theme, reuse);
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) = &event {
            renderer.fence_closed = text.get(range).is_some_and(fence_is_closed);
        }
        renderer.event(event);
    }
    renderer.finish()
}

/// The largest byte offset `>= from` (and `<= text.len()`) at which `text` can be cut into two
/// Markdown documents that render, one after the other with a blank line between, as the whole
/// does. The cut is the start of a line that follows a blank line outside a code fence and that
/// cannot continue an earlier block (it is not indented and starts no quote or list item).
/// `from` must itself be such a cut (or 0). Scans only `text[from..]`.
pub fn stable_prefix_len(text: &str, from: usize) -> usize {
    let mut boundary = from.min(text.len());
    let Some(rest) = text.get(boundary..) else {
        return boundary;
    };
    let mut position = boundary;
    let mut fence: Option<(char, usize)> = None;
    let mut after_blank = false;
    // Since the last cut, a list item or quote began: an indented line may continue it.
    let mut in_list = false;
    for line in rest.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let blank = content.trim().is_empty();
        if !line.ends_with('\n') {
            // An unfinished last line can already be a cut: what decides is how it starts.
            if fence.is_none() && after_blank && !blank && starts_fresh_block(content, in_list) {
                boundary = position;
            }
            break;
        }
        match fence {
            Some((marker, length)) => {
                if closes_fence(content, marker, length) {
                    fence = None;
                }
            }
            None => {
                if after_blank && !blank && starts_fresh_block(content, in_list) {
                    boundary = position;
                    in_list = false;
                }
                if starts_list_or_quote(content) {
                    in_list = true;
                }
                fence = opens_fence(content);
            }
        }
        after_blank = blank && fence.is_none();
        position += line.len();
    }
    boundary
}

/// A line that starts a block of its own after a blank line, whatever came before: indented by
/// at most three spaces (and not at all while a list item or quote may continue), and starting
/// no quote, list item or HTML (digits are left out too, for ordered lists).
fn starts_fresh_block(line: &str, in_list: bool) -> bool {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    if indent > 3 || (indent > 0 && in_list) {
        return false;
    }
    match body.chars().next() {
        None => false,
        Some(c) => {
            !(c.is_whitespace() || c.is_ascii_digit() || matches!(c, '>' | '-' | '*' | '+' | '<'))
        }
    }
}

/// A line that begins a list item or a block quote.
fn starts_list_or_quote(line: &str) -> bool {
    let body = line.trim_start();
    let mut chars = body.chars();
    match chars.next() {
        Some('>') => true,
        Some('-' | '*' | '+') => chars.next().is_none_or(char::is_whitespace),
        Some(c) if c.is_ascii_digit() => {
            let after = body.trim_start_matches(|c: char| c.is_ascii_digit());
            let mut rest = after.chars();
            matches!(rest.next(), Some('.' | ')')) && rest.next().is_none_or(char::is_whitespace)
        }
        _ => false,
    }
}

/// Whether a fenced code block's source (fences included) has its closing fence: a block still
/// streaming in has not, and its highlighting resumes where the shorter version stopped.
fn fence_is_closed(block: &str) -> bool {
    let block = block.trim_end_matches(['\n', '\r']);
    let mut lines = block.split('\n');
    let (Some(first), Some(last)) = (lines.next(), lines.next_back()) else {
        return false;
    };
    opens_fence(first).is_some_and(|(marker, length)| closes_fence(last, marker, length))
}

/// The fence character and length when `line` opens a fenced code block.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let body = &line[indent..];
    let marker = body.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = body.chars().take_while(|c| *c == marker).count();
    // A backtick fence's info string may not contain backticks (that is inline code).
    if length < 3 || (marker == '`' && body[length..].contains('`')) {
        return None;
    }
    Some((marker, length))
}

fn closes_fence(line: &str, marker: char, length: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let body = line[indent..].trim_end();
    body.chars().count() >= length && body.chars().all(|c| c == marker)
}

/// A block that contains other blocks, innermost last.
enum Container {
    Quote,
    List {
        next_number: Option<u64>,
    },
    Item {
        marker: Vec<Span<'static>>,
        width: usize,
        /// The marker is drawn on the item's first row only.
        marker_drawn: bool,
    },
}

struct Link {
    destination: String,
    wiki: bool,
    /// Autolinks and e-mail links show their address as their text already.
    shows_address: bool,
    text: String,
}

struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct CodeBlock {
    language: String,
    text: String,
    /// The closing fence has arrived (indented blocks are always complete).
    closed: bool,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    /// The current block's inline content: logical lines (hard breaks start a new one).
    inline: Vec<Vec<Span<'static>>>,
    /// The style of the current block's text (paragraph, heading, quote).
    block_styles: Vec<Style>,
    /// Emphasis, strong, links… inside the block, innermost last.
    inline_styles: Vec<Style>,
    containers: Vec<Container>,
    /// A blank line goes before the next block's first row; it carries the prefix of this many
    /// containers (those the finished block and the next one share, such as a quote around both).
    blank_pending: Option<usize>,
    code: Option<CodeBlock>,
    /// Whether the fenced block starting now has its closing fence (set before its event).
    fence_closed: bool,
    /// Reuse highlighted code from earlier calls.
    reuse: bool,
    link: Option<Link>,
    table: Option<Table>,
    /// The last character of the inline content so far (a `#tag` must start a word).
    last_char: Option<char>,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme, reuse: bool) -> Self {
        Renderer {
            theme,
            width,
            out: Vec::new(),
            inline: Vec::new(),
            block_styles: vec![theme.style(Role::Assistant)],
            inline_styles: Vec::new(),
            containers: Vec::new(),
            blank_pending: None,
            code: None,
            fence_closed: false,
            reuse,
            link: None,
            table: None,
            last_char: None,
        }
    }

    fn role(&self, role: Role) -> Style {
        self.theme.style(role)
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush();
        if let Some(code) = self.code.take() {
            self.code_block(code);
        }
        self.out
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(text) => code.text.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(code) = self.code.take() {
                        self.code_block(code);
                    }
                    self.blank_after_block();
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(text) | Event::InlineMath(text) | Event::DisplayMath(text) => {
                let style = self.current_style().patch(self.role(Role::MdCode));
                self.push_span(text.to_string(), style)
            }
            Event::Html(html) => {
                for (i, piece) in html.split('\n').enumerate() {
                    if i > 0 {
                        self.inline.push(Vec::new());
                    }
                    if !piece.is_empty() {
                        self.push_span(piece.to_string(), self.role(Role::Dim));
                    }
                }
            }
            Event::InlineHtml(html) => self.push_span(html.to_string(), self.role(Role::Dim)),
            Event::FootnoteReference(label) => {
                self.push_span(format!("[^{label}]"), self.role(Role::Dim))
            }
            Event::SoftBreak => self.push_span(" ".to_string(), self.current_style()),
            Event::HardBreak => {
                if self.table.is_none() {
                    self.inline.push(Vec::new());
                }
            }
            Event::Rule => {
                self.flush();
                let room = self.room(true);
                let prefix = self.prefix(true);
                let rule = Span::styled("─".repeat(room), self.role(Role::Border));
                let mut spans = prefix;
                spans.push(rule);
                self.emit(Line::from(spans));
                self.blank_after_block();
            }
            Event::TaskListMarker(done) => {
                let style = self.role(Role::MdListMarker);
                let check = Span::styled(if done { "☑ " } else { "☐ " }, style);
                // The box joins the item's marker, so wrapped lines align with the text.
                match self.containers.last_mut() {
                    Some(Container::Item {
                        marker,
                        width,
                        marker_drawn: false,
                    }) if self.inline.iter().all(Vec::is_empty) => {
                        *width += wrap::text_width(&check.content);
                        marker.push(check);
                    }
                    _ => self.push_span(check.content.to_string(), style),
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.flush();
                let mut style = self.current_style().patch(self.role(Role::MdHeading));
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.block_styles.push(style);
            }
            Tag::BlockQuote(kind) => self.start_quote(kind),
            Tag::CodeBlock(kind) => {
                self.flush();
                let (language, closed) = match kind {
                    CodeBlockKind::Fenced(info) => (info.to_string(), self.fence_closed),
                    CodeBlockKind::Indented => (String::new(), true),
                };
                self.code = Some(CodeBlock {
                    language,
                    text: String::new(),
                    closed,
                });
            }
            Tag::HtmlBlock => self.flush(),
            Tag::List(first) => {
                self.flush();
                self.containers.push(Container::List { next_number: first });
            }
            Tag::Item => self.start_item(),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush(),
            Tag::Table(alignments) => {
                self.flush();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(Vec::new());
                }
            }
            Tag::Emphasis => self.inline_styles.push(self.role(Role::MdEmphasis)),
            Tag::Strong => self.inline_styles.push(self.role(Role::MdStrong)),
            Tag::Strikethrough => self
                .inline_styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.inline_styles.push(Style::new()),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.start_link(link_type, &dest_url, ""),
            Tag::Image {
                link_type,
                dest_url,
                ..
            } => {
                let opening = if matches!(link_type, LinkType::WikiLink { .. }) {
                    "!"
                } else {
                    "image: "
                };
                self.start_link(link_type, &dest_url, opening)
            }
        }
    }

    /// A block quote; a GitHub alert (`> [!NOTE]`) starts with its kind in bold.
    fn start_quote(&mut self, kind: Option<BlockQuoteKind>) {
        self.flush();
        self.containers.push(Container::Quote);
        self.block_styles
            .push(self.current_style().patch(self.role(Role::MdQuote)));
        if let Some(kind) = kind {
            let label = match kind {
                BlockQuoteKind::Note => "Note",
                BlockQuoteKind::Tip => "Tip",
                BlockQuoteKind::Important => "Important",
                BlockQuoteKind::Warning => "Warning",
                BlockQuoteKind::Caution => "Caution",
            };
            let style = self
                .role(Role::MdQuote)
                .patch(self.role(Role::MdStrong))
                .remove_modifier(Modifier::ITALIC);
            self.push_span(label.to_string(), style);
            self.flush();
        }
    }

    /// A list item: its marker (a number or the bullet of its depth) waits for its first line.
    fn start_item(&mut self) {
        self.flush();
        let depth = self
            .containers
            .iter()
            .filter(|c| matches!(c, Container::List { .. }))
            .count();
        let marker_text = match self.containers.last_mut() {
            Some(Container::List {
                next_number: Some(n),
            }) => {
                let text = format!("{n}. ");
                *n += 1;
                text
            }
            _ => format!("{} ", BULLETS[depth.saturating_sub(1) % BULLETS.len()]),
        };
        let width = wrap::text_width(&marker_text);
        self.containers.push(Container::Item {
            marker: vec![Span::styled(marker_text, self.role(Role::MdListMarker))],
            width,
            marker_drawn: false,
        });
    }

    fn start_link(&mut self, kind: LinkType, destination: &str, opening: &str) {
        let link = self.role(Role::MdLink);
        let style = self.current_style().patch(link);
        let wiki = matches!(kind, LinkType::WikiLink { .. });
        if wiki {
            self.push_span(format!("{opening}[["), style);
        } else if !opening.is_empty() {
            self.push_span(format!("[{opening}"), self.role(Role::Dim));
        }
        self.inline_styles.push(link);
        self.link = Some(Link {
            destination: destination.to_string(),
            wiki,
            shows_address: matches!(kind, LinkType::Autolink | LinkType::Email),
            text: String::new(),
        });
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.blank_after_block();
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.block_styles.pop();
                self.blank_after_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.block_styles.pop();
                self.blank_after_block();
            }
            TagEnd::CodeBlock => {}
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                // Inside a tight item the next item follows directly; at the top a blank line
                // separates the list from what comes next.
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }))
                {
                    self.blank_after_block();
                }
            }
            TagEnd::Item => {
                self.flush();
                // An empty item still shows its marker.
                if let Some(Container::Item {
                    marker_drawn: false,
                    ..
                }) = self.containers.last()
                {
                    let prefix = self.prefix(true);
                    self.emit(Line::from(prefix));
                }
                self.containers.pop();
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush();
                self.blank_after_block();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_block(table);
                }
                self.blank_after_block();
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::TableRow | TagEnd::TableCell => {}
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.inline_styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.inline_styles.pop();
                if let Some(link) = self.link.take() {
                    let image = matches!(tag, TagEnd::Image);
                    if link.wiki {
                        let style = self.current_style().patch(self.role(Role::MdLink));
                        self.push_span("]]".to_string(), style);
                    } else if image {
                        self.push_span("]".to_string(), self.role(Role::Dim));
                    } else {
                        let address = link
                            .destination
                            .strip_prefix("mailto:")
                            .unwrap_or(&link.destination);
                        if !link.shows_address && !address.is_empty() && address != link.text {
                            self.push_span(format!(" ({address})"), self.role(Role::Dim));
                        }
                    }
                }
            }
        }
    }

    /// The style of text at this point: the block's, patched by every inline style.
    fn current_style(&self) -> Style {
        let base = self.block_styles.last().copied().unwrap_or_default();
        self.inline_styles
            .iter()
            .fold(base, |style, inner| style.patch(*inner))
    }

    /// Plain text, with `#tags` picked out.
    fn text(&mut self, text: &str) {
        let style = self.current_style();
        if let Some(link) = &mut self.link {
            link.text.push_str(text);
            self.push_span(text.to_string(), style);
            return;
        }
        let tag_style = self.role(Role::MdTag);
        let mut plain_start = 0;
        let mut i = 0;
        while let Some(offset) = text[i..].find('#') {
            let at = i + offset;
            let before = text[..at].chars().next_back().or(self.last_char);
            let starts_word = before.is_none_or(|c| c.is_whitespace() || c == '(');
            let length = tag_length(&text[at + 1..]);
            if starts_word && length > 0 {
                if plain_start < at {
                    self.push_span(text[plain_start..at].to_string(), style);
                }
                let end = at + 1 + length;
                self.push_span(text[at..end].to_string(), style.patch(tag_style));
                plain_start = end;
                i = end;
            } else {
                i = at + 1;
            }
        }
        if plain_start < text.len() {
            self.push_span(text[plain_start..].to_string(), style);
        }
    }

    fn push_span(&mut self, text: String, style: Style) {
        if text.is_empty() {
            return;
        }
        self.last_char = text.chars().next_back();
        let span = Span::styled(text, style);
        if let Some(table) = &mut self.table {
            if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                cell.push(span);
            }
            return;
        }
        match self.inline.last_mut() {
            Some(line) => line.push(span),
            None => self.inline.push(vec![span]),
        }
    }

    /// A block ended: a blank line separates it from the next one.
    fn blank_after_block(&mut self) {
        let depth = self.containers.len();
        self.blank_pending = Some(self.blank_pending.map_or(depth, |d| d.min(depth)));
    }

    /// The container prefix of a row: quote bars and list indentation, with the list markers of
    /// items that have not drawn theirs yet when `first`.
    fn prefix(&self, first: bool) -> Vec<Span<'static>> {
        self.prefix_of(self.containers.len(), first)
    }

    /// The prefix of the outermost `depth` containers.
    fn prefix_of(&self, depth: usize, first: bool) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for container in &self.containers[..depth] {
            match container {
                Container::Quote => spans.push(Span::styled(QUOTE_BAR, self.role(Role::MdQuote))),
                Container::List { .. } => {}
                Container::Item {
                    marker,
                    width,
                    marker_drawn,
                } => {
                    if first && !marker_drawn {
                        spans.extend(marker.iter().cloned());
                    } else {
                        spans.push(Span::raw(" ".repeat(*width)));
                    }
                }
            }
        }
        spans
    }

    /// The cells left for content after the prefix.
    fn room(&self, first: bool) -> usize {
        self.width
            .saturating_sub(wrap::spans_width(&self.prefix(first)))
            .max(1)
    }

    /// Add a row; a pending blank line goes first, carrying the quote bars it sits between.
    fn emit(&mut self, line: Line<'static>) {
        if let Some(depth) = self.blank_pending.take()
            && !self.out.is_empty()
        {
            let mut blank = self.prefix_of(depth.min(self.containers.len()), false);
            // Trailing indentation would only be invisible padding.
            while blank.last().is_some_and(|s| s.content.trim().is_empty()) {
                blank.pop();
            }
            if let Some(last) = blank.last_mut() {
                last.content = last.content.trim_end().to_string().into();
            }
            self.out.push(Line::from(blank));
        }
        self.out.push(line);
        for container in &mut self.containers {
            if let Container::Item { marker_drawn, .. } = container {
                *marker_drawn = true;
            }
        }
    }

    /// Lay out the inline content collected so far.
    fn flush(&mut self) {
        let mut inline = std::mem::take(&mut self.inline);
        self.last_char = None;
        // A line break at the very end (the last line of an HTML block) starts no row.
        while inline.last().is_some_and(Vec::is_empty) {
            inline.pop();
        }
        if inline.iter().all(|line| line.is_empty()) {
            return;
        }
        let rest = self.prefix(false);
        for (i, spans) in inline.iter().enumerate() {
            let first = self.prefix(i == 0);
            for row in wrap::wrap(spans, self.width, &first, &rest, Breaks::Words) {
                self.emit(row);
            }
        }
    }

    fn code_block(&mut self, code: CodeBlock) {
        let style = self.role(Role::MdCodeBlock);
        let first = self.prefix(true);
        let rest = self.prefix(false);
        let room = self.room(false);
        let pad = Span::styled(" ", style);
        let mut first_prefix = first.clone();
        first_prefix.push(pad.clone());
        let mut rest_prefix = rest.clone();
        rest_prefix.push(pad.clone());
        // One cell of padding on each side of the code inside the shaded block.
        let content_width = wrap::spans_width(&rest) + room.saturating_sub(1);
        let language = code
            .language
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .unwrap_or("")
            .to_string();
        let mut first_row = true;
        let reuse = match (self.reuse, code.closed) {
            (false, _) => Reuse::Nothing,
            (true, true) => Reuse::Memo,
            (true, false) => Reuse::Resume,
        };
        for line in highlight_with(&code.text, &code.language, self.theme, reuse) {
            let prefix = if first_row {
                &first_prefix
            } else {
                &rest_prefix
            };
            for mut row in wrap::wrap(
                &line.spans,
                content_width,
                prefix,
                &rest_prefix,
                Breaks::Anywhere,
            ) {
                if first_row && !language.is_empty() {
                    let used = wrap::spans_width(&row.spans);
                    let label_width = wrap::text_width(&language) + 1;
                    if used + 1 + label_width <= self.width {
                        wrap::pad(&mut row, self.width - label_width, style);
                        row.spans.push(Span::styled(
                            format!("{language} "),
                            style.patch(self.role(Role::Dim)),
                        ));
                    }
                }
                wrap::pad(&mut row, self.width, style);
                self.emit(row);
                first_row = false;
            }
        }
    }

    fn table_block(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let mut widths = vec![1usize; columns];
        for row in &table.rows {
            for (column, cell) in row.iter().enumerate() {
                widths[column] = widths[column].max(wrap::spans_width(cell));
            }
        }
        let room = self.room(false);
        let separators = wrap::text_width(COLUMN_SEPARATOR) * (columns - 1);
        let mut total: usize = widths.iter().sum::<usize>() + separators;
        // Squeeze the widest column one cell at a time until the table fits (or cannot shrink).
        while total > room {
            let Some((widest, width)) = widths
                .iter()
                .copied()
                .enumerate()
                .max_by_key(|&(_, w)| w)
                .filter(|&(_, w)| w > MIN_COLUMN)
            else {
                break;
            };
            let excess = total - room;
            let second = widths
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != widest)
                .map(|(_, w)| *w)
                .max()
                .unwrap_or(MIN_COLUMN)
                .max(MIN_COLUMN);
            // Shrink straight down to the next widest (or by the excess), not cell by cell.
            let cut = excess.min(width - second).max(1).min(width - MIN_COLUMN);
            widths[widest] -= cut;
            total -= cut;
        }
        let separator_style = self.role(Role::Border);
        let header_style = self.role(Role::MdStrong);
        for (index, row) in table.rows.iter().enumerate() {
            let mut spans = self.prefix(index == 0);
            for (column, width) in widths.iter().copied().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(COLUMN_SEPARATOR, separator_style));
                }
                let empty = Vec::new();
                let cell = row.get(column).unwrap_or(&empty);
                let mut content = wrap::truncate(cell, width);
                if index < table.header_rows {
                    for span in &mut content {
                        span.style = span.style.patch(header_style);
                    }
                }
                let used = wrap::spans_width(&content);
                let space = width.saturating_sub(used);
                let (left, right) = match table.alignments.get(column) {
                    Some(Alignment::Right) => (space, 0),
                    Some(Alignment::Center) => (space / 2, space - space / 2),
                    _ => (0, space),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                spans.extend(content);
                // The last column needs no padding: nothing follows it.
                if right > 0 && column + 1 < columns {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            self.emit(Line::from(spans));
            if index + 1 == table.header_rows {
                let mut rule = self.prefix(false);
                let pieces: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                rule.push(Span::styled(pieces.join("─┼─"), separator_style));
                self.emit(Line::from(rule));
            }
        }
    }
}

/// The length in bytes of a tag name at the start of `text` (letters, digits, `_`, `-`, `/`;
/// not only digits, so `#1` is no tag), or 0.
fn tag_length(text: &str) -> usize {
    let length: usize = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
        .map(char::len_utf8)
        .sum();
    if text[..length].chars().all(|c| c.is_ascii_digit()) {
        0
    } else {
        length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::builtin_dark()
    }

    fn lines(text: &str, width: usize) -> Vec<String> {
        render_markdown(text, width, &theme())
            .iter()
            .map(|l| l.to_string().trim_end().to_string())
            .collect()
    }

    fn span_style(text: &str, needle: &str) -> Option<Style> {
        render_markdown(text, 60, &theme())
            .iter()
            .flat_map(|l| l.spans.clone())
            .find(|s| s.content.contains(needle))
            .map(|s| s.style)
    }

    #[test]
    fn paragraphs_wrap_and_are_separated_by_a_blank_line() {
        assert_eq!(
            lines("one two three four\n\nfive", 10),
            ["one two", "three four", "", "five"]
        );
        assert_eq!(lines("soft\nbreak", 40), ["soft break"]);
        assert_eq!(lines("hard  \nbreak", 40), ["hard", "break"]);
        assert!(lines("", 40).is_empty());
    }

    #[test]
    fn headings_and_emphasis_take_their_roles() {
        let theme = theme();
        let assistant = theme.style(Role::Assistant);
        assert_eq!(
            span_style("## Plan", "Plan"),
            Some(assistant.patch(theme.style(Role::MdHeading)))
        );
        assert_eq!(lines("# Title\ntext", 40), ["Title", "", "text"]);
        assert_eq!(
            span_style("a *soft* word", "soft"),
            Some(assistant.patch(theme.style(Role::MdEmphasis)))
        );
        assert_eq!(
            span_style("a **loud** word", "loud"),
            Some(assistant.patch(theme.style(Role::MdStrong)))
        );
        assert_eq!(
            span_style("run `cargo test` now", "cargo test"),
            Some(assistant.patch(theme.style(Role::MdCode)))
        );
    }

    #[test]
    fn lists_have_markers_and_hanging_indents() {
        assert_eq!(
            lines("- first item here\n- second\n  - nested", 12),
            ["• first item", "  here", "• second", "  ◦ nested"]
        );
        assert_eq!(
            lines("3. three\n4. four\n\nafter", 20),
            ["3. three", "4. four", "", "after"]
        );
        assert_eq!(
            lines("- [ ] todo\n- [x] done", 20),
            ["• ☐ todo", "• ☑ done"]
        );
        assert_eq!(
            lines("- [ ] a task that wraps", 14),
            ["• ☐ a task", "    that wraps"]
        );
        assert_eq!(
            span_style("- item", "•"),
            Some(theme().style(Role::MdListMarker))
        );
    }

    #[test]
    fn loose_lists_keep_a_blank_line_between_items() {
        assert_eq!(lines("- a\n\n- b", 20), ["• a", "", "• b"]);
    }

    #[test]
    fn quotes_carry_a_bar_on_every_row() {
        assert_eq!(
            lines("> quoted words wrap here\n>\n> again", 14),
            ["▌ quoted words", "▌ wrap here", "▌", "▌ again"]
        );
        assert_eq!(lines("> [!NOTE]\n> mind", 20), ["▌ Note", "▌ mind"]);
        // The blank line between a quote and its neighbours belongs to neither.
        assert_eq!(lines("a\n\n> b\n\nc", 20), ["a", "", "▌ b", "", "c"]);
    }

    #[test]
    fn code_fences_fill_a_shaded_block_with_a_language_label() {
        let theme = theme();
        let out = render_markdown("```rust\nlet x = 1;\n```\nafter", 30, &theme);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(text[0], format!(" let x = 1;{}rust ", " ".repeat(14)));
        assert_eq!(text[0].chars().count(), 30);
        assert_eq!(text[1], "");
        assert_eq!(text[2], "after");
        let background = theme.style(Role::MdCodeBlock).bg;
        assert!(background.is_some());
        assert!(out[0].spans.iter().all(|s| s.style.bg == background));
    }

    #[test]
    fn long_code_lines_break_inside_the_block() {
        let out = lines("```\nabcdefghij\n```", 6);
        assert_eq!(out, [" abcd", " efgh", " ij"]);
    }

    #[test]
    fn links_wikilinks_and_tags() {
        let theme = theme();
        assert_eq!(
            lines("see [docs](https://x.io) and <https://y.io>", 60),
            ["see docs (https://x.io) and https://y.io"]
        );
        assert_eq!(
            lines(
                "mail [Ana](mailto:ana@x.io) or [ana@x.io](mailto:ana@x.io)",
                60
            ),
            ["mail Ana (ana@x.io) or ana@x.io"]
        );
        assert_eq!(
            lines("open [[Projects/Plan]] now", 60),
            ["open [[Projects/Plan]] now"]
        );
        assert_eq!(lines("[[Plan|the plan]]", 60), ["[[the plan]]"]);
        let link = theme
            .style(Role::Assistant)
            .patch(theme.style(Role::MdLink));
        assert_eq!(span_style("open [[Plan]]", "Plan"), Some(link));
        let tag = theme.style(Role::Assistant).patch(theme.style(Role::MdTag));
        assert_eq!(
            span_style("filed under #work/q3 today", "#work/q3"),
            Some(tag)
        );
        // Not tags: an issue number, a heading-like hash inside a word, a lone hash.
        for text in ["issue #12", "C#sharp", "a # b"] {
            let styles: Vec<Style> = render_markdown(text, 60, &theme)
                .iter()
                .flat_map(|l| l.spans.iter().map(|s| s.style))
                .collect();
            assert!(!styles.contains(&tag), "{text}");
        }
    }

    #[test]
    fn tables_line_up_and_squeeze_to_fit() {
        assert_eq!(
            lines("| a | bb |\n|---|---:|\n| ccc | d |", 40),
            ["a   │ bb", "────┼───", "ccc │  d"]
        );
        let narrow = lines(
            "| name | description |\n|---|---|\n| x | a very long description indeed |",
            20,
        );
        assert!(
            narrow.iter().all(|l| wrap::text_width(l) <= 20),
            "{narrow:?}"
        );
        assert!(narrow[2].ends_with('…'), "{narrow:?}");
    }

    #[test]
    fn html_blocks_show_as_dim_source() {
        assert_eq!(
            lines("<div>\nhi\n</div>\n\nafter", 40),
            ["<div>", "hi", "</div>", "", "after"]
        );
        assert_eq!(
            span_style("<details>\n</details>", "<details>"),
            Some(theme().style(Role::Dim))
        );
    }

    #[test]
    fn rules_span_the_width() {
        assert_eq!(lines("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    }

    #[test]
    fn an_unclosed_fence_while_streaming_is_still_code() {
        let out = lines("text\n\n```py\nprint(1)", 20);
        assert_eq!(out[0], "text");
        assert!(out[2].starts_with(" print(1)"), "{out:?}");
    }

    #[test]
    fn stable_prefix_cuts_only_between_independent_blocks() {
        let text = "para one\n\npara two\n";
        assert_eq!(stable_prefix_len(text, 0), "para one\n\n".len());
        // The line after the blank need not be complete: how it starts decides.
        assert_eq!(stable_prefix_len("a\n\nb", 0), 3);
        assert_eq!(stable_prefix_len("a\n\n  ", 0), 0);
        assert_eq!(stable_prefix_len("a\n\n-", 0), 0);
        // Not inside a code fence.
        let fenced = "```\ncode\n\nmore\n```\n";
        assert_eq!(stable_prefix_len(fenced, 0), 0);
        let after_fence = "```\ncode\n\nmore\n```\n\nnext\n";
        assert_eq!(
            stable_prefix_len(after_fence, 0),
            "```\ncode\n\nmore\n```\n\n".len()
        );
        // Not before list items, quotes or indented continuations.
        assert_eq!(stable_prefix_len("- a\n\n- b\n", 0), 0);
        assert_eq!(stable_prefix_len("> a\n\n> b\n", 0), 0);
        assert_eq!(stable_prefix_len("- a\n\n  more\n", 0), 0);
        // A paragraph may start with a space or three (a streamed token often does)...
        assert_eq!(stable_prefix_len("a\n\n word\n", 0), 3);
        // ...but not after a list item or quote, which an indented line may continue.
        assert_eq!(stable_prefix_len("1. a\n\n   more\n", 0), 0);
        assert_eq!(stable_prefix_len("- a\nlazy\n\n  more\n", 0), 0);
        assert_eq!(
            stable_prefix_len("- a\n\nb\n\n c\n", 0),
            "- a\n\nb\n\n".len()
        );
        assert_eq!(stable_prefix_len("a\n\n    code\n", 0), 0);
        // Scanning resumes from an earlier cut.
        let long = "a\n\nb\n\nc\n";
        assert_eq!(stable_prefix_len(long, 3), "a\n\nb\n\n".len());
        assert_eq!(stable_prefix_len(long, long.len() + 5), long.len());
    }

    #[test]
    fn head_and_tail_render_like_the_whole() {
        let text = "# Title\n\nSome text here.\n\n```rust\nfn a() {}\n```\n\nMore *text*.\n\n- a\n- b\n\nEnd.\n";
        let theme = theme();
        let whole = render_markdown(text, 24, &theme);
        // Cut the way a streaming reply is cut: after each byte that arrives.
        let mut cut = 0;
        let mut pieces = Vec::new();
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let next = stable_prefix_len(&text[..end], cut);
            if next > cut {
                pieces.push(&text[cut..next]);
                cut = next;
            }
        }
        pieces.push(&text[cut..]);
        assert!(pieces.len() > 3, "{pieces:?}");
        let mut joined: Vec<Line<'static>> = Vec::new();
        for piece in pieces {
            let part = render_markdown(piece, 24, &theme);
            if !joined.is_empty() && !part.is_empty() {
                joined.push(Line::default());
            }
            joined.extend(part);
        }
        assert_eq!(joined, whole);
    }

    #[test]
    fn closed_and_open_fences() {
        assert!(fence_is_closed("```rust\nlet a = 1;\n```\n"));
        assert!(fence_is_closed("~~~~\nx\n~~~~~"));
        assert!(!fence_is_closed("```rust\nlet a = 1;\n"));
        assert!(!fence_is_closed("```rust\n"));
        assert!(!fence_is_closed("````\nx\n```\n"));
    }

    #[test]
    fn streamed_code_looks_like_finished_code() {
        let theme = theme();
        let text = "Code:\n\n```rust\nfn a() {\n    let s = \"x\";\n}\n```\n";
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let prefix = &text[..end];
            assert_eq!(
                render_markdown(prefix, 30, &theme),
                render_markdown_with(prefix, 30, &theme, false),
                "{prefix:?}"
            );
        }
    }

    #[test]
    fn awkward_input_at_any_width_does_not_panic_and_prose_fits() {
        let theme = theme();
        let awkward = [
            "> - > 1. > ```\n> > code",
            "- a\n  - b\n    - c\n      - d\n        - e",
            "| 漢字 | 👍🏽 |\n|:-:|--|\n| a\tb | \u{7}x |",
            "```\nunclosed\tfence",
            "[[a|b]] ![[img.png]] ![alt](x.png) <b>x</b> [^1]\n\n[^1]: note",
            "#tag#tag ##x #-x #_ #/",
            "***\n___\n- - -",
            "a  \n  \nb\\\nc",
            "",
            "\n\n\n",
        ];
        for text in awkward {
            for width in 0..=12 {
                render_markdown(text, width, &theme);
            }
        }
        let prose = "Some **bold** and *soft* words, `code`, a [link](https://example.com/a/very/long/path) and 漢字 too.\n\n> quoted words here\n\n1. item one\n2. item two";
        for width in 8..=40 {
            for line in render_markdown(prose, width, &theme) {
                let used = wrap::spans_width(&line.spans);
                assert!(
                    used <= width,
                    "{width}: {:?} is {used} wide",
                    line.to_string()
                );
            }
        }
    }

    #[test]
    fn tag_names() {
        assert_eq!(tag_length("work rest"), 4);
        assert_eq!(tag_length("12"), 0);
        assert_eq!(tag_length("2024-q1"), 7);
        assert_eq!(tag_length(" x"), 0);
    }
}
