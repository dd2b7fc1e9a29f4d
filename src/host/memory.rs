//! Giving the system back the memory the app freed. glibc's allocator keeps what a thread freed in
//! that thread's arena and returns pages only from an arena's top, so a burst that is freed below
//! something still alive stays resident. At 137k notes the vault's first sync and the live
//! indexer's reconcile build ~50 MB of rows and walk entries on pool threads and free them; with
//! the listing allocated after them, the app idled at 145 MB of which ~90 MB was free memory
//! glibc kept (docs/benchmarks.md §16, docs/decisions.md §69). `malloc_trim(0)` hands every
//! arena's free pages back (live allocations are not touched).

use std::time::Instant;

/// Give freed memory back to the system, after work that allocated much and freed it (a sync, a
/// live batch, a listing). Cheap when there is little to give back. Not rate-limited: the first
/// version trimmed at most once a second, and on an idle machine the live indexer's first
/// reconcile ended within a second of the listing's trim — its 50 MB were skipped and the app
/// idled at 114 MB instead of 56 (docs/benchmarks.md §16). These calls follow bursts, which
/// are seconds apart at the least (a batch per save).
pub fn give_back() {
    let started = Instant::now();
    let released = trim();
    tracing::debug!(
        released,
        took_us = started.elapsed().as_micros() as u64,
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
