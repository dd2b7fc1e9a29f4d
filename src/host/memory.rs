//! Giving the system back the memory the app freed. glibc's allocator keeps what a thread freed in
//! that thread's arena and returns pages only from an arena's top, so a burst that is freed below
//! something still alive stays resident. At 137k notes the vault's first sync and the live
//! indexer's reconcile build ~50 MB of rows and walk entries on pool threads and free them; with
//! the listing allocated after them, the app idled at 145 MB of which ~90 MB was free memory
//! glibc kept (docs/benchmarks.md §16, docs/decisions.md §69). `malloc_trim(0)` hands every
//! arena's free pages back (live allocations are not touched).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Trims closer together than this are skipped: each walks and locks every arena in turn, and a
/// burst of small index batches (a person saving while typing) frees little each time.
const AT_MOST_EVERY: Duration = Duration::from_secs(1);

static LAST: Mutex<Option<Instant>> = Mutex::new(None);

/// Give freed memory back to the system, after work that allocated much and freed it (a sync, a
/// listing, the picker closing). Cheap when there is nothing to give back; at most once a second.
pub fn give_back() {
    let now = Instant::now();
    {
        let mut last = match LAST.lock() {
            Ok(last) => last,
            Err(poisoned) => poisoned.into_inner(),
        };
        if last.is_some_and(|at| now.duration_since(at) < AT_MOST_EVERY) {
            return;
        }
        *last = Some(now);
    }
    let released = trim();
    tracing::debug!(
        released,
        took_us = now.elapsed().as_micros() as u64,
        "allocator trimmed"
    );
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() -> bool {
    // SAFETY: `malloc_trim` takes no pointers and touches only glibc's own free lists, which it
    // locks while it runs; every other allocation call waits for it.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Other allocators (musl, macOS, Windows) give large freed blocks back themselves.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() -> bool {
    false
}
