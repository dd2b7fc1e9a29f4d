//! Which notes changed, told to MCP clients: `notifications/resources/updated` for a note a client
//! subscribed to, `notifications/resources/list_changed` when notes appear or go.
//!
//! The changes come from the watcher that keeps `vaultchat mcp`'s index live
//! ([`crate::index::watch::LiveIndex`]): after each batch is indexed, [`NoteEvents::observe`]
//! compares the batch's notes with what it knew of them (size and modification time) and
//! broadcasts what changed. Each client connection forwards the broadcast to its client: a
//! 2025-era session to its peer, filtered by its `resources/subscribe` set
//! ([`forward_to_session`]); a 2026-era `subscriptions/listen` stream through its sink, which
//! applies the filter the client asked for ([`forward_to_listener`]).

use super::note_uri::{note_rel, note_uri};
use super::resources::{NoteCatalog, NoteStamps};
use crate::vault::watch::VaultChange;
use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionContext, SubscriptionSendError};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

/// What one batch of changes means for clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteEvent {
    /// The note at this URI changed on disk (or went away).
    Updated(String),
    /// Notes appeared or went: the listing is different.
    ListChanged,
}

/// How many events a slow connection may fall behind before it is told the list changed.
const BACKLOG: usize = 1024;

/// How often an idle 2025-era forwarder checks whether its client is still there.
const IDLE_CHECK: Duration = Duration::from_secs(30);

/// The vault's note changes, broadcast to every connection.
pub struct NoteEvents {
    catalog: Arc<NoteCatalog>,
    /// Every listed note as last seen: `resources/list` pages through it, and each batch of
    /// changes is compared with it. Taken at the first need (a listing, a subscription, the
    /// watcher's first reconcile), so start-up does not walk the vault before answering.
    stamps: Mutex<Option<NoteStamps>>,
    sender: broadcast::Sender<NoteEvent>,
}

impl NoteEvents {
    pub fn new(catalog: Arc<NoteCatalog>) -> Arc<Self> {
        let (sender, _) = broadcast::channel(BACKLOG);
        Arc::new(Self {
            catalog,
            stamps: Mutex::new(None),
            sender,
        })
    }

    /// The listing as last seen, taken now if it never was. Blocking (it may walk the vault).
    pub fn listing(&self) -> std::sync::MutexGuard<'_, Option<NoteStamps>> {
        let mut stamps = self.stamps.lock().unwrap_or_else(|p| p.into_inner());
        if stamps.is_none() {
            *stamps = Some(self.catalog.stamps());
        }
        stamps
    }

    /// One page of `resources/list`, from the listing the notifications are about: a client
    /// told `list_changed` lists again and finds the change. Blocking.
    pub fn page(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<rmcp::model::Resource>, Option<String>), rmcp::ErrorData> {
        let listing = self.listing();
        let empty = NoteStamps::new();
        self.catalog
            .page(listing.as_ref().unwrap_or(&empty), cursor)
    }

    pub fn catalog(&self) -> &Arc<NoteCatalog> {
        &self.catalog
    }

    pub fn subscribe(&self) -> broadcast::Receiver<NoteEvent> {
        self.sender.subscribe()
    }

    /// A batch of changes the watcher saw (and the index has taken in): broadcast what it means.
    pub fn observe(&self, change: &VaultChange) {
        let events = {
            let mut guard = self.stamps.lock().unwrap_or_else(|p| p.into_inner());
            // Nobody has listed or subscribed yet: nothing a client knows can be out of date.
            let Some(stamps) = guard.as_mut() else {
                return;
            };
            match change {
                VaultChange::Paths(paths) => {
                    let fresh = paths
                        .iter()
                        .map(|rel| (rel.clone(), self.catalog.stamp(rel)))
                        .collect::<Vec<_>>();
                    apply_paths(stamps, fresh)
                }
                VaultChange::Rescan => {
                    let fresh = self.catalog.stamps();
                    let events = diff(stamps, &fresh);
                    *stamps = fresh;
                    events
                }
            }
        };
        for event in events {
            tracing::debug!(?event, "note change for MCP clients");
            // No receiver: no client is connected, nothing to tell.
            let _ = self.sender.send(event);
        }
    }
}

/// Update `stamps` for the paths of a batch (each with its stamp now, `None` when it is not a
/// listed note now) and say what changed.
fn apply_paths(
    stamps: &mut NoteStamps,
    fresh: Vec<(String, Option<(u64, i64)>)>,
) -> Vec<NoteEvent> {
    let mut events = Vec::new();
    let mut list_changed = false;
    for (rel, now) in fresh {
        let before = stamps.get(&rel).copied();
        match (before, now) {
            (None, None) => {}
            (None, Some(now)) => {
                stamps.insert(rel, now);
                list_changed = true;
            }
            (Some(_), None) => {
                stamps.remove(&rel);
                list_changed = true;
                events.push(NoteEvent::Updated(note_uri(&rel)));
            }
            (Some(before), Some(now)) if before != now => {
                stamps.insert(rel.clone(), now);
                events.push(NoteEvent::Updated(note_uri(&rel)));
            }
            (Some(_), Some(_)) => {}
        }
    }
    if list_changed {
        events.push(NoteEvent::ListChanged);
    }
    events
}

/// What changed between two listings.
fn diff(before: &NoteStamps, after: &NoteStamps) -> Vec<NoteEvent> {
    let mut events: Vec<NoteEvent> = before
        .iter()
        .filter(|(rel, stamp)| after.get(*rel) != Some(stamp))
        .map(|(rel, _)| NoteEvent::Updated(note_uri(rel)))
        .collect();
    if before.len() != after.len() || after.keys().any(|rel| !before.contains_key(rel)) {
        events.push(NoteEvent::ListChanged);
    }
    events
}

/// The notes one 2025-era session subscribed to: the note's canonical URI, and the URI as the
/// client spelled it (notifications carry the client's spelling).
#[derive(Default)]
pub struct SessionSubscriptions {
    uris: Mutex<HashMap<String, String>>,
    forwarding: std::sync::atomic::AtomicBool,
}

impl SessionSubscriptions {
    pub fn add(&self, canonical: String, given: String) {
        self.lock().insert(canonical, given);
    }

    pub fn remove(&self, canonical: &str) {
        self.lock().remove(canonical);
    }

    fn given(&self, canonical: &str) -> Option<String> {
        self.lock().get(canonical).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.uris.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True the first time only: one forwarder per session.
    pub fn start_forwarding(&self) -> bool {
        !self
            .forwarding
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    }
}

/// Forward the broadcast to a 2025-era session until its client is gone: every list change, and
/// updates of the notes it subscribed to.
pub async fn forward_to_session(
    mut events: broadcast::Receiver<NoteEvent>,
    subscriptions: Arc<SessionSubscriptions>,
    peer: Peer<RoleServer>,
) {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = tokio::time::sleep(IDLE_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        let sent = match event {
            Ok(NoteEvent::Updated(uri)) => match subscriptions.given(&uri) {
                Some(given) => {
                    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(given))
                        .await
                }
                None => Ok(()),
            },
            // Fell behind: what changed is lost, but the client can list again.
            Ok(NoteEvent::ListChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                peer.notify_resource_list_changed().await
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "MCP session gone; no more note notifications for it");
            return;
        }
    }
}

/// Forward the broadcast to one 2026-era `subscriptions/listen` stream until it is cancelled.
/// The sink drops what the client did not ask for.
pub async fn forward_to_listener(
    mut events: broadcast::Receiver<NoteEvent>,
    context: SubscriptionContext,
) {
    // The client's spelling of each note URI it listens to, by canonical URI.
    let mut given: HashMap<String, Vec<String>> = HashMap::new();
    for uri in context.accepted().resource_subscriptions.iter().flatten() {
        if let Some(rel) = note_rel(uri) {
            given.entry(note_uri(&rel)).or_default().push(uri.clone());
        }
    }
    let sink = context.sink().clone();
    loop {
        let event = tokio::select! {
            () = context.cancelled() => return,
            event = events.recv() => event,
        };
        let results = match event {
            Ok(NoteEvent::Updated(uri)) => {
                let mut results = Vec::new();
                for uri in given.get(&uri).into_iter().flatten() {
                    results.push(sink.notify_resource_updated(uri.clone()).await);
                }
                results
            }
            Ok(NoteEvent::ListChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                vec![sink.notify_resource_list_changed().await]
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        for result in results {
            match result {
                Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "subscription stream ended");
                    return;
                }
            }
        }
    }
}

/// The note URIs of a requested filter that this server can follow (note-shaped ones).
pub fn followable(uris: Option<&Vec<String>>) -> Vec<String> {
    let mut seen = HashSet::new();
    uris.into_iter()
        .flatten()
        .filter(|uri| note_rel(uri).is_some() && seen.insert(uri.as_str()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamps(entries: &[(&str, u64, i64)]) -> NoteStamps {
        entries
            .iter()
            .map(|(rel, size, mtime)| (rel.to_string(), (*size, *mtime)))
            .collect()
    }

    #[test]
    fn a_batch_of_paths_tells_edits_arrivals_and_departures() {
        let mut known = stamps(&[("a.md", 1, 1), ("b.md", 2, 2), ("c.md", 3, 3)]);
        let events = apply_paths(
            &mut known,
            vec![
                ("a.md".into(), Some((1, 9))),
                ("b.md".into(), Some((2, 2))),
                ("c.md".into(), None),
                ("New note.md".into(), Some((4, 4))),
                ("x.txt".into(), None),
            ],
        );
        assert_eq!(
            events,
            vec![
                NoteEvent::Updated("vault://note/a.md".into()),
                NoteEvent::Updated("vault://note/c.md".into()),
                NoteEvent::ListChanged,
            ]
        );
        assert_eq!(
            known,
            stamps(&[("a.md", 1, 9), ("b.md", 2, 2), ("New note.md", 4, 4)])
        );
        // An edit alone leaves the listing as it was.
        let events = apply_paths(&mut known, vec![("b.md".into(), Some((5, 5)))]);
        assert_eq!(events, vec![NoteEvent::Updated("vault://note/b.md".into())]);
    }

    #[test]
    fn a_rescan_compares_whole_listings() {
        let before = stamps(&[("a.md", 1, 1), ("b.md", 2, 2)]);
        assert_eq!(diff(&before, &before), vec![]);
        let edited = stamps(&[("a.md", 1, 1), ("b.md", 2, 3)]);
        assert_eq!(
            diff(&before, &edited),
            vec![NoteEvent::Updated("vault://note/b.md".into())]
        );
        let renamed = stamps(&[("a.md", 1, 1), ("c.md", 2, 2)]);
        assert_eq!(
            diff(&before, &renamed),
            vec![
                NoteEvent::Updated("vault://note/b.md".into()),
                NoteEvent::ListChanged
            ]
        );
    }

    #[test]
    fn only_note_uris_are_followed() {
        let uris = vec![
            "vault://note/a.md".to_string(),
            "file:///etc/passwd".to_string(),
            "vault://note/a.md".to_string(),
        ];
        assert_eq!(
            followable(Some(&uris)),
            vec!["vault://note/a.md".to_string()]
        );
    }
}
