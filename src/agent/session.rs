//! The session's record in the app database: messages with every content block, usage per
//! response, how each tool call was decided, and the session's title (made from the first
//! message). Reading a stored session back (for the agent, and for the app's transcript) is here
//! too: [`load_conversation`].
//!
//! The log holds no provider or model: the agent's settings hold the model (`/model` changes it
//! mid-session) and pass it in with every row that names one.

use super::CallDecision;
use crate::llm::{Block, Message, Role, Usage};
use crate::store::{NewSession, Store, StoreError, UsageRecord};
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// A session's log. A new session is created in the database when its first turn starts, so
/// starting vaultchat and leaving leaves no empty sessions behind.
pub struct SessionLog {
    /// Behind a mutex because the agent's future must be `Send` and a SQLite connection is not
    /// `Sync`; there is never contention (one agent task per log).
    store: std::sync::Mutex<Store>,
    vault_id: String,
    id: Option<String>,
    history: Vec<Message>,
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

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl SessionLog {
    /// Now, in Unix milliseconds (the store's clock).
    pub fn now() -> i64 {
        now_ms()
    }

    /// A session that does not exist yet.
    pub fn new(store: Store, vault_id: &str) -> Self {
        Self {
            store: std::sync::Mutex::new(store),
            vault_id: vault_id.to_string(),
            id: None,
            history: Vec::new(),
        }
    }

    /// An existing session (by id or a unique id prefix), with its stored history.
    pub fn resume(store: Store, vault_id: &str, id: &str) -> Result<Self, SessionError> {
        let id = store
            .resolve_session_id(id)?
            .ok_or_else(|| SessionError::Unknown(id.to_string()))?;
        let history = load_conversation(&store, &id)?.messages;
        Ok(Self {
            store: std::sync::Mutex::new(store),
            vault_id: vault_id.to_string(),
            id: Some(id),
            history,
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

    /// The stored conversation.
    pub fn history(&self) -> &[Message] {
        &self.history
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
        self.store()
            .append_message(&id, role, &content, &plain_text(message), now_ms())?;
        self.history.push(message.clone());
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
/// before decisions were kept have none), and the tokens it used.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredConversation {
    pub messages: Vec<Message>,
    /// By the model's tool call id.
    pub decisions: HashMap<String, CallDecision>,
    pub usage: Usage,
}

/// Session `id` (an exact id) from the store. A message or decision that cannot be decoded is an
/// error naming it: a damaged session is said, not shown with holes.
pub fn load_conversation(store: &Store, id: &str) -> Result<StoredConversation, SessionError> {
    let mut messages = Vec::new();
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
    Ok(StoredConversation {
        messages,
        decisions,
        usage,
    })
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
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            Block::Image { .. } | Block::ToolUse { .. } | Block::ToolResult { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
