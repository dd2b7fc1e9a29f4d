//! Semantic search: notes cut at their headings, each piece embedded by an OpenAI-compatible
//! `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp, vLLM…), vectors kept in the index
//! database, queries answered by brute-force cosine similarity (fast enough up to ~100k pieces:
//! docs/benchmarks.md §6).
//!
//! Embedding is incremental: a note is re-cut only when its content hash differs from the one its
//! pieces were made from, and only pieces whose text changed are sent to the endpoint again.

use super::{Index, IndexError};
use crate::config::EmbeddingsConfig;
use crate::config::http;
use crate::vault::markdown;
use crate::vault::note_io::content_hash;
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

/// Longest piece sent for embedding, in characters; longer sections are cut at paragraphs.
const MAX_CHUNK_CHARS: usize = 2000;

/// One piece of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub heading: Option<String>,
    pub text: String,
}

/// Cut a note at every heading (after its frontmatter); long sections are cut again at blank
/// lines so no piece exceeds [`MAX_CHUNK_CHARS`]. Empty pieces are dropped.
pub fn chunk_note(text: &str) -> Vec<Chunk> {
    let parsed = markdown::parse(text);
    let body_start = parsed.body_start.min(text.len());
    let mut starts: Vec<(usize, Option<String>)> = vec![(body_start, None)];
    for h in &parsed.headings {
        if h.span.start >= body_start {
            starts.push((h.span.start, Some(h.text.clone())));
        }
    }
    let mut out = Vec::new();
    for (i, (start, heading)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |(s, _)| *s);
        let piece = text.get(*start..end).unwrap_or_default().trim();
        if piece.is_empty() {
            continue;
        }
        let mut current = String::new();
        for paragraph in piece.split("\n\n") {
            if !current.is_empty()
                && current.chars().count() + paragraph.chars().count() > MAX_CHUNK_CHARS
            {
                out.push(Chunk {
                    heading: heading.clone(),
                    text: std::mem::take(&mut current),
                });
            }
            if !current.is_empty() {
                current.push_str("\n\n");
            }
            current.extend(paragraph.chars().take(MAX_CHUNK_CHARS));
        }
        if !current.trim().is_empty() {
            out.push(Chunk {
                heading: heading.clone(),
                text: current,
            });
        }
    }
    out
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embeddings endpoint {url} could not be reached: {message}")]
    Unreachable { url: String, message: String },
    #[error("the embeddings endpoint {url} answered {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("the embeddings endpoint {url} sent an answer vaultchat cannot read: {message}")]
    BadAnswer { url: String, message: String },
    #[error("the environment variable {0} (embeddings.api_key_env) is not set")]
    MissingKey(String),
    #[error("[privacy] local_only is on and the embeddings endpoint is refused: {0}")]
    NotLocal(crate::config::locality::LocalityError),
    /// A redirect, never followed (`config::http`).
    #[error("{0}")]
    Redirected(crate::config::http::RedirectRefused),
}

/// A client for an OpenAI-compatible `/embeddings` endpoint.
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    /// `[privacy] local_only`, for what a refused redirect says.
    local_only: bool,
}

impl HttpEmbedder {
    /// `base_url` ends in `/v1` as the OpenAI SDKs expect; `/embeddings` is appended. With
    /// `local_only` (`[privacy]`), a server that is not on this machine or a private network is
    /// refused, and the client is pinned to the addresses checked.
    pub fn new(config: &EmbeddingsConfig, local_only: bool) -> Result<Self, EmbedError> {
        let api_key = match &config.api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| EmbedError::MissingKey(var.clone()))?),
            None => None,
        };
        let pinned = if local_only {
            Some(
                crate::config::locality::local_host(&config.base_url)
                    .map_err(EmbedError::NotLocal)?,
            )
        } else {
            None
        };
        let client = http::client(http::ClientOptions {
            connect_timeout: std::time::Duration::from_secs(5),
            timeout: Some(std::time::Duration::from_secs(120)),
            pinned: pinned.as_ref(),
        })
        .map_err(|e| EmbedError::Unreachable {
            url: config.base_url.clone(),
            message: e.to_string(),
        })?;
        Ok(Self {
            client,
            url: format!("{}/embeddings", config.base_url.trim_end_matches('/')),
            model: config.model.clone(),
            api_key,
            local_only,
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Embed `inputs` (one vector each, in order), L2-normalised.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut request = self
            .client
            .post(&self.url)
            .json(&serde_json::json!({"model": self.model, "input": inputs}));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| EmbedError::Unreachable {
            url: self.url.clone(),
            message: e.to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        if http::is_redirect(&response) {
            return Err(EmbedError::Redirected(http::refusal(
                &response,
                http::Server::Embeddings,
                self.local_only,
            )));
        }
        let status = response.status();
        let body = response.text().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(EmbedError::Status {
                url: self.url.clone(),
                status: status.as_u16(),
                body: body.chars().take(300).collect(),
            });
        }
        let bad = |message: String| EmbedError::BadAnswer {
            url: self.url.clone(),
            message,
        };
        #[derive(serde::Deserialize)]
        struct Item {
            index: Option<usize>,
            embedding: Vec<f32>,
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            data: Vec<Item>,
        }
        let answer: Answer = serde_json::from_str(&body).map_err(|e| bad(e.to_string()))?;
        if answer.data.len() != inputs.len() {
            return Err(bad(format!(
                "{} vectors for {} inputs",
                answer.data.len(),
                inputs.len()
            )));
        }
        let mut vectors = vec![Vec::new(); inputs.len()];
        for (i, item) in answer.data.into_iter().enumerate() {
            let slot = item.index.unwrap_or(i);
            let target = vectors
                .get_mut(slot)
                .ok_or_else(|| bad(format!("index {slot} out of range")))?;
            *target = normalise(item.embedding);
        }
        Ok(vectors)
    }
}

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// A piece that needs a vector.
#[derive(Debug, Clone)]
pub struct PendingChunk {
    pub note_id: i64,
    pub ord: i64,
    pub heading: Option<String>,
    pub text: String,
    pub hash: u64,
}

/// The work an embedding pass has to do.
#[derive(Debug, Default)]
pub struct EmbedPlan {
    /// Notes whose pieces are being refreshed, with the content hash they will then match.
    notes: Vec<(i64, i64)>,
    /// Pieces kept as they are (same text, same position), by note.
    keep: HashMap<i64, Vec<(i64, u64)>>,
    pub pending: Vec<PendingChunk>,
}

/// One semantic search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SemanticHit {
    pub path: String,
    pub title: String,
    pub heading: Option<String>,
    pub text: String,
    pub score: f64,
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Index {
    /// What must be embedded for the index to be current with `model`. A different model than
    /// the one the stored vectors came from starts over (vectors of two models do not compare).
    pub fn embed_plan(&mut self, model: &str) -> Result<EmbedPlan, IndexError> {
        let stored_model: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'embedding_model'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if stored_model.as_deref() != Some(model) {
            self.conn
                .execute_batch("DELETE FROM chunks; UPDATE notes SET chunked_hash = NULL;")?;
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?1)",
                [model],
            )?;
        }
        let stale: Vec<(i64, String, i64)> = {
            let mut stmt = self.conn.prepare(
                "SELECT id, path, hash FROM notes WHERE chunked_hash IS NULL OR chunked_hash != hash",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut plan = EmbedPlan::default();
        let mut existing = self
            .conn
            .prepare_cached("SELECT ord, hash FROM chunks WHERE note_id = ?1")?;
        for (note_id, path, hash) in stale {
            // A note that cannot be read now is left for the next pass.
            // Through the vault root's handle, never through a link that appeared since the sync.
            let Ok(bytes) = self.handle.read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let have: HashMap<i64, u64> = existing
                .query_map([note_id], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64))
                })?
                .collect::<Result<_, _>>()?;
            let mut keep = Vec::new();
            for (ord, chunk) in chunk_note(&text).into_iter().enumerate() {
                let ord = ord as i64;
                let chunk_hash = content_hash(chunk.text.as_bytes());
                if have.get(&ord) == Some(&chunk_hash) {
                    keep.push((ord, chunk_hash));
                } else {
                    plan.pending.push(PendingChunk {
                        note_id,
                        ord,
                        heading: chunk.heading,
                        text: chunk.text,
                        hash: chunk_hash,
                    });
                }
            }
            plan.keep.insert(note_id, keep);
            plan.notes.push((note_id, hash));
        }
        Ok(plan)
    }

    /// Store the vectors of a plan's pending pieces (in order) and drop pieces that no longer exist.
    pub fn apply_embeddings(
        &mut self,
        plan: &EmbedPlan,
        vectors: &[Vec<f32>],
    ) -> Result<(), IndexError> {
        let tx = self.conn.transaction()?;
        for (note_id, note_hash) in &plan.notes {
            let keep = plan.keep.get(note_id).cloned().unwrap_or_default();
            let placeholders = keep
                .iter()
                .map(|(ord, _)| ord.to_string())
                .collect::<Vec<_>>()
                .join(",");
            tx.execute(
                &format!("DELETE FROM chunks WHERE note_id = ?1 AND ord NOT IN ({placeholders})"),
                [note_id],
            )?;
            tx.execute(
                "UPDATE notes SET chunked_hash = ?2 WHERE id = ?1",
                params![note_id, note_hash],
            )?;
        }
        let mut insert = tx.prepare_cached(
            "INSERT INTO chunks (note_id, ord, heading, text, hash, vector) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (chunk, vector) in plan.pending.iter().zip(vectors) {
            insert.execute(params![
                chunk.note_id,
                chunk.ord,
                chunk.heading,
                chunk.text,
                chunk.hash as i64,
                to_blob(vector)
            ])?;
        }
        drop(insert);
        tx.commit()?;
        Ok(())
    }

    /// The `limit` pieces most similar to `query` (an L2-normalised vector) with a cosine score
    /// of at least `min_score`, best first.
    pub fn semantic_search(
        &self,
        query: &[f32],
        limit: usize,
        min_score: f64,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.vector, n.path, n.title, c.heading, c.text FROM chunks c JOIN notes n ON n.id = c.note_id",
        )?;
        let mut scored: Vec<SemanticHit> = Vec::new();
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let blob: Vec<u8> = row.get(0)?;
            let vector = from_blob(&blob);
            if vector.len() != query.len() {
                continue;
            }
            let score = f64::from(vector.iter().zip(query).map(|(a, b)| a * b).sum::<f32>());
            if score < min_score {
                continue;
            }
            scored.push(SemanticHit {
                path: row.get(1)?,
                title: row.get(2)?,
                heading: row.get(3)?,
                text: row.get(4)?,
                score,
            });
        }
        scored.sort_by(|a, b| b.score.total_cmp(&a.score));
        scored.truncate(limit);
        Ok(scored)
    }

    /// How many pieces have vectors.
    pub fn embedded_chunks(&self) -> Result<u64, IndexError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// Bring the vectors up to date: plan, embed in batches (calling `progress(done, total)`), store.
pub async fn embed_pending(
    index: &std::sync::Mutex<Index>,
    embedder: &HttpEmbedder,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<usize, EmbedPassError> {
    const BATCH: usize = 32;
    let plan = {
        let mut guard = index.lock().unwrap_or_else(|p| p.into_inner());
        guard.embed_plan(embedder.model())?
    };
    let total = plan.pending.len();
    let mut vectors = Vec::with_capacity(total);
    for batch in plan.pending.chunks(BATCH) {
        let texts: Vec<String> = batch
            .iter()
            .map(|c| match &c.heading {
                Some(h) if !c.text.starts_with('#') => format!("{h}\n{}", c.text),
                _ => c.text.clone(),
            })
            .collect();
        vectors.extend(embedder.embed(&texts).await?);
        progress(vectors.len(), total);
    }
    let mut guard = index.lock().unwrap_or_else(|p| p.into_inner());
    guard.apply_embeddings(&plan, &vectors)?;
    Ok(total)
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedPassError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Index(#[from] IndexError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_cut_at_headings_after_the_frontmatter() {
        let text = "---\ntags: [a]\n---\nintro line\n\n# One\nfirst\n\n## Two\nsecond\n";
        let chunks = chunk_note(text);
        assert_eq!(chunks.len(), 3, "{chunks:?}");
        assert_eq!(
            chunks[0],
            Chunk {
                heading: None,
                text: "intro line".into()
            }
        );
        assert_eq!(chunks[1].heading.as_deref(), Some("One"));
        assert_eq!(chunks[1].text, "# One\nfirst");
        assert_eq!(chunks[2].heading.as_deref(), Some("Two"));
    }

    #[test]
    fn long_sections_are_cut_at_paragraphs() {
        let para = "word ".repeat(300);
        let text = format!("# H\n{para}\n\n{para}\n\n{para}\n");
        let chunks = chunk_note(&text);
        assert!(chunks.len() >= 2, "{}", chunks.len());
        assert!(
            chunks
                .iter()
                .all(|c| c.text.chars().count() <= MAX_CHUNK_CHARS + 2)
        );
        assert!(chunks.iter().all(|c| c.heading.as_deref() == Some("H")));
    }

    #[test]
    fn vectors_round_trip_through_blobs() {
        let v = normalise(vec![3.0, 4.0]);
        assert_eq!(v, vec![0.6, 0.8]);
        assert_eq!(from_blob(&to_blob(&v)), v);
    }
}
