//! The session's record in the app database: messages with every content block, usage per
//! response, how each tool call was decided, and the session's title (made from the first
//! message). Reading a stored session back (for the agent, and for the app's transcript) is here
//! too: [`load_conversation`].
//!
//! The log holds no provider or model: the agent's settings hold the model (`/model` changes it
//! mid-session) and pass it in with every row that names one.

use super::inbox::Inbox;
use super::{Agent, CallDecision};
use crate::llm::{Block, Message, Role, Usage};
use crate::store::{FailedTurn, NewSession, Store, StoreError, StoredCompaction, UsageRecord};
use crate::time::now_ms;
use std::collections::HashMap;

/// How the older part of a conversation is sent upstream (the stored messages never change):
/// what a session stores of its compaction. Here, beside the log that stores it, so that the
/// log needs nothing of `compact`, which chooses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionState {
    /// Messages `..summarised` (of the stored conversation) are replaced by `summary`.
    pub summarised: usize,
    /// The tool results of messages `..shortened` are shortened.
    pub shortened: usize,
    /// The summary of the replaced messages.
    pub summary: Option<String>,
}

/// A session's log. A new session is created in the database when its first turn starts, so
/// starting vaultchat and leaving leaves no empty sessions behind.
pub struct SessionLog {
    /// Behind a mutex because the agent's future must be `Send` and a SQLite connection is not
    /// `Sync`; there is never contention (one agent task per log).
    store: std::sync::Mutex<Store>,
    vault_id: String,
    id: Option<String>,
    /// Every stored message, failed turns included.
    history: Vec<Message>,
    /// The store's `seq` of each message of `history`.
    seqs: Vec<i64>,
    /// Turns that ended with a provider error: kept, but not sent upstream again.
    failed: Vec<FailedTurn>,
    /// How the older part of the conversation is sent upstream (docs/architecture.md, "Long
    /// sessions").
    compaction: CompactionState,
    /// The session this new one continues, until its summary seeded this one.
    parent: Option<ParentConversation>,
}

/// The conversation of the session a new one continues (`/continue-new`, `ask --continue-new`).
#[derive(Debug, Clone)]
pub struct ParentConversation {
    pub id: String,
    pub messages: Vec<Message>,
    pub state: CompactionState,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("there is no session `{0}`; `vaultchat sessions list` shows the sessions there are")]
    Unknown(String),
    #[error("there is no earlier session for this vault to continue; start one without --continue")]
    NothingToContinue,
    #[error("a message could not be stored ({0})")]
    Encode(String),
    #[error(
        "message {seq} of session {session} cannot be read ({problem}); the session is damaged"
    )]
    Damaged {
        session: String,
        seq: i64,
        problem: String,
    },
    #[error(
        "the decision of tool call {call_id} of session {session} is `{word}`, which vaultchat does not know; the session is damaged"
    )]
    DamagedDecision {
        session: String,
        call_id: String,
        word: String,
    },
}

impl SessionLog {
    /// A session that does not exist yet.
    pub fn new(store: Store, vault_id: &str) -> Self {
        Self {
            store: std::sync::Mutex::new(store),
            vault_id: vault_id.to_string(),
            id: None,
            history: Vec::new(),
            seqs: Vec::new(),
            failed: Vec::new(),
            compaction: CompactionState::default(),
            parent: None,
        }
    }

    /// A new session that continues session `parent` (by id or a unique id prefix): linked to it
    /// when created, and seeded with the summary of its conversation on the first turn.
    pub fn continuing(store: Store, vault_id: &str, parent: &str) -> Result<Self, SessionError> {
        let id = store
            .resolve_vault_session_id(vault_id, parent)?
            .ok_or_else(|| SessionError::Unknown(parent.to_string()))?;
        // As it was sent upstream: a failed turn of the parent is not summarised either.
        let messages = load_conversation(&store, &id)?.upstream_messages();
        let state = stored_state(&store, &id)?;
        let mut log = Self::new(store, vault_id);
        log.parent = Some(ParentConversation {
            id,
            messages,
            state,
        });
        Ok(log)
    }

    /// A new session that continues the vault's most recent one.
    pub fn continuing_latest(store: Store, vault_id: &str) -> Result<Self, SessionError> {
        let id = store
            .latest_session(vault_id)?
            .ok_or(SessionError::NothingToContinue)?;
        Self::continuing(store, vault_id, &id)
    }

    /// The session this one continues, once: the agent seeds the new session from it.
    pub fn take_parent(&mut self) -> Option<ParentConversation> {
        self.parent.take()
    }

    /// The compaction in force.
    pub fn compaction(&self) -> &CompactionState {
        &self.compaction
    }

    /// Store a compaction of the session (`reason`: threshold, overflow, command, continue_new).
    pub fn record_compaction(
        &mut self,
        state: &CompactionState,
        reason: &str,
    ) -> Result<(), StoreError> {
        if let Some(id) = &self.id {
            let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
            self.store().record_compaction(
                id,
                &StoredCompaction {
                    at_ms: now_ms(),
                    reason: reason.to_string(),
                    summarised: count(state.summarised),
                    shortened: count(state.shortened),
                    summary: state.summary.clone(),
                },
            )?;
        }
        self.compaction = state.clone();
        Ok(())
    }

    /// An existing session of this vault (by id or a unique id prefix), with its stored history;
    /// a session of another vault is refused (`StoreError::SessionOfAnotherVault`).
    pub fn resume(store: Store, vault_id: &str, id: &str) -> Result<Self, SessionError> {
        let id = store
            .resolve_vault_session_id(vault_id, id)?
            .ok_or_else(|| SessionError::Unknown(id.to_string()))?;
        let stored = load_conversation(&store, &id)?;
        let compaction = stored_state(&store, &id)?;
        Ok(Self {
            store: std::sync::Mutex::new(store),
            vault_id: vault_id.to_string(),
            id: Some(id),
            history: stored.messages,
            seqs: stored.seqs,
            failed: stored.failed_turns,
            compaction,
            parent: None,
        })
    }

    /// The vault's most recent session.
    pub fn continue_latest(store: Store, vault_id: &str) -> Result<Self, SessionError> {
        let id = store
            .latest_session(vault_id)?
            .ok_or(SessionError::NothingToContinue)?;
        Self::resume(store, vault_id, &id)
    }

    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The stored conversation, failed turns included (what the transcript shows).
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The stored conversation as it is sent upstream: without the failed turns.
    pub fn upstream_history(&self) -> Vec<Message> {
        upstream(&self.history, &self.seqs, &self.failed)
    }

    /// The messages stored from position `from` of [`SessionLog::history`] on are a turn that
    /// ended with `error` from the provider: keep them, but leave them out of every later request
    /// (a resumed session reads the mark from the store). Nothing to mark is not an error.
    pub fn mark_failed_turn(&mut self, from: usize, error: &str) -> Result<(), StoreError> {
        let (Some(id), Some(&first_seq), Some(&last_seq)) =
            (self.id.clone(), self.seqs.get(from), self.seqs.last())
        else {
            return Ok(());
        };
        let turn = FailedTurn {
            first_seq,
            last_seq,
            error: error.to_string(),
        };
        // Kept out of what is sent even when the store cannot record it: the mark in memory is
        // what the rest of this session's requests are built from.
        self.failed.push(turn.clone());
        self.store().record_failed_turn(&id, &turn, now_ms())?;
        Ok(())
    }

    pub fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn vault_id(&self) -> &str {
        &self.vault_id
    }

    /// The session id, creating the session (titled after `first_text`, started with `model` of
    /// `provider`) if needed.
    pub fn ensure(
        &mut self,
        first_text: &str,
        provider: &str,
        model: &str,
    ) -> Result<String, StoreError> {
        if let Some(id) = &self.id {
            return Ok(id.clone());
        }
        let store = self.store();
        let id = store.create_session(&NewSession {
            vault_id: &self.vault_id,
            provider,
            model,
            now_ms: now_ms(),
        })?;
        store.set_session_title(&id, &title_of(first_text))?;
        if let Some(parent) = &self.parent {
            store.set_session_parent(&id, &parent.id)?;
        }
        drop(store);
        self.id = Some(id.clone());
        Ok(id)
    }

    /// Store one message of the conversation.
    pub fn append(&mut self, message: &Message) -> Result<(), SessionError> {
        let Some(id) = self.id.clone() else {
            return Ok(());
        };
        let content = serde_json::to_string(&message.content)
            .map_err(|e| SessionError::Encode(e.to_string()))?;
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let seq =
            self.store()
                .append_message(&id, role, &content, &plain_text(message), now_ms())?;
        self.history.push(message.clone());
        self.seqs.push(seq);
        Ok(())
    }

    /// Store one response's usage, billed to `model` of `provider` (the model that answered).
    pub fn record_usage(
        &self,
        usage: &Usage,
        provider: &str,
        model: &str,
    ) -> Result<(), StoreError> {
        let Some(id) = &self.id else {
            return Ok(());
        };
        self.store().record_usage(&UsageRecord {
            session_id: id,
            at_ms: now_ms(),
            provider,
            model,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_input_tokens,
            cache_write_tokens: usage.cache_creation_input_tokens,
            estimated: usage.estimated,
        })
    }
}

impl SessionLog {
    /// Store how tool call `call_id` was let through or stopped.
    pub fn record_decision(&self, call_id: &str, decision: CallDecision) -> Result<(), StoreError> {
        let Some(id) = &self.id else {
            return Ok(());
        };
        self.store()
            .record_tool_decision(id, call_id, decision.as_str())
    }
}

/// A stored session read back: the conversation, how each tool call was decided (calls stored
/// before decisions were kept have none), the turns that failed, and the tokens it used.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredConversation {
    pub messages: Vec<Message>,
    /// The store's `seq` of each message (what [`FailedTurn`] ranges count in).
    pub seqs: Vec<i64>,
    /// Turns that ended with a provider error, in order: shown, but not sent upstream again.
    pub failed_turns: Vec<FailedTurn>,
    /// By the model's tool call id.
    pub decisions: HashMap<String, CallDecision>,
    pub usage: Usage,
    /// The summaries made of it, oldest first, each with the number of messages it replaces
    /// upstream (0: made when the session began, from the session it continues).
    pub summaries: Vec<(usize, String)>,
}

/// Session `id` (an exact id) from the store. A message or decision that cannot be decoded is an
/// error naming it: a damaged session is said, not shown with holes.
pub fn load_conversation(store: &Store, id: &str) -> Result<StoredConversation, SessionError> {
    let mut messages = Vec::new();
    let mut seqs = Vec::new();
    for stored in store.session_messages(id)? {
        let content: Vec<Block> =
            serde_json::from_str(&stored.content_json).map_err(|e| SessionError::Damaged {
                session: id.to_string(),
                seq: stored.seq,
                problem: e.to_string(),
            })?;
        let role = match stored.role.as_str() {
            "assistant" => Role::Assistant,
            _ => Role::User,
        };
        messages.push(Message { role, content });
        seqs.push(stored.seq);
    }
    let mut decisions = HashMap::new();
    for (call_id, word) in store.tool_decisions(id)? {
        let decision = CallDecision::parse(&word).ok_or_else(|| SessionError::DamagedDecision {
            session: id.to_string(),
            call_id: call_id.clone(),
            word: word.clone(),
        })?;
        decisions.insert(call_id, decision);
    }
    let usage = store
        .session(id)?
        .map(|s| Usage {
            input_tokens: s.usage.input_tokens,
            output_tokens: s.usage.output_tokens,
            cache_read_input_tokens: s.usage.cache_read_tokens,
            cache_creation_input_tokens: s.usage.cache_write_tokens,
            estimated: s.usage.is_estimated(),
        })
        .unwrap_or_default();
    let mut summaries: Vec<(usize, String)> = Vec::new();
    for compaction in store.compactions(id)? {
        let Some(summary) = compaction.summary else {
            continue;
        };
        let replaced = usize::try_from(compaction.summarised).unwrap_or(usize::MAX);
        // Later shortening keeps the summary in force; it is one summary, shown once.
        if summaries.last().is_none_or(|(_, last)| *last != summary) {
            summaries.push((replaced, summary));
        }
    }
    Ok(StoredConversation {
        messages,
        seqs,
        failed_turns: store.failed_turns(id)?,
        decisions,
        usage,
        summaries,
    })
}

impl StoredConversation {
    /// The conversation as it is sent upstream: without the failed turns.
    pub fn upstream_messages(&self) -> Vec<Message> {
        upstream(&self.messages, &self.seqs, &self.failed_turns)
    }
}

/// `messages` (with their `seqs`) without those inside a failed turn.
fn upstream(messages: &[Message], seqs: &[i64], failed: &[FailedTurn]) -> Vec<Message> {
    messages
        .iter()
        .zip(seqs)
        .filter(|(_, seq)| {
            !failed
                .iter()
                .any(|turn| (turn.first_seq..=turn.last_seq).contains(*seq))
        })
        .map(|(message, _)| message.clone())
        .collect()
}

/// The compaction in force for session `id` as the agent uses it.
fn stored_state(store: &Store, id: &str) -> Result<CompactionState, StoreError> {
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(store
        .latest_compaction(id)?
        .map(|c| CompactionState {
            summarised: count(c.summarised),
            shortened: count(c.shortened),
            summary: c.summary,
        })
        .unwrap_or_default())
}

/// A session title: the first line of the first message, at most 60 characters.
fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

/// The text of a message's text blocks, for full-text search over past sessions.
fn plain_text(message: &Message) -> String {
    message
        .content
        .iter()
        .filter_map(Block::text)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Agent {
    /// A write to the session's record failed: logged every time, shown to the person once per
    /// session (the turn goes on; the stored session misses it).
    pub(super) fn unrecorded(
        &mut self,
        what: &str,
        error: &dyn std::fmt::Display,
        inbox: &Inbox<'_>,
    ) {
        tracing::warn!("{what} was not stored: {error}");
        if !self.told_unrecorded {
            self.told_unrecorded = true;
            inbox.notice(format!(
                "{what} could not be stored ({error}); the session's record may be incomplete"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::test_store as store;

    /// Decisions are stored per call and read back with the conversation.
    #[test]
    fn decisions_round_trip_with_the_conversation() -> Result<(), SessionError> {
        let (_dir, store) = store();
        let mut log = SessionLog::new(store, "v");
        let id = log.ensure("hello", "anthropic", "m")?;
        log.append(&Message {
            role: Role::User,
            content: vec![Block::Text {
                text: "hello".into(),
            }],
        })?;
        log.record_decision("c1", CallDecision::ApprovedSession)?;
        log.record_decision("c2", CallDecision::Refused)?;
        let loaded = load_conversation(&log.store(), &id)?;
        assert_eq!(loaded.messages, log.history());
        assert_eq!(loaded.decisions["c1"], CallDecision::ApprovedSession);
        assert_eq!(loaded.decisions["c2"], CallDecision::Refused);
        Ok(())
    }

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    /// A failed turn stays in the transcript, leaves the upstream history, and a resumed session
    /// reads it so.
    #[test]
    fn a_failed_turn_is_kept_but_not_sent_upstream() -> Result<(), SessionError> {
        let (dir, store) = store();
        let mut log = SessionLog::new(store, "v");
        let id = log.ensure("hello", "openai", "m")?;
        log.append(&text(Role::User, "hello"))?;
        log.append(&text(Role::Assistant, "hi"))?;
        let turn_start = log.history().len();
        log.append(&text(Role::User, "summarise [[Plan]]"))?;
        log.mark_failed_turn(turn_start, "the provider sent an empty stream")?;
        log.append(&text(Role::User, "and now?"))?;
        let expected = vec![
            text(Role::User, "hello"),
            text(Role::Assistant, "hi"),
            text(Role::User, "and now?"),
        ];
        assert_eq!(log.history().len(), 4);
        assert_eq!(log.upstream_history(), expected);

        let resumed = SessionLog::resume(
            crate::store::Store::open(&dir.path().join("app.db"))?,
            "v",
            &id,
        )?;
        assert_eq!(resumed.history().len(), 4);
        assert_eq!(resumed.upstream_history(), expected);
        let loaded = load_conversation(&resumed.store(), &id)?;
        assert_eq!(loaded.failed_turns.len(), 1);
        assert_eq!(
            loaded.failed_turns[0].error,
            "the provider sent an empty stream"
        );
        assert_eq!(loaded.upstream_messages(), expected);
        // Nothing recorded since `from`: nothing to mark.
        let mut log = resumed;
        log.mark_failed_turn(4, "x")?;
        assert_eq!(load_conversation(&log.store(), &id)?.failed_turns.len(), 1);
        Ok(())
    }

    /// A decision word the agent never writes is damage, said as such.
    #[test]
    fn an_unknown_decision_is_damage() -> Result<(), SessionError> {
        let (_dir, store) = store();
        let mut log = SessionLog::new(store, "v");
        let id = log.ensure("hello", "anthropic", "m")?;
        log.store().record_tool_decision(&id, "c1", "perhaps")?;
        let loaded = load_conversation(&log.store(), &id);
        assert!(
            matches!(&loaded, Err(SessionError::DamagedDecision { word, .. }) if word == "perhaps"),
            "{loaded:?}"
        );
        Ok(())
    }

    #[test]
    fn titles_come_from_the_first_line() {
        assert_eq!(
            title_of("\n  Summarise my week\nplease"),
            "Summarise my week"
        );
        let long = "x".repeat(80);
        assert_eq!(title_of(&long).chars().count(), 61);
        assert!(title_of(&long).ends_with('…'));
    }
}
