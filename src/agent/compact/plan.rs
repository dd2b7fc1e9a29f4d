//! What a compaction replaces: the upstream view of a stored conversation under a compaction
//! state, and the choice of what to shorten or summarise next. Pure functions over messages, so
//! the choice is tested without a provider.
//!
//! Cuts fall only at the start of a turn (a user message that holds no tool result), so a tool
//! call is never separated from its result: both are either summarised or both kept.

use super::super::session::CompactionState;
use crate::llm::{Block, Message, ResultPart, Role};

/// The characters of a tool result kept when it is shortened.
pub const SHORTENED_KEEP_CHARS: usize = 600;

/// What to do before the next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// It fits, or nothing can be made smaller.
    Nothing,
    /// Shorten the tool results of messages `..shortened` (the cheap step: no model request).
    Shorten { shortened: usize },
    /// Summarise messages `from..to` (with the earlier summary), keep `to..` verbatim, and shorten
    /// the tool results of messages `to..shortened`.
    Summarise {
        from: usize,
        to: usize,
        shortened: usize,
    },
}

/// The budget a plan must meet, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The system prompt and the tool definitions: sent with every request, never compacted.
    pub pinned: u64,
    /// The most a request may be before it is compacted (threshold × window).
    pub limit: u64,
    /// What a summary is expected to cost.
    pub summary: u64,
}

/// The summary as the first upstream message.
pub fn summary_message(summary: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::Text {
            text: format!(
                "<conversation_summary>\nThe earlier part of this conversation was compacted to save context. \
                 Summary of it:\n\n{summary}\n</conversation_summary>"
            ),
        }],
    }
}

/// The conversation as sent upstream under `state`: the summary, then the messages after it,
/// their tool results shortened up to `state.shortened`.
pub fn upstream(log: &[Message], state: &CompactionState) -> Vec<Message> {
    let start = state.summarised.min(log.len());
    let mut out = Vec::with_capacity(log.len() - start + 1);
    if let Some(summary) = &state.summary {
        out.push(summary_message(summary));
    }
    for (index, message) in log.iter().enumerate().skip(start) {
        if index < state.shortened {
            out.push(shortened(message));
        } else {
            out.push(message.clone());
        }
    }
    out
}

/// `message` with each long tool result cut to its beginning and a note of what was cut, and
/// images of tool results replaced by a note.
pub fn shortened(message: &Message) -> Message {
    let content = message
        .content
        .iter()
        .map(|block| match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Block::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: content.iter().map(shortened_part).collect(),
                is_error: *is_error,
            },
            Block::Text { .. }
            | Block::Image { .. }
            | Block::ToolUse { .. }
            | Block::Thinking { .. }
            | Block::RedactedThinking { .. } => block.clone(),
        })
        .collect();
    Message {
        role: message.role.clone(),
        content,
    }
}

fn shortened_part(part: &ResultPart) -> ResultPart {
    match part {
        ResultPart::Text { text } => {
            let total = text.chars().count();
            if total <= SHORTENED_KEEP_CHARS + 200 {
                return part.clone();
            }
            let kept: String = text.chars().take(SHORTENED_KEEP_CHARS).collect();
            ResultPart::Text {
                text: format!(
                    "{kept}\n[… {} more characters shortened when the conversation was compacted; call the tool again if you need them]",
                    total - SHORTENED_KEEP_CHARS
                ),
            }
        }
        ResultPart::Image { .. } => ResultPart::Text {
            text: "[an image, removed when the conversation was compacted]".into(),
        },
    }
}

/// The indices of the messages that start a turn: user messages without a tool result.
pub fn turn_starts(log: &[Message]) -> Vec<usize> {
    log.iter()
        .enumerate()
        .filter(|(_, m)| {
            m.role == Role::User
                && !m
                    .content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The tokens of the upstream view under `state`, by `estimate` per message.
fn cost(
    log: &[Message],
    state: &CompactionState,
    budget: &Budget,
    estimate: &dyn Fn(&Message) -> u64,
) -> u64 {
    let messages: u64 = upstream(log, state).iter().map(estimate).sum();
    budget.pinned + messages
}

/// What to compact so that the next request fits `budget.limit`. The current turn (from the last
/// turn start on) is never shortened or summarised. Unless `force`d (a `/compact`, or the
/// provider said the context overflowed), shortening earlier tool results comes first and is
/// enough when it brings the request under the limit; a summary keeps as many recent turns
/// verbatim as fit in half the limit (room to grow before the next compaction).
pub fn choose(
    log: &[Message],
    state: &CompactionState,
    budget: &Budget,
    estimate: &dyn Fn(&Message) -> u64,
    force: bool,
) -> Plan {
    let starts = turn_starts(log);
    let current = starts.last().copied().unwrap_or(0);
    let shorten_to = current.max(state.shortened);
    let shortened_state = CompactionState {
        shortened: shorten_to,
        ..state.clone()
    };
    let can_shorten = shorten_to > state.shortened
        && cost(log, &shortened_state, budget, estimate) < cost(log, state, budget, estimate);
    if !force && cost(log, state, budget, estimate) <= budget.limit {
        return Plan::Nothing;
    }
    if !force && can_shorten && cost(log, &shortened_state, budget, estimate) <= budget.limit {
        return Plan::Shorten {
            shortened: shorten_to,
        };
    }
    // Cuts that summarise something new, oldest first (each keeps fewer turns than the one before).
    let cuts: Vec<usize> = starts
        .iter()
        .copied()
        .filter(|&start| start > state.summarised && start <= current)
        .collect();
    let keep_limit = budget.limit / 2;
    let summarised_cost = |to: usize| {
        let after = CompactionState {
            summarised: to,
            shortened: shorten_to,
            summary: Some(String::new()),
        };
        cost(log, &after, budget, estimate) + budget.summary
    };
    let chosen = cuts
        .iter()
        .copied()
        .find(|&to| summarised_cost(to) <= keep_limit)
        .or_else(|| cuts.last().copied());
    match chosen {
        Some(to) => Plan::Summarise {
            from: state.summarised,
            to,
            shortened: shorten_to,
        },
        None if can_shorten => Plan::Shorten {
            shortened: shorten_to,
        },
        None => Plan::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    fn assistant(text: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.into(),
                name: "read_note".into(),
                input: json!({"path": "Big.md"}),
            }],
        }
    }

    fn result(id: &str, chars: usize) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id.into(),
                content: vec![ResultPart::Text {
                    text: "x".repeat(chars),
                }],
                is_error: false,
            }],
        }
    }

    /// A turn that reads a note of `chars` characters: question, call, result, answer.
    fn reading_turn(n: usize, chars: usize) -> Vec<Message> {
        let id = format!("c{n}");
        vec![
            user(&format!("question {n}")),
            call(&id),
            result(&id, chars),
            assistant(&format!("answer {n}")),
        ]
    }

    /// About four characters per token, like the first estimator.
    fn estimate(message: &Message) -> u64 {
        serde_json::to_string(&message.content)
            .map(|s| s.len() as u64 / 4)
            .unwrap_or(0)
    }

    fn budget(limit: u64) -> Budget {
        Budget {
            pinned: 500,
            limit,
            summary: 300,
        }
    }

    /// A tool call and its result are on the same side of every cut.
    fn assert_no_split(log: &[Message], at: usize) {
        let called: Vec<&str> = log[..at]
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                Block::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        for message in &log[at..] {
            for block in &message.content {
                if let Block::ToolResult { tool_use_id, .. } = block {
                    assert!(
                        !called.contains(&tool_use_id.as_str()),
                        "the cut at {at} splits call {tool_use_id} from its result"
                    );
                }
            }
        }
    }

    #[test]
    fn a_conversation_under_the_limit_is_left_alone() {
        let log: Vec<Message> = (0..3).flat_map(|n| reading_turn(n, 400)).collect();
        let plan = choose(
            &log,
            &CompactionState::default(),
            &budget(10_000),
            &estimate,
            false,
        );
        assert_eq!(plan, Plan::Nothing);
    }

    /// Big results of earlier turns are shortened first, and that is enough; the current turn's
    /// result stays whole.
    #[test]
    fn shortening_earlier_results_comes_first() {
        let mut log: Vec<Message> = reading_turn(0, 24_000);
        log.extend(reading_turn(1, 24_000).into_iter().take(3));
        let plan = choose(
            &log,
            &CompactionState::default(),
            &budget(8_000),
            &estimate,
            false,
        );
        assert_eq!(plan, Plan::Shorten { shortened: 4 });
        let view = upstream(
            &log,
            &CompactionState {
                shortened: 4,
                ..Default::default()
            },
        );
        let ResultPart::Text { text } = result_part(&view[2]) else {
            panic!("text")
        };
        assert!(text.len() < 1_000 && text.contains("shortened"), "{text}");
        let ResultPart::Text { text } = result_part(&view[6]) else {
            panic!("text")
        };
        assert_eq!(text.len(), 24_000, "the current turn's result is whole");
    }

    fn result_part(message: &Message) -> &ResultPart {
        match &message.content[0] {
            Block::ToolResult { content, .. } => &content[0],
            other => panic!("not a result: {other:?}"),
        }
    }

    /// When shortening is not enough, the older turns are summarised at a turn start, keeping as
    /// many recent turns as fit in half the limit, never the current turn.
    #[test]
    fn summaries_cut_at_turn_starts_and_keep_recent_turns() {
        let log: Vec<Message> = (0..12).flat_map(|n| reading_turn(n, 3_000)).collect();
        let state = CompactionState::default();
        let plan = choose(&log, &state, &budget(3_000), &estimate, false);
        let Plan::Summarise {
            from,
            to,
            shortened,
        } = plan
        else {
            panic!("{plan:?}")
        };
        assert_eq!(from, 0);
        assert!(turn_starts(&log).contains(&to), "{to}");
        assert!(to <= 44, "the current turn is kept: {to}");
        assert!(to >= 4, "something is summarised: {to}");
        assert_eq!(shortened, 44);
        assert_no_split(&log, to);
        let after = CompactionState {
            summarised: to,
            shortened,
            summary: Some("s".repeat(1_200)),
        };
        assert!(cost(&log, &after, &budget(3_000), &estimate) <= 3_000);
    }

    /// Turns of plain talk (nothing to shorten): the summary keeps the recent turns that fit in
    /// half the limit.
    #[test]
    fn several_recent_turns_stay_verbatim_when_they_fit() {
        let log: Vec<Message> = (0..12)
            .flat_map(|n| {
                [
                    user(&"words ".repeat(330)),
                    assistant(&format!("answer {n}")),
                ]
            })
            .collect();
        let plan = choose(
            &log,
            &CompactionState::default(),
            &budget(4_000),
            &estimate,
            false,
        );
        let Plan::Summarise { from: 0, to, .. } = plan else {
            panic!("{plan:?}")
        };
        let kept_turns = turn_starts(&log).iter().filter(|&&s| s >= to).count();
        assert!(kept_turns >= 2, "{kept_turns} turns kept (cut at {to})");
        let after = CompactionState {
            summarised: to,
            shortened: 22,
            summary: Some("s".repeat(1_200)),
        };
        assert!(cost(&log, &after, &budget(4_000), &estimate) <= 2_000);
    }

    /// A forced compaction summarises even a conversation under the limit, and a later one
    /// starts where the earlier summary ended.
    #[test]
    fn forced_compactions_summarise_from_the_last_summary() {
        let log: Vec<Message> = (0..4).flat_map(|n| reading_turn(n, 100)).collect();
        let state = CompactionState {
            summarised: 4,
            shortened: 8,
            summary: Some("before".into()),
        };
        let plan = choose(&log, &state, &budget(100_000), &estimate, true);
        assert_eq!(
            plan,
            Plan::Summarise {
                from: 4,
                to: 8,
                shortened: 12
            }
        );
    }

    /// With only the current turn after the summary there is nothing more to compact.
    #[test]
    fn the_current_turn_alone_is_never_compacted() {
        let log: Vec<Message> = reading_turn(0, 40_000);
        let plan = choose(
            &log,
            &CompactionState::default(),
            &budget(1_000),
            &estimate,
            true,
        );
        assert_eq!(plan, Plan::Nothing);
    }

    /// Turn starts are user messages without tool results; results are not turn starts.
    #[test]
    fn turn_starts_skip_tool_results() {
        let log: Vec<Message> = (0..2).flat_map(|n| reading_turn(n, 10)).collect();
        assert_eq!(turn_starts(&log), vec![0, 4]);
    }

    /// The summary comes first, the summarised messages are gone, the rest is verbatim.
    #[test]
    fn the_upstream_view_starts_with_the_summary() {
        let log: Vec<Message> = (0..3).flat_map(|n| reading_turn(n, 2_000)).collect();
        let state = CompactionState {
            summarised: 8,
            shortened: 8,
            summary: Some("they talked".into()),
        };
        let view = upstream(&log, &state);
        assert_eq!(view.len(), 5);
        assert!(
            matches!(&view[0].content[0], Block::Text { text } if text.contains("they talked"))
        );
        assert_eq!(&view[1..], &log[8..]);
    }
}
