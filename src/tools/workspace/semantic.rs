//! semantic_search_notes: meaning-based search over the vault's notes, cut at their headings.

use super::{Workspace, internal};
use crate::index::embeddings::{HttpEmbedder, embed_pending};
use crate::tools::{
    Annotations, BoxFuture, Tier, Tool, ToolError, ToolOutput, ToolSpec, parse_args, schema_of,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SemanticArgs {
    /// What to look for, in natural language ("how do I roll back a deploy?").
    query: String,
    /// How many results, 1 to 50 (default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u32>,
    /// How close a match must be: `strict` (cosine ≥ 0.5), `balanced` (≥ 0.3, the default) or
    /// `broad` (≥ 0.1).
    #[serde(default)]
    relevance: Option<Relevance>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Relevance {
    Strict,
    Balanced,
    Broad,
}

impl Relevance {
    fn min_score(self) -> f64 {
        match self {
            Relevance::Strict => 0.5,
            Relevance::Balanced => 0.3,
            Relevance::Broad => 0.1,
        }
    }
}

struct SemanticSearch {
    spec: ToolSpec,
    workspace: Arc<Workspace>,
}

pub(super) fn tool(workspace: &Arc<Workspace>) -> Arc<dyn Tool> {
    Arc::new(SemanticSearch {
        spec: ToolSpec {
            name: "semantic_search_notes".into(),
            title: "Search notes by meaning".into(),
            description: "Find the note sections closest in meaning to a natural-language query, even \
                without shared words. Results name the note, the heading of the section, the section's \
                text and a cosine score. Uses the embeddings endpoint configured in [embeddings]; \
                without one it answers with keyword results and `\"mode\": \"keyword\"`. For exact \
                words, phrases, tags or folders use search_notes."
                .into(),
            input_schema: schema_of::<SemanticArgs>(),
            annotations: Annotations::READ_ONLY,
            tier: Tier::Workspace,
        },
        workspace: Arc::clone(workspace),
    })
}

impl Tool for SemanticSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: SemanticArgs = parse_args(&self.spec.name, args)?;
            let limit = args.limit.unwrap_or(8);
            if !(1..=50).contains(&limit) {
                return Err(ToolError::Invalid(format!(
                    "`limit` must be between 1 and 50, not {limit}"
                )));
            }
            let query = args.query.trim();
            if query.is_empty() {
                return Err(ToolError::Invalid("`query` is empty".into()));
            }
            let ws = &self.workspace;
            let Some(config) = &ws.embeddings else {
                let results = ws
                    .index()
                    .search_fresh(query, limit as usize)
                    .map_err(internal)?;
                return ToolOutput::json(json!({
                    "mode": "keyword",
                    "note": "no [embeddings] endpoint is configured, so these are keyword results",
                    "results": results.results,
                }));
            };
            let embedder = HttpEmbedder::new(config, ws.local_only).map_err(internal)?;
            // Bring the vectors up to date with the notes (only changed pieces are sent).
            let embedded = embed_pending(&ws.index, &embedder, &mut |_, _| {})
                .await
                .map_err(internal)?;
            let query_vector = embedder
                .embed(&[query.to_string()])
                .await
                .map_err(internal)?
                .pop()
                .unwrap_or_default();
            let min_score = args.relevance.unwrap_or(Relevance::Balanced).min_score();
            let hits = ws
                .index()
                .semantic_search(&query_vector, limit as usize, min_score)
                .map_err(internal)?;
            ToolOutput::json(json!({
                "mode": "semantic",
                "model": embedder.model(),
                "newly_embedded_chunks": embedded,
                "results": hits,
            }))
        })
    }
}
