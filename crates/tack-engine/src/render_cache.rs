//! Rendering a task's arguments once per host when `--events` also shows them: the input
//! `params::collect` rendered for the `task_start` event is kept and handed to the host's run,
//! unless a variable the render could have read changed in between (an earlier host of the
//! same task registered a result, set a fact, changed the inventory...).
//!
//! Owns the change counters of a play's variables ([`Versions`], bumped by `vars::PlayScope`)
//! and the per-task store of renders ([`RenderCache`]). It never renders and never decides
//! what a host receives: a render it cannot vouch for is dropped and the run renders again.

use std::collections::BTreeMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::task::RenderedArgs;

/// Counters of every change to a play's variables, so a render can tell whether its inputs
/// still hold: changes to what every host sees, changes per host, and reads of `hostvars`
/// (which let one host's render see another's variables).
#[derive(Default)]
pub struct Versions {
    shared: AtomicU64,
    any_host: AtomicU64,
    per_host: RwLock<BTreeMap<String, u64>>,
    hostvars_reads: AtomicU64,
}

/// The counters as a render started.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    shared: u64,
    any_host: u64,
    host: u64,
}

impl Versions {
    /// Something every host sees changed (play variables, inventory, `groups`, play hosts).
    pub fn shared_changed(&self) {
        self.shared.fetch_add(1, Ordering::Relaxed);
    }

    /// One host's own variables changed (facts, registered results, `include_vars`).
    pub fn host_changed(&self, host: &str) {
        self.any_host.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut map) = self.per_host.write() {
            *map.entry(host.to_string()).or_default() += 1;
        }
    }

    /// A template looked at `hostvars`.
    pub fn hostvars_read(&self) {
        self.hostvars_reads.fetch_add(1, Ordering::Relaxed);
    }

    fn stamp(&self, host: &str) -> Stamp {
        let host = self.per_host.read().ok().and_then(|m| m.get(host).copied()).unwrap_or(0);
        Stamp {
            shared: self.shared.load(Ordering::Relaxed),
            any_host: self.any_host.load(Ordering::Relaxed),
            host,
        }
    }

    fn reads(&self) -> u64 {
        self.hostvars_reads.load(Ordering::Relaxed)
    }
}

struct Kept {
    stamp: Stamp,
    /// The render read `hostvars`: any host's change may have changed it.
    read_others: bool,
    rendered: RenderedArgs,
}

/// One task's renders by host, each usable once by that host's run.
#[derive(Default)]
pub struct RenderCache {
    // A lock: hosts' runs take their renders from threads of their own (`forks`).
    kept: Mutex<BTreeMap<String, Kept>>,
}

impl RenderCache {
    /// Renders with `render`, keeping a copy for `host`'s run when `keep` (a task the run
    /// renders in the same scope: no loop, no delegation).
    pub(crate) fn render<E>(
        &self,
        versions: &Versions,
        host: &str,
        keep: bool,
        render: impl FnOnce() -> Result<RenderedArgs, E>,
    ) -> Result<(tack_yaml::Mapping, Vec<String>), E> {
        let stamp = versions.stamp(host);
        let reads = versions.reads();
        let rendered = render()?;
        let shown = (rendered.args.clone(), rendered.sealed.clone());
        if keep {
            let read_others = versions.reads() != reads;
            self.kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(host.to_string(), Kept { stamp, read_others, rendered });
        }
        Ok(shown)
    }

    /// The render kept for `host`, if nothing it could have read changed since.
    pub(crate) fn take(&self, versions: &Versions, host: &str) -> Option<RenderedArgs> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner).remove(host)?;
        let now = versions.stamp(host);
        let still = now.shared == kept.stamp.shared
            && now.host == kept.stamp.host
            && (!kept.read_others || now.any_host == kept.stamp.any_host);
        still.then_some(kept.rendered)
    }
}
