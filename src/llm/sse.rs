//! Server-sent events framing (the WHATWG event-stream format), fed bytes in arbitrary chunks.
//!
//! Written here rather than taken from a crate because it is small and the client needs exact
//! control over chunk boundaries: a line may be split anywhere, including inside a multi-byte UTF-8
//! character or between the `\r` and `\n` of one line end, so bytes are buffered and only whole
//! lines are decoded.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the server sent one (OpenAI-compatible servers never do).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental parser: [`SseParser::feed`] each received chunk, then [`SseParser::finish`] at EOF.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next chunk belongs to that line end.
    after_cr: bool,
    /// The `event:` field of the event being built.
    event: Option<String>,
    /// The data of the event being built; `None` until a `data:` field arrives.
    data: Option<String>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Consume one chunk; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if !rest.is_empty() && std::mem::take(&mut self.after_cr) {
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line
                .extend_from_slice(rest.get(..end).unwrap_or_default());
            let mut next = end + 1;
            if rest.get(end) == Some(&b'\r') {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            rest = rest.get(next..).unwrap_or_default();
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        events
    }

    /// The stream ended. The standard discards an event that lacks its closing blank line; we
    /// dispatch it instead, so that a server that ends with `data: [DONE]` and no newline (or a
    /// final `message_stop` without the blank line) is not reported as a broken stream.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let mut events: Vec<SseEvent> = self.take_line(&line).into_iter().collect();
        events.extend(self.take_line(b""));
        events
    }

    /// Interpret one complete line; a blank line dispatches the event built so far.
    fn take_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            let event = self.event.take();
            return self.data.take().map(|data| SseEvent { event, data });
        }
        if line.starts_with(b":") {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            // `id` and `retry` only matter to reconnecting EventSource clients; a POST is never
            // re-sent after the response started.
            _ => {}
        }
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The byte-exact transcripts of docs/protocols.md §6 (tests/fixtures/sse).
    /// The bytes of one fixture by file name.
    pub(crate) fn fixture(name: &str) -> &'static [u8] {
        FIXTURES
            .iter()
            .find(|(fixture, _)| *fixture == name)
            .map(|(_, bytes)| *bytes)
            .unwrap()
    }

    pub(crate) const FIXTURES: [(&str, &[u8]); 8] = [
        (
            "anthropic_stream_thinking_tool_use",
            include_bytes!("../../tests/fixtures/sse/anthropic_stream_thinking_tool_use.sse"),
        ),
        (
            "openai_stream_reasoning_tool_call",
            include_bytes!("../../tests/fixtures/sse/openai_stream_reasoning_tool_call.sse"),
        ),
        (
            "anthropic_stream_tool_use.official",
            include_bytes!("../../tests/fixtures/sse/anthropic_stream_tool_use.official.sse"),
        ),
        (
            "anthropic_stream_parallel_tool_use.vault",
            include_bytes!("../../tests/fixtures/sse/anthropic_stream_parallel_tool_use.vault.sse"),
        ),
        (
            "anthropic_stream_error_midstream",
            include_bytes!("../../tests/fixtures/sse/anthropic_stream_error_midstream.sse"),
        ),
        (
            "anthropic_stream_max_tokens_truncated_tool",
            include_bytes!(
                "../../tests/fixtures/sse/anthropic_stream_max_tokens_truncated_tool.sse"
            ),
        ),
        (
            "openai_stream_tool_call.recorded",
            include_bytes!("../../tests/fixtures/sse/openai_stream_tool_call.recorded.sse"),
        ),
        (
            "openai_stream_parallel_tool_calls.recorded",
            include_bytes!(
                "../../tests/fixtures/sse/openai_stream_parallel_tool_calls.recorded.sse"
            ),
        ),
    ];

    /// Parse `bytes` fed in chunks of `size` bytes.
    pub(crate) fn parse_in_chunks(bytes: &[u8], size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in bytes.chunks(size) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        events
    }

    /// A reference split of a well-formed LF transcript: events are separated by blank lines.
    fn expected_events(bytes: &[u8]) -> Vec<SseEvent> {
        let text = std::str::from_utf8(bytes).unwrap();
        text.split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut event = None;
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        event = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push(v);
                    }
                }
                SseEvent {
                    event,
                    data: data.join("\n"),
                }
            })
            .collect()
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    #[test]
    fn every_fixture_parses_the_same_at_any_chunk_size() {
        for (name, bytes) in FIXTURES {
            let expected = expected_events(bytes);
            assert!(expected.len() >= 4, "{name}");
            for size in [1, 7, 13, bytes.len()] {
                assert_eq!(parse_in_chunks(bytes, size), expected, "{name} at {size}");
            }
        }
    }

    #[test]
    fn crlf_and_comment_lines_parse_like_lf() {
        for (name, bytes) in FIXTURES {
            let text = std::str::from_utf8(bytes).unwrap();
            let with_comments =
                text.replace("\n\n", "\n: keepalive\n\n: OPENROUTER PROCESSING\n\n");
            let crlf = with_comments.replace('\n', "\r\n");
            let expected = expected_events(bytes);
            for size in [1, 7, 13] {
                assert_eq!(
                    parse_in_chunks(crlf.as_bytes(), size),
                    expected,
                    "{name} at {size}"
                );
            }
        }
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        let events = parse_in_chunks(b"event: a\rdata: x\r\rdata: y\r\r", 1);
        assert_eq!(events, vec![ev(Some("a"), "x"), ev(None, "y")]);
    }

    #[test]
    fn cr_at_a_chunk_end_and_lf_at_the_next_start_are_one_line_end() {
        let mut parser = SseParser::new();
        assert!(parser.feed(b"data: x\r").is_empty());
        // Were `\r` and `\n` counted as two line ends, the blank line would dispatch here.
        assert!(parser.feed(b"\n").is_empty());
        assert!(parser.feed(b"").is_empty());
        assert_eq!(parser.feed(b"\r\n"), vec![ev(None, "x")]);
    }

    #[test]
    fn an_emoji_split_across_chunks_survives() {
        let bytes = "data: 🔎 ok\n\n".as_bytes();
        // Split inside the 4-byte character at every possible point.
        for cut in 7..10 {
            let mut parser = SseParser::new();
            let mut events = parser.feed(&bytes[..cut]);
            events.extend(parser.feed(&bytes[cut..]));
            assert_eq!(events, vec![ev(None, "🔎 ok")], "cut at {cut}");
        }
    }

    #[test]
    fn several_data_lines_join_with_newlines() {
        let events = parse_in_chunks(b"data: a\ndata:b\ndata:  c\n\n", 3);
        assert_eq!(events, vec![ev(None, "a\nb\n c")]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored_and_events_without_data_not_dispatched() {
        let events = parse_in_chunks(b": hi\nid: 4\nretry: 10\nevent: ping\n\ndata\n\n", 2);
        // `event: ping` with no data is dropped; a bare `data` line is an empty data field.
        assert_eq!(events, vec![ev(None, "")]);
    }

    #[test]
    fn the_event_name_resets_after_each_dispatch() {
        let events = parse_in_chunks(b"event: one\ndata: 1\n\ndata: 2\n\n", 5);
        assert_eq!(events, vec![ev(Some("one"), "1"), ev(None, "2")]);
    }

    #[test]
    fn an_unterminated_last_event_is_dispatched_at_eof() {
        let events = parse_in_chunks(b"data: 1\n\ndata: [DONE]", 4);
        assert_eq!(events, vec![ev(None, "1"), ev(None, "[DONE]")]);
        let events = parse_in_chunks(b"data: [DONE]\n", 4);
        assert_eq!(events, vec![ev(None, "[DONE]")]);
    }

    #[test]
    fn eof_without_pending_data_yields_nothing() {
        assert!(parse_in_chunks(b"data: 1\n\n: bye", 3).len() == 1);
        assert!(parse_in_chunks(b"", 1).is_empty());
    }
}
