//! Exact token counts for OpenAI's BPE encodings (o200k_base, cl100k_base) through `tiktoken-rs`,
//! made safe and cheap enough to run on a whole conversation before every request.
//!
//! Two things in the tokenizer need care. BPE on one regex piece is quadratic in the piece's
//! length and the splitting regex can exhaust its backtracking limit (which `tiktoken-rs` turns
//! into a panic, and release builds abort on panic) on a very long run of one character class, so
//! text is cut into pieces at most [`RUN_LIMIT`] bytes long before it reaches the tokenizer. And
//! a conversation is re-counted on every request while most of it is unchanged, so counts of
//! larger texts are remembered by their hash.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use tiktoken_rs::CoreBPE;

/// One of the OpenAI encodings vaultchat counts exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4, gpt-oss.
    O200kBase,
    /// gpt-4, gpt-3.5-turbo, the text-embedding-3 models.
    Cl100kBase,
}

/// The longest run of letters, of other non-blank characters or of blanks handed to the
/// tokenizer in one piece. Real words, numbers and indentation are far shorter; a longer run
/// (base64, a minified line, a wall of `=`) is cut, which costs at most a token per cut.
const RUN_LIMIT: usize = 256;

/// How much text one tokenizer call gets at most (before it reaches a line that starts a new
/// regex piece), so a long text is split where the split changes nothing.
const PACK_LIMIT: usize = 8 * 1024;

/// Texts shorter than this are counted every time: hashing and locking would cost about as much.
const CACHE_MIN_BYTES: usize = 64;

/// At most this many remembered counts; the memo is emptied when it is full (a long session
/// re-fills it with the messages it still sends on the next request).
const CACHE_CAPACITY: usize = 16 * 1024;

/// The encoders, each loaded once per process: `None` inside when it failed to load.
static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();

fn cell(encoding: Encoding) -> &'static OnceLock<Option<CoreBPE>> {
    match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// Whether `encoding`'s encoder has loaded (without loading it).
pub fn is_loaded(encoding: Encoding) -> bool {
    matches!(cell(encoding).get(), Some(Some(_)))
}

/// The loaded encoder, once per process; `None` when it failed to load (the caller falls back to
/// the calibrated estimate rather than fail a request over a count).
fn encoder(encoding: Encoding) -> Option<&'static CoreBPE> {
    let load: fn() -> anyhow::Result<CoreBPE> = match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base,
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base,
    };
    cell(encoding)
        .get_or_init(|| match load() {
            Ok(bpe) => Some(bpe),
            Err(error) => {
                tracing::warn!(?encoding, %error, "the tokenizer did not load; token counts are estimated");
                None
            }
        })
        .as_ref()
}

/// Remembered counts by (encoding, xxh3 of the text).
fn memo() -> &'static Mutex<HashMap<(Encoding, u64), u64>> {
    static MEMO: OnceLock<Mutex<HashMap<(Encoding, u64), u64>>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The number of tokens `text` encodes to in `encoding` (special-token text such as
/// `<|endoftext|>` counts as ordinary text, as the API treats message content); `None` when the
/// encoder is unavailable.
pub fn count(encoding: Encoding, text: &str) -> Option<u64> {
    let bpe = encoder(encoding)?;
    if text.len() < CACHE_MIN_BYTES {
        return Some(count_pieces(bpe, text));
    }
    let key = (encoding, xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
    if let Some(known) = lock_memo().get(&key) {
        return Some(*known);
    }
    let counted = count_pieces(bpe, text);
    let mut memo = lock_memo();
    if memo.len() >= CACHE_CAPACITY {
        memo.clear();
    }
    memo.insert(key, counted);
    Some(counted)
}

/// The count of `text` in one tokenizer call, neither cut nor remembered: the reference the
/// accuracy check (`accuracy`) compares [`count`] with. Quadratic on a very long run of one
/// character, so only for ordinary text.
pub fn count_whole(encoding: Encoding, text: &str) -> Option<u64> {
    Some(encoder(encoding)?.count_ordinary(text) as u64)
}

fn lock_memo() -> std::sync::MutexGuard<'static, HashMap<(Encoding, u64), u64>> {
    // A panic while holding the lock cannot leave the map inconsistent (single inserts).
    memo()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Count `text` piece by piece (see [`pieces`]).
fn count_pieces(bpe: &CoreBPE, text: &str) -> u64 {
    pieces(text)
        .map(|piece| bpe.count_ordinary(piece) as u64)
        .sum()
}

/// What kind of run a character belongs to, for [`RUN_LIMIT`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum RunKind {
    Blank,
    Word,
    Other,
}

fn run_kind(c: char) -> RunKind {
    if c.is_whitespace() {
        RunKind::Blank
    } else if c.is_alphanumeric() {
        RunKind::Word
    } else {
        RunKind::Other
    }
}

/// `text` cut into consecutive pieces whose token counts add up to the count of the whole:
/// - after [`PACK_LIMIT`] bytes, at the next line break followed by a character that no regex
///   piece of o200k_base or cl100k_base can join to it (a piece never spans `\n` and a letter,
///   digit or punctuation other than `/`), so the cut changes nothing;
/// - inside a run of one kind longer than [`RUN_LIMIT`] bytes, which may add a token per cut
///   and keeps the tokenizer linear.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut rest = text.char_indices();
    let mut run_start = 0;
    let mut run = RunKind::Blank;
    let mut previous = '\0';
    std::iter::from_fn(move || {
        for (at, c) in rest.by_ref() {
            let kind = run_kind(c);
            if kind != run || at == 0 {
                run = kind;
                run_start = at;
            }
            let clean_break = previous == '\n' && kind != RunKind::Blank && c != '/';
            let cut = (clean_break && at - start >= PACK_LIMIT)
                || (at - run_start >= RUN_LIMIT && at > start);
            previous = c;
            if cut {
                let piece = &text[start..at];
                start = at;
                run_start = at;
                return Some(piece);
            }
        }
        if start < text.len() {
            let piece = &text[start..];
            start = text.len();
            return Some(piece);
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_strings_count_as_openai_counts_them() {
        // "tiktoken is great!" is OpenAI's cookbook example: six tokens in both encodings.
        assert_eq!(count(Encoding::Cl100kBase, "hello world"), Some(2));
        assert_eq!(count(Encoding::O200kBase, "hello world"), Some(2));
        assert_eq!(count(Encoding::Cl100kBase, ""), Some(0));
        assert_eq!(count(Encoding::Cl100kBase, "tiktoken is great!"), Some(6));
        assert_eq!(count(Encoding::O200kBase, "tiktoken is great!"), Some(6));
    }

    #[test]
    fn pieces_cover_the_text_in_order() {
        let text = format!(
            "# Title\n\nSome words.\n/path\n{}\n{}\nend",
            "x".repeat(1000),
            " ".repeat(700)
        );
        let joined: String = pieces(&text).collect();
        assert_eq!(joined, text);
        assert!(pieces(&text).all(|p| p.len() <= PACK_LIMIT + RUN_LIMIT));
        assert_eq!(pieces("").count(), 0);
        assert_eq!(pieces("é").collect::<Vec<_>>(), vec!["é"]);
    }

    #[test]
    fn cutting_long_text_at_line_starts_changes_no_count() {
        let line = "Plain prose with a [[link]], `code`, 12345 numbers and émigré words.\n";
        let text = format!(
            "{}/root/path\n- item\n\n## Heading\n{}",
            line.repeat(300),
            line.repeat(300)
        );
        assert!(
            pieces(&text).count() > 3,
            "the text is long enough to be cut"
        );
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = encoder(encoding).unwrap();
            assert_eq!(
                count_pieces(bpe, &text),
                bpe.count_ordinary(&text) as u64,
                "{encoding:?}"
            );
        }
    }

    /// The repository's docs are long (up to 60 KB, so cut at line starts many times) and hold
    /// code, tables, CJK and box drawing: counted piecewise they count as in one call, but for a
    /// token or so where a row of box drawing is longer than a run may be.
    #[test]
    fn long_documents_count_as_in_one_call() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let mut compared = 0;
        for entry in std::fs::read_dir(docs).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let bpe = encoder(encoding).unwrap();
                let (pieced, whole) = (count_pieces(bpe, &text), bpe.count_ordinary(&text) as u64);
                let long_runs = text.lines().filter(|l| l.len() > RUN_LIMIT).count() as u64;
                assert!(
                    pieced.abs_diff(whole) <= long_runs,
                    "{}: {pieced} pieced, {whole} whole ({encoding:?})",
                    path.display()
                );
                compared += 1;
            }
        }
        assert!(compared >= 20, "{compared}");
    }

    #[test]
    fn a_huge_run_of_one_character_is_counted_quickly_and_about_right() {
        // Uncut, this is minutes of BPE (quadratic) or a regex that gives up.
        let run = "a".repeat(200_000);
        let counted = count(Encoding::O200kBase, &run).unwrap();
        // Counted in 256-byte pieces: somewhere between a token per 20 letters and one per 5.
        assert!((10_000..40_000).contains(&counted), "{counted}");
        let carets = "^".repeat(200_000);
        assert!(count(Encoding::Cl100kBase, &carets).unwrap() > 1_000);
    }

    #[test]
    fn a_remembered_count_is_the_same_count() {
        let text = "A note that is long enough to be remembered. ".repeat(40);
        let first = count(Encoding::O200kBase, &text);
        assert_eq!(count(Encoding::O200kBase, &text), first);
        assert_ne!(count(Encoding::Cl100kBase, &text), None);
    }
}
