//! The agent's lane: the agent's ops and the commands that become turns, in the order the app
//! sent them, on a task of their own (decisions §71). A command's prompt may take an MCP server
//! up to its timeout (`prompts/get`); only what must follow it waits for it — the agent's later
//! ops — while every other request (a save, a listing) is carried out at once by the host's
//! loop. An interrupt while a prompt is being made cancels the command (the person pressed Esc)
//! and the ops behind it go on; the lane ends with the host (its channel closed, or
//! [`Lane::stop`] at quit), dropping a prompt still on its way.

use super::HostEvent;
use super::commands_link;
use super::core::Core;
use crate::agent::{NoteContext, Op};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// What goes down the lane, in order.
#[derive(Debug)]
pub(super) enum LaneItem {
    /// An op for the running agent.
    Op(Op),
    /// A command to make into a turn (`Request::RunCommand`).
    Command {
        name: String,
        args: String,
        context: NoteContext,
    },
}

/// The lane's sender and its task.
pub(super) struct Lane {
    items: mpsc::UnboundedSender<LaneItem>,
    task: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Lane {
    /// Start the lane's task on the current runtime.
    pub fn start(core: Arc<Core>) -> Lane {
        let (items, received) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(core, received)).abort_handle();
        Lane {
            items,
            task: Mutex::new(Some(task)),
        }
    }

    /// Queue `item` behind what the lane holds.
    pub fn send(&self, item: LaneItem) {
        if self.items.send(item).is_err() {
            tracing::debug!("the agent's lane has ended; an item was dropped");
        }
    }

    /// End the lane now (the app quits): a prompt on its way is dropped, queued ops with it.
    pub fn stop(&self) {
        let task = match self.task.lock() {
            Ok(mut task) => task.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(task) = task {
            task.abort();
        }
    }
}

/// Take the lane's items in order until the host ends.
async fn run(core: Arc<Core>, mut received: mpsc::UnboundedReceiver<LaneItem>) {
    // Items that came while a command's prompt was being made, to be taken before new ones.
    let mut waiting = VecDeque::new();
    loop {
        let item = match waiting.pop_front() {
            Some(item) => item,
            None => match received.recv().await {
                Some(item) => item,
                None => return,
            },
        };
        match item {
            LaneItem::Op(op) => core.agent.send(&core, op).await,
            LaneItem::Command {
                name,
                args,
                context,
            } => {
                let made = make_prompt(&core, &name, args, context, &mut received, &mut waiting);
                match made.await {
                    Made::Turn(op) => core.agent.send(&core, *op).await,
                    Made::Refused(message) => core.tell(HostEvent::CommandRefused(message)),
                    Made::Cancelled => core.tell(HostEvent::CommandCancelled(name)),
                    Made::HostEnded => return,
                }
            }
        }
    }
}

/// How making a command's prompt ended.
enum Made {
    /// The turn to send the agent.
    Turn(Box<Op>),
    /// Why the command cannot run, for the person.
    Refused(String),
    /// An interrupt came first.
    Cancelled,
    /// The host's loop ended (the app is gone).
    HostEnded,
}

/// Make the command's turn while taking what the app sends meanwhile: kept in `waiting`, in
/// order, except that an interrupt cancels the command (it is then passed on in its place,
/// so that it still stops whatever it was sent to stop).
async fn make_prompt(
    core: &Arc<Core>,
    name: &str,
    args: String,
    context: NoteContext,
    received: &mut mpsc::UnboundedReceiver<LaneItem>,
    waiting: &mut VecDeque<LaneItem>,
) -> Made {
    let prepare = commands_link::prepare(core, name.to_string(), args, context);
    tokio::pin!(prepare);
    loop {
        tokio::select! {
            // A prompt that is ready wins over an interrupt that came at the same moment: the
            // interrupt then stops the turn it starts.
            biased;
            made = &mut prepare => {
                return match made {
                    Ok(op) => Made::Turn(Box::new(op)),
                    Err(message) => Made::Refused(message),
                };
            }
            item = received.recv() => match item {
                Some(LaneItem::Op(Op::Interrupt)) => {
                    waiting.push_back(LaneItem::Op(Op::Interrupt));
                    return Made::Cancelled;
                }
                Some(item) => waiting.push_back(item),
                None => return Made::HostEnded,
            },
        }
    }
}
