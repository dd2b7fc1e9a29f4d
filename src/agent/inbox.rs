//! The op channel while a turn waits for something (the model's stream, a tool call, the
//! person's answer, the editor, the MCP servers): one place that answers whatever arrives
//! meanwhile, so that Esc ends every wait at once.

use super::{AgentEvent, Op};
use std::future::Future;
use tokio::sync::mpsc;

/// The channels of a running turn.
pub(super) struct Inbox<'a> {
    pub ops: &'a mut mpsc::Receiver<Op>,
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
}

/// The agent state an op may change during a wait (borrowed apart from whatever the awaited work
/// borrows, e.g. the provider or the registry).
pub(super) struct WaitState<'a> {
    /// `/model`: the running request keeps its model; the next one uses the new one.
    pub model: &'a mut String,
    /// A `Shutdown` arrived: the agent ends after this turn.
    pub shutting_down: &'a mut bool,
}

/// What the person is told when they send a message while a turn runs.
pub(super) const BUSY: &str = "a turn is already running; wait for it or interrupt it first";

impl Inbox<'_> {
    /// Send an event; a front end that went away needs nothing more (the next wait ends on the
    /// closed op channel).
    pub fn send(&self, event: AgentEvent) {
        if self.events.send(event).is_err() {
            tracing::debug!("the front end is gone; an event was dropped");
        }
    }

    /// Tell the person something that is not part of the reply.
    pub fn notice(&self, text: impl Into<String>) {
        self.send(AgentEvent::Notice(text.into()));
    }

    /// Wait for `work` while answering ops. `Interrupt`, `Shutdown` or a closed channel end the
    /// wait with `None` (the work is dropped: abandoned); `SetModel` is applied; a second
    /// message is told `busy`; answers (`Decision`, `EditorApplied`) go to `answer`, which may
    /// end the wait with a value (an answer it does not want is stale and dropped).
    pub async fn wait<T>(
        &mut self,
        work: impl Future<Output = T>,
        state: WaitState<'_>,
        busy: &str,
        mut answer: impl FnMut(Op) -> Option<T>,
    ) -> Option<T> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                op = self.ops.recv() => match op {
                    Some(Op::Interrupt) | None => return None,
                    Some(Op::Shutdown) => {
                        *state.shutting_down = true;
                        return None;
                    }
                    Some(Op::SetModel(model)) => *state.model = model,
                    Some(Op::UserTurn { .. }) => self.notice(busy),
                    Some(op @ (Op::Decision { .. } | Op::EditorApplied { .. })) => {
                        if let Some(value) = answer(op) {
                            return Some(value);
                        }
                    }
                },
                value = &mut work => return Some(value),
            }
        }
    }

    /// Wait for an answer only (nothing else runs meanwhile).
    pub async fn answer<T>(
        &mut self,
        state: WaitState<'_>,
        busy: &str,
        answer: impl FnMut(Op) -> Option<T>,
    ) -> Option<T> {
        self.wait(std::future::pending(), state, busy, answer).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{EditorEditResult, NoteContext};

    fn channels() -> (
        mpsc::Sender<Op>,
        mpsc::Receiver<Op>,
        mpsc::UnboundedSender<AgentEvent>,
        mpsc::UnboundedReceiver<AgentEvent>,
    ) {
        let (op_tx, op_rx) = mpsc::channel(8);
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        (op_tx, op_rx, ev_tx, ev_rx)
    }

    /// An interrupt ends a wait for work that never finishes.
    #[tokio::test]
    async fn interrupt_ends_a_wait_for_work_that_never_ends() {
        let (op_tx, mut ops, events, _ev) = channels();
        let (mut model, mut shutting_down) = ("m".to_string(), false);
        op_tx.send(Op::SetModel("m2".into())).await.ok();
        op_tx.send(Op::Interrupt).await.ok();
        let mut inbox = Inbox {
            ops: &mut ops,
            events: &events,
        };
        let state = WaitState {
            model: &mut model,
            shutting_down: &mut shutting_down,
        };
        let waited: Option<()> = inbox
            .wait(std::future::pending(), state, BUSY, |_| None)
            .await;
        assert_eq!(waited, None);
        assert_eq!(model, "m2");
        assert!(!shutting_down);
    }

    /// Shutdown ends the wait and is remembered; a message meanwhile is told to wait; stale
    /// answers are dropped and the wanted one ends the wait.
    #[tokio::test]
    async fn answers_messages_and_shutdown() {
        let (op_tx, mut ops, events, mut ev) = channels();
        let (mut model, mut shutting_down) = ("m".to_string(), false);
        op_tx
            .send(Op::UserTurn {
                text: "again".into(),
                attachments: vec![],
                context: NoteContext::default(),
            })
            .await
            .ok();
        for id in [1, 2] {
            op_tx
                .send(Op::EditorApplied {
                    id,
                    result: EditorEditResult::Refused("x".into()),
                })
                .await
                .ok();
        }
        let mut inbox = Inbox {
            ops: &mut ops,
            events: &events,
        };
        let state = WaitState {
            model: &mut model,
            shutting_down: &mut shutting_down,
        };
        let got = inbox
            .answer(state, BUSY, |op| match op {
                Op::EditorApplied { id: 2, .. } => Some(2),
                _ => None,
            })
            .await;
        assert_eq!(got, Some(2));
        assert_eq!(ev.try_recv().ok(), Some(AgentEvent::Notice(BUSY.into())));

        op_tx.send(Op::Shutdown).await.ok();
        let state = WaitState {
            model: &mut model,
            shutting_down: &mut shutting_down,
        };
        let waited: Option<()> = inbox.answer(state, BUSY, |_| None).await;
        assert_eq!(waited, None);
        assert!(shutting_down);
    }

    /// Work that finishes ends the wait with its value.
    #[tokio::test]
    async fn finished_work_ends_the_wait() {
        let (_op_tx, mut ops, events, _ev) = channels();
        let (mut model, mut shutting_down) = ("m".to_string(), false);
        let mut inbox = Inbox {
            ops: &mut ops,
            events: &events,
        };
        let state = WaitState {
            model: &mut model,
            shutting_down: &mut shutting_down,
        };
        assert_eq!(
            inbox.wait(async { 7 }, state, BUSY, |_| None).await,
            Some(7)
        );
    }
}
