//! What the app database answers for the app: the sessions (list, search, delete, rename),
//! usage by day and by session, and the revisions `/rewind` restores.

use super::core::Core;
use super::{Asked, HostEvent, UsageReport};
use crate::store::{DayUsage, Store, StoreError};

/// How many sessions the list shows, and how many revisions `/rewind` offers.
const SESSIONS_SHOWN: usize = 100;
const REVISIONS_SHOWN: usize = 50;
/// The days `/usage` covers, and how many sessions it names.
const USAGE_DAYS: i64 = 30;
const USAGE_SESSIONS: usize = 20;

/// Run a query on the app database and tell the app its answer (or the error). `asked`: the
/// answer the app waits for, when it does (a failure then ends that wait).
fn query(
    core: &Core,
    asked: Option<Asked>,
    job: impl FnOnce(&mut Store, &str) -> Result<HostEvent, StoreError>,
) {
    let vault_id = crate::index::vault_id(&core.launch.vault);
    let failed = |message: String, notice: bool| match asked {
        Some(asked) => HostEvent::Unanswered {
            asked,
            message,
            notice,
        },
        None if notice => HostEvent::Notice(message),
        None => HostEvent::Error(message),
    };
    match core.with_store(|store| job(store, &vault_id)) {
        Some(Ok(event)) => core.tell(event),
        Some(Err(e)) => core.tell(failed(e.to_string(), false)),
        // The database could not be opened (said at start-up) or is still being opened.
        None => core.tell(failed(
            "the app database is not open; sessions, usage and history are unavailable".into(),
            true,
        )),
    }
}

pub(super) fn list(core: &Core, search: Option<&str>) {
    let search = search.filter(|q| !q.trim().is_empty());
    query(core, Some(Asked::Sessions), |store, vault| {
        let found = match search {
            Some(q) => store.search_sessions(Some(vault), q, SESSIONS_SHOWN),
            None => store.list_sessions(Some(vault), SESSIONS_SHOWN),
        };
        found.map(HostEvent::Sessions)
    });
}

pub(super) fn delete(core: &Core, id: &str) {
    query(core, Some(Asked::Sessions), |store, vault| {
        store.delete_session(id)?;
        store
            .list_sessions(Some(vault), SESSIONS_SHOWN)
            .map(HostEvent::Sessions)
    });
}

pub(super) fn rename(core: &Core, id: &str, title: &str) {
    query(core, Some(Asked::Sessions), |store, vault| {
        store.set_session_title(id, title)?;
        store
            .list_sessions(Some(vault), SESSIONS_SHOWN)
            .map(HostEvent::Sessions)
    });
}

/// The last 30 days of usage, with their cost where every model has a price.
pub(super) fn usage(core: &Core) {
    let config = &core.launch.config;
    query(core, Some(Asked::Usage), |store, _| {
        let now = crate::time::now_ms();
        let since = crate::time::period_start_ms(now, USAGE_DAYS);
        let days = store.usage_by_day(since)?;
        let by_session = store.usage_by_session(since, USAGE_SESSIONS)?;
        Ok(HostEvent::Usage(UsageReport {
            cost: usage_cost(config, &days),
            days,
            by_session,
            period_days: USAGE_DAYS as u32,
            end_ms: now,
        }))
    });
}

/// Cost of the period: the config's prices over the built-in list prices, per model.
fn usage_cost(config: &crate::config::Config, days: &[DayUsage]) -> crate::store::CostEstimate {
    crate::store::estimate_cost(days, |model| config.price_of(model))
}

pub(super) fn revisions(core: &Core, path: String) {
    query(core, Some(Asked::History(path.clone())), |store, vault| {
        let revisions = store.revisions_of(vault, &path, REVISIONS_SHOWN)?;
        Ok(HostEvent::Revisions {
            path: path.clone(),
            revisions,
        })
    });
}

pub(super) fn revision_text(core: &Core, revision: i64) {
    query(core, None, |store, _| {
        let text = store.revision_text(revision)?;
        Ok(HostEvent::RevisionText { revision, text })
    });
}
