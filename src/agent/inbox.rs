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
    /// A context window that arrived during the turn (`SetContextWindow`): the agent uses it
    /// from the next turn on, as it does a new model.
    pub window: Option<u64>,
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
                    Some(Op::SetContextWindow(tokens)) => self.window = Some(tokens),
                    Some(Op::UserTurn { .. } | Op::CommandTurn { .. }) => self.notice(busy),
                    Some(Op::Compact) => {
                        self.notice("a turn is running; /compact when it has ended");
                    }
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

    /// The channels and agent state of a waiting turn (model "m").
    struct Turn {
        op_tx: mpsc::Sender<Op>,
        ops: mpsc::Receiver<Op>,
        events: mpsc::UnboundedSender<AgentEvent>,
        ev: mpsc::UnboundedReceiver<AgentEvent>,
        model: String,
        shutting_down: bool,
    }

    impl Turn {
        fn new() -> Turn {
            let (op_tx, ops) = mpsc::channel(8);
            let (events, ev) = mpsc::unbounded_channel();
            Turn {
                op_tx,
                ops,
                events,
                ev,
                model: "m".to_string(),
                shutting_down: false,
            }
        }

        /// The inbox and the state for one wait.
        fn wait_parts(&mut self) -> (Inbox<'_>, WaitState<'_>) {
            let inbox = Inbox {
                ops: &mut self.ops,
                events: &self.events,
                window: None,
            };
            let state = WaitState {
                model: &mut self.model,
                shutting_down: &mut self.shutting_down,
            };
            (inbox, state)
        }
    }

    /// An interrupt ends a wait for work that never finishes.
    #[tokio::test]
    async fn interrupt_ends_a_wait_for_work_that_never_ends() {
        let mut turn = Turn::new();
        turn.op_tx.send(Op::SetModel("m2".into())).await.ok();
        turn.op_tx.send(Op::Interrupt).await.ok();
        let (mut inbox, state) = turn.wait_parts();
        let waited: Option<()> = inbox
            .wait(std::future::pending(), state, BUSY, |_| None)
            .await;
        assert_eq!(waited, None);
        assert_eq!(turn.model, "m2");
        assert!(!turn.shutting_down);
    }

    /// Shutdown ends the wait and is remembered; a message meanwhile is told to wait; stale
    /// answers are dropped and the wanted one ends the wait.
    #[tokio::test]
    async fn answers_messages_and_shutdown() {
        let mut turn = Turn::new();
        turn.op_tx
            .send(Op::UserTurn {
                text: "again".into(),
                attachments: vec![],
                context: NoteContext::default(),
            })
            .await
            .ok();
        for id in [1, 2] {
            turn.op_tx
                .send(Op::EditorApplied {
                    id,
                    result: EditorEditResult::Refused("x".into()),
                })
                .await
                .ok();
        }
        let (mut inbox, state) = turn.wait_parts();
        let got = inbox
            .answer(state, BUSY, |op| match op {
                Op::EditorApplied { id: 2, .. } => Some(2),
                _ => None,
            })
            .await;
        assert_eq!(got, Some(2));
        assert_eq!(
            turn.ev.try_recv().ok(),
            Some(AgentEvent::Notice(BUSY.into()))
        );

        turn.op_tx.send(Op::Shutdown).await.ok();
        let (mut inbox, state) = turn.wait_parts();
        let waited: Option<()> = inbox.answer(state, BUSY, |_| None).await;
        assert_eq!(waited, None);
        assert!(turn.shutting_down);
    }

    /// Work that finishes ends the wait with its value.
    #[tokio::test]
    async fn finished_work_ends_the_wait() {
        let mut turn = Turn::new();
        let (mut inbox, state) = turn.wait_parts();
        assert_eq!(
            inbox.wait(async { 7 }, state, BUSY, |_| None).await,
            Some(7)
        );
    }
}
