//! The MCP server's resources, prompts and completions: the request handlers behind
//! [`super::server::VaultServer`]'s `resources/*`, `prompts/*`, `completion/complete` and
//! `subscriptions/listen`. The tools are served by `server.rs` itself; nothing here touches them.

use super::note_events::{NoteEvents, followable, forward_to_listener, forward_to_session};
use super::note_uri::{NOTE_URI_TEMPLATE, note_uri};
use super::prompts;
use super::server::VaultServer;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceResult, Reference, ResourceTemplate, ServerCapabilities, SubscriptionFilter,
};
use rmcp::service::{Peer, SubscriptionContext};
use std::sync::Arc;

/// Adds what the notes bring to the server's capabilities: resources (with subscriptions and
/// list changes), prompts and argument completion.
pub fn add_note_capabilities(capabilities: &mut ServerCapabilities) {
    let notes = ServerCapabilities::builder()
        .enable_completions()
        .enable_prompts()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_resources_list_changed()
        .build();
    capabilities.completions = notes.completions;
    capabilities.prompts = notes.prompts;
    capabilities.resources = notes.resources;
}

fn not_served(what: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("this server does not serve {what}"),
        None,
    )
}

impl VaultServer {
    fn note_events(&self, what: &str) -> Result<&Arc<NoteEvents>, McpError> {
        self.notes.as_ref().ok_or_else(|| not_served(what))
    }

    pub(super) async fn notes_list(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, McpError> {
        let events = Arc::clone(self.note_events("resources")?);
        let cursor = request.and_then(|r| r.cursor);
        let (resources, next) = prompts::blocking(move || events.page(cursor.as_deref())).await?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    pub(super) fn notes_templates(&self) -> Result<ListResourceTemplatesResult, McpError> {
        self.note_events("resources")?;
        let template = ResourceTemplate::new(NOTE_URI_TEMPLATE, "note")
            .with_title("Note by path")
            .with_description(
                "A note of the vault by its vault-relative path, e.g. Projects/Plan.md",
            )
            .with_mime_type(super::resources::MARKDOWN);
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    pub(super) async fn notes_read(&self, uri: String) -> Result<ReadResourceResult, McpError> {
        let catalog = Arc::clone(self.note_events("resources")?.catalog());
        prompts::blocking(move || catalog.read(&uri)).await
    }

    /// 2025-era `resources/subscribe`: remember the note for this session and make sure its
    /// notifications are forwarded.
    pub(super) async fn notes_subscribe(
        &self,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), McpError> {
        let events = Arc::clone(self.note_events("resources")?);
        let given = uri.clone();
        let rel = prompts::blocking(move || {
            // From here on, changes to the note are noticed.
            drop(events.listing());
            events.catalog().checked_rel(&given)
        })
        .await?;
        self.session.add(note_uri(&rel), uri);
        self.forward_to(peer);
        Ok(())
    }

    pub(super) fn notes_unsubscribe(&self, uri: &str) -> Result<(), McpError> {
        self.note_events("resources")?;
        // A note that has gone can still be unsubscribed from: the URI alone says which.
        let rel = super::note_uri::note_rel(uri)
            .ok_or_else(|| McpError::invalid_params(format!("`{uri}` is not a note URI"), None))?;
        self.session.remove(&note_uri(&rel));
        Ok(())
    }

    /// Start forwarding note changes to a 2025-era session (once per session).
    pub(super) fn forward_to(&self, peer: Peer<RoleServer>) {
        let Some(events) = &self.notes else {
            return;
        };
        if self.session.start_forwarding() {
            tokio::spawn(forward_to_session(
                events.subscribe(),
                Arc::clone(&self.session),
                peer,
            ));
        }
    }

    /// 2026-era `subscriptions/listen`: list changes, and updates of note URIs.
    pub(super) fn notes_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.notes.as_ref()?;
        let mut accepted = SubscriptionFilter::builder().resources_list_changed();
        let uris = followable(requested.resource_subscriptions.as_ref());
        if !uris.is_empty() {
            accepted = accepted.resource_subscriptions(uris);
        }
        Some(accepted.build())
    }

    pub(super) async fn notes_listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        match &self.notes {
            Some(events) => forward_to_listener(events.subscribe(), context).await,
            None => context.cancelled().await,
        }
        Ok(())
    }

    pub(super) fn notes_prompts(&self) -> Result<ListPromptsResult, McpError> {
        self.note_events("prompts")?;
        Ok(ListPromptsResult::with_all_items(prompts::prompts()))
    }

    pub(super) async fn notes_prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, McpError> {
        let catalog = Arc::clone(self.note_events("prompts")?.catalog());
        prompts::get(
            catalog,
            &self.registry,
            &request.name,
            request.arguments.as_ref(),
        )
        .await
    }

    pub(super) async fn notes_complete(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        let catalog = Arc::clone(self.note_events("completions")?.catalog());
        let argument = match &request.r#ref {
            Reference::Prompt(_) => request.argument.name.clone(),
            // The one template takes the note's path.
            Reference::Resource(r) if r.uri == NOTE_URI_TEMPLATE => "path".to_string(),
            _ => String::new(),
        };
        let typed = request.argument.value.clone();
        let completion =
            prompts::blocking(move || prompts::complete(&catalog, &argument, &typed)).await?;
        Ok(CompleteResult::new(completion))
    }
}
