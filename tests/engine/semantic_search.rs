//! semantic_search_notes against a local HTTP server that speaks the OpenAI `/v1/embeddings`
//! format, with deterministic bag-of-words vectors (plumbing is real: HTTP, JSON, storage,
//! incremental re-embedding, cosine ranking).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use vaultchat::config::{Config, EmbeddingsConfig, Paths};
use vaultchat::store::Actor;
use vaultchat::tools::Registry;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::vault::Vault;

const DIMS: usize = 128;

/// A bag-of-words vector: each lower-cased word adds 1 to a hashed dimension.
fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
    {
        let h = word.to_lowercase().bytes().fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        });
        v[h as usize % DIMS] += 1.0;
    }
    v
}

/// Serve `/v1/embeddings` on 127.0.0.1; counts the inputs it embedded.
async fn fake_embeddings(inputs: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let inputs = Arc::clone(&inputs);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let inputs = Arc::clone(&inputs);
                    async move {
                        assert_eq!(req.uri().path(), "/v1/embeddings");
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let request: Value = serde_json::from_slice(&body).unwrap();
                        assert_eq!(request["model"], "test-embed");
                        let texts: Vec<String> = request["input"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| t.as_str().unwrap().to_string())
                            .collect();
                        inputs.fetch_add(texts.len(), Ordering::SeqCst);
                        let data: Vec<Value> = texts
                            .iter()
                            .enumerate()
                            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": embed(t)}))
                            .collect();
                        let answer = json!({"object": "list", "data": data, "model": "test-embed",
                            "usage": {"prompt_tokens": 1, "total_tokens": 1}});
                        Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(
                            answer.to_string(),
                        ))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{addr}/v1")
}

fn vault_with_notes(root: &std::path::Path) -> std::path::PathBuf {
    let vault = root.join("vault");
    std::fs::create_dir_all(vault.join("Ops")).unwrap();
    std::fs::write(
        vault.join("Ops/Deploy.md"),
        "# Deploy\n\nBuild the image and push it.\n\n## Rollback\n\nIf the release fails, revert to the previous tag and restart the workers.\n",
    )
    .unwrap();
    std::fs::write(
        vault.join("Garden.md"),
        "# Garden\n\nTomatoes need sun and water every morning.\n",
    )
    .unwrap();
    std::fs::write(
        vault.join("Recipes.md"),
        "# Soup\n\nSimmer onions, carrots and celery for an hour.\n",
    )
    .unwrap();
    vault
}

fn registry(root: &std::path::Path, vault: &std::path::Path, base_url: Option<String>) -> Registry {
    let config = Config {
        embeddings: base_url.map(|base_url| EmbeddingsConfig {
            base_url,
            model: "test-embed".into(),
            api_key_env: None,
        }),
        ..Config::default()
    };
    let ws = Workspace::open(
        Vault::open(vault).unwrap(),
        &Paths::under(&root.join("data")),
        &config,
        Actor::Agent,
    )
    .unwrap();
    let mut reg = Registry::new();
    workspace::register(&mut reg, &ws);
    reg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranks_sections_by_meaning_and_embeds_incrementally() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = vault_with_notes(tmp.path());
    let inputs = Arc::new(AtomicUsize::new(0));
    let url = fake_embeddings(Arc::clone(&inputs)).await;
    let reg = registry(tmp.path(), &vault, Some(url));

    let out = reg
        .call(
            "semantic_search_notes",
            json!({"query": "the release failed: revert to the previous tag", "relevance": "broad"}),
        )
        .await
        .unwrap();
    let s = out.structured;
    assert_eq!(s["mode"], "semantic");
    let top = &s["results"][0];
    assert_eq!(top["path"], "Ops/Deploy.md", "{s}");
    assert_eq!(top["heading"], "Rollback", "{s}");
    assert!(
        top["text"]
            .as_str()
            .unwrap()
            .contains("restart the workers")
    );
    let scores: Vec<f64> = s["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // Four sections (Deploy, Rollback, Garden, Soup) plus the query.
    assert_eq!(s["newly_embedded_chunks"], 4);
    assert_eq!(inputs.load(Ordering::SeqCst), 5);

    // Nothing changed: only the query is embedded.
    reg.call("semantic_search_notes", json!({"query": "tomatoes"}))
        .await
        .unwrap();
    assert_eq!(inputs.load(Ordering::SeqCst), 6);

    // One section edited (through the tools, which re-index at once; a running server's watcher
    // does the same for external edits): only that piece is embedded again.
    // A whole body is replaced only over a note read first.
    reg.call("read_note", json!({"note": "Garden.md"}))
        .await
        .unwrap();
    reg.call(
        "update_note",
        json!({"note": "Garden.md", "body": "# Garden\n\nCucumbers need sun and water every evening.\n"}),
    )
    .await
    .unwrap();
    let out = reg
        .call(
            "semantic_search_notes",
            json!({"query": "cucumbers evening"}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.structured["newly_embedded_chunks"], 1,
        "{}",
        out.structured
    );
    assert_eq!(out.structured["results"][0]["path"], "Garden.md");
    assert_eq!(inputs.load(Ordering::SeqCst), 8);

    // Strict relevance drops weak matches entirely.
    let out = reg
        .call(
            "semantic_search_notes",
            json!({"query": "zebra quantum", "relevance": "strict"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["results"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_endpoint_it_answers_with_keyword_results() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = vault_with_notes(tmp.path());
    let reg = registry(tmp.path(), &vault, None);
    let out = reg
        .call("semantic_search_notes", json!({"query": "tomatoes"}))
        .await
        .unwrap();
    assert_eq!(out.structured["mode"], "keyword");
    assert_eq!(out.structured["results"][0]["path"], "Garden.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_endpoint_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = vault_with_notes(tmp.path());
    // A port nobody listens on.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", free.local_addr().unwrap());
    drop(free);
    let reg = registry(tmp.path(), &vault, Some(url));
    let err = reg
        .call("semantic_search_notes", json!({"query": "x"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("could not be reached"), "{err}");
    let err = reg
        .call(
            "semantic_search_notes",
            json!({"query": "x", "relevance": "loose"}),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown variant"), "{err}");
}

/// `vaultchat index` embeds what changed when an endpoint is configured, and only that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_command_embeds_incrementally() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = vault_with_notes(tmp.path());
    let inputs = Arc::new(AtomicUsize::new(0));
    let url = fake_embeddings(Arc::clone(&inputs)).await;
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.toml"),
        format!("[embeddings]\nbase_url = \"{url}\"\nmodel = \"test-embed\"\n"),
    )
    .unwrap();
    let run = |data: std::path::PathBuf, vault: std::path::PathBuf| {
        tokio::task::spawn_blocking(move || {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_vaultchat"))
                .arg("--data-dir")
                .arg(&data)
                .arg("--vault")
                .arg(&vault)
                .arg("index")
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        })
    };
    let first = run(data.clone(), vault.clone()).await.unwrap();
    assert!(
        first.contains("embedded 4 new or changed pieces with test-embed"),
        "{first}"
    );
    let second = run(data.clone(), vault.clone()).await.unwrap();
    assert!(
        second.contains("embedded 0 new or changed pieces"),
        "{second}"
    );
    assert!(second.contains("(4 pieces in all)"), "{second}");
    std::fs::write(vault.join("Recipes.md"), "# Soup\n\nLentils instead.\n").unwrap();
    let third = run(data, vault).await.unwrap();
    assert!(
        third.contains("embedded 1 new or changed pieces"),
        "{third}"
    );
    assert_eq!(inputs.load(Ordering::SeqCst), 5);
}
