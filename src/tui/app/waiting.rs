//! What the app is waiting for from the host, shown in the status bar until the answer comes: a
//! note being opened, the picker's list, sessions, usage, a note's history. Each is read on the
//! host's blocking pool, so the loop keeps drawing and taking keys meanwhile; on a slow disk or a
//! big database the person sees that something is on its way rather than nothing.

use super::Effect;
use crate::host::{Asked, HostEvent, Request};

/// One answer the app is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Waiting {
    Note(String),
    Sessions,
    Usage,
    History(String),
}

impl Waiting {
    /// What the effect makes the app wait for, if it is one a person could notice.
    pub(super) fn of(effect: &Effect) -> Option<Waiting> {
        match effect {
            Effect::OpenNote(name, _) | Effect::OpenLink(name, _) => {
                Some(Waiting::Note(name.clone()))
            }
            Effect::Host(Request::ListSessions(_)) => Some(Waiting::Sessions),
            Effect::Host(Request::Usage) => Some(Waiting::Usage),
            Effect::Host(Request::Revisions(path)) => Some(Waiting::History(path.clone())),
            _ => None,
        }
    }

    /// Whether `event` is the answer this waits for: the answer itself, or the host's word that
    /// this request failed ([`HostEvent::Unanswered`] names it). Any other error or notice —
    /// a plugin, a server, a save — leaves the wait as it is.
    pub(super) fn answered_by(&self, event: &HostEvent) -> bool {
        match event {
            HostEvent::Unanswered { asked, .. } => match (self, asked) {
                (Waiting::Note(name), Asked::Note(asked)) => name == asked,
                (Waiting::Sessions, Asked::Sessions) | (Waiting::Usage, Asked::Usage) => true,
                (Waiting::History(path), Asked::History(asked)) => path == asked,
                _ => false,
            },
            HostEvent::NoteOpened { .. } => matches!(self, Waiting::Note(_)),
            HostEvent::Sessions(_) => *self == Waiting::Sessions,
            HostEvent::Usage(_) => *self == Waiting::Usage,
            HostEvent::Revisions { .. } => matches!(self, Waiting::History(_)),
            _ => false,
        }
    }

    /// The status bar's words.
    pub(super) fn label(&self) -> String {
        match self {
            Waiting::Note(name) => format!("opening {}…", crate::quote::terminal(name)),
            Waiting::Sessions => "reading sessions…".into(),
            Waiting::Usage => "reading usage…".into(),
            Waiting::History(path) => {
                format!("reading the history of {}…", crate::quote::terminal(path))
            }
        }
    }
}
