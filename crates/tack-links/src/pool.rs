//! The run's open links, one per distinct [`LinkTarget`] and [`Become`] (a link under a
//! become user is a second agent, kept for the run like the login user's): a task reconnects only when what it
//! reads for its connection changes, and every task and host with the same settings shares
//! the link (and its agent). Links stay open for the whole run and close when it ends.
//!
//! Also opens the links a task's later hosts will take while its first hosts run
//! ([`opening_ahead`]).
//!
//! Owns the pool only: how an ssh link is opened (the agent image, the ssh command) is the
//! [`Opener`]'s, which the binary supplies; what a run does over a link is the actions'.

// A plugin link's key holds rendered values, whose mappings keep a lookup index behind a
// cell; the key hashes and compares them by their text only, and nothing mutates a value
// once it is rendered into a key.
#![allow(clippy::mutable_key_type)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tack_connect::Become;

use tack_connect::{Connection, ConnectionError, InProcess};

use crate::link_target::{LinkTarget, PluginSettings, SshSettings};

/// How the run opens a link to a remote host. Opening must not connect yet: the first
/// [`Connection::connect`] does, on the thread that runs the host's task.
pub trait Opener: Send + Sync {
    fn ssh(&self, settings: &SshSettings) -> Result<Arc<dyn Connection>, ConnectionError>;

    /// A link to `target` whose agent runs as the become user. Like [`Opener::ssh`], it must
    /// not connect yet.
    fn become_link(
        &self,
        target: &LinkTarget,
        escalation: &Become,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        let _ = target;
        Err(ConnectionError::Exec(format!(
            "this run cannot become another user ('{}')",
            escalation.user
        )))
    }

    /// A link through the connection plugin `settings` names, escalating to `escalation`'s
    /// user with ansible's become plugin when given. Like [`Opener::ssh`], it must not
    /// connect yet.
    fn plugin(
        &self,
        settings: &PluginSettings,
        escalation: Option<&Become>,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        let _ = escalation;
        Err(ConnectionError::Exec(format!(
            "this run cannot use the '{}' connection plugin (host '{}')",
            settings.name, settings.inventory_host
        )))
    }

    /// Whether this opener reaches remote hosts at all (a run whose opener does not refuses
    /// them before anything runs).
    fn reaches_remote(&self) -> bool {
        true
    }

    /// ansible's `reset()` of the ssh connection to `settings`' host (its ControlMaster
    /// checked, and stopped); `None` where there is nothing of the kind.
    fn reset_ssh(&self, settings: &SshSettings) -> Option<tack_connect::MasterReset> {
        let _ = settings;
        None
    }
}

/// What resetting a connection shows: `-vvv` lines, and a warning when a master would not
/// stop (ansible's words for both).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ResetNotes {
    pub verbose: Vec<String>,
    pub warning: Option<String>,
}

impl ResetNotes {
    fn of(address: &str, reset: &tack_connect::MasterReset) -> Self {
        // ansible shows its command list as Python shows a list of bytes.
        let shown = |argv: &[String]| {
            let words: Vec<String> =
                argv.iter().map(|w| tack_py::repr::bytes_repr(w.as_bytes())).collect();
            format!("[{}]", words.join(", "))
        };
        let mut verbose =
            vec![format!("<{address}> sending connection check: {}", shown(&reset.check))];
        if let Some(said) = &reset.no_connection {
            verbose.push(format!("<{address}> No connection to reset: {}", said.trim_end()));
        }
        if let Some(stop) = &reset.stop {
            verbose.push(format!("<{address}> sending connection stop: {}", shown(stop)));
        }
        let warning =
            reset.stop_failed.as_ref().map(|said| format!("Failed to reset connection: {said}"));
        ResetNotes { verbose, warning }
    }
}

/// The opener of a run that reaches only local hosts (tests, benchmarks): an ssh link is
/// refused, saying so.
pub struct LocalOnly;

impl Opener for LocalOnly {
    fn reaches_remote(&self) -> bool {
        false
    }

    fn ssh(&self, settings: &SshSettings) -> Result<Arc<dyn Connection>, ConnectionError> {
        Err(ConnectionError::Exec(format!(
            "this run reaches only local hosts; '{}' needs the ssh connection",
            settings.address
        )))
    }
}

/// One link's identity: where it goes, and whom it becomes there.
type LinkKey = (LinkTarget, Option<Become>);

/// The run's links.
pub struct Links<'o> {
    opener: &'o dyn Opener,
    open: Mutex<HashMap<LinkKey, Arc<dyn Connection>>>,
    local: Arc<dyn Connection>,
}

impl Drop for Links<'_> {
    /// Every link ends at once: each waits for its agent to finish (its Python servers, its
    /// staging directory), which one after another would add up over a fleet.
    fn drop(&mut self) {
        let open = std::mem::take(self.open.get_mut().unwrap_or_else(PoisonError::into_inner));
        if open.len() < 2 {
            return;
        }
        std::thread::scope(|scope| {
            for (_, link) in open {
                scope.spawn(move || drop(link));
            }
        });
    }
}

impl<'o> Links<'o> {
    pub fn new(opener: &'o dyn Opener) -> Self {
        Links { opener, open: Mutex::new(HashMap::new()), local: Arc::new(InProcess) }
    }

    pub fn reaches_remote(&self) -> bool {
        self.opener.reaches_remote()
    }

    /// `meta: reset_connection`: the links for `target` (its become links too) are closed,
    /// and an ssh host's ControlMaster is stopped as ansible stops it, so the next use logs
    /// in anew (the local link has nothing to reset). What ansible shows of it.
    pub fn reset(&self, target: &LinkTarget) -> ResetNotes {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|(t, _), _| t != target);
        drop(open);
        match target {
            LinkTarget::Ssh(settings) => self
                .opener
                .reset_ssh(settings)
                .map(|reset| ResetNotes::of(&settings.address, &reset))
                .unwrap_or_default(),
            LinkTarget::Local | LinkTarget::Plugin(_) => ResetNotes::default(),
        }
    }

    /// The link for `target` (under `escalation`'s user when there is one), made on first
    /// use.
    pub fn get(
        &self,
        target: &LinkTarget,
        escalation: Option<&Become>,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        self.get_as(target, target, escalation)
    }

    /// [`Links::get`] for `key`'s host, a link not open yet being opened with `target`'s
    /// settings instead (`reboot`'s `connect_timeout`: the link the host's later tasks use
    /// was opened with another ssh `ConnectTimeout`).
    pub fn get_as(
        &self,
        key: &LinkTarget,
        target: &LinkTarget,
        escalation: Option<&Become>,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        if let (LinkTarget::Local, None) = (target, escalation) {
            return Ok(Arc::clone(&self.local));
        }
        let key = (key.clone(), escalation.cloned());
        // A panic while the map was held leaves it whole (inserts are single calls).
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(link) = open.get(&key) {
            return Ok(Arc::clone(link));
        }
        let link = match (target, escalation) {
            // A plugin escalates itself, with ansible's become plugin.
            (LinkTarget::Plugin(settings), escalation) => {
                self.opener.plugin(settings, escalation)?
            }
            (LinkTarget::Ssh(settings), None) => self.opener.ssh(settings)?,
            (_, Some(escalation)) => self.opener.become_link(target, escalation)?,
            (LinkTarget::Local, None) => return Ok(Arc::clone(&self.local)),
        };
        open.insert(key, Arc::clone(&link));
        Ok(link)
    }
}

/// How many links may be opening at once, the task's own workers (up to `forks`) counted:
/// opening a link is mostly waiting for the host's ssh handshake, so the hosts a task's
/// workers will reach later are connected while the first ones run. Ten is what OpenSSH's
/// default `MaxStartups` takes at once from one client before it starts refusing, so a fleet
/// behind one bastion is not turned away.
const OPENING_AT_ONCE: usize = 10;

/// Runs `work` (the task's workers, `width` of them) while other threads open `links` (each
/// host's unopened link, in the order the workers take the hosts) so that no more than [`OPENING_AT_ONCE`]
/// open at once. A link that fails to open fails the same way when its worker uses it (an
/// unreachable host is kept unreachable by the link itself). Once `work` returns, no new
/// link is started.
pub fn opening_ahead<R>(
    links: Vec<Option<Arc<dyn Connection>>>,
    width: usize,
    work: impl FnOnce() -> R,
) -> R {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    // With one worker (`-f 1`, or a `throttle: 1`) hosts are reached one at a time, as
    // ansible reaches them: what one connection leaves (a host key ssh records in
    // known_hosts) is there for the next, so what each says is ansible's.
    if width <= 1 {
        return work();
    }
    // The workers open the first `width` hosts' links themselves.
    let ahead: Vec<Arc<dyn Connection>> = links.into_iter().skip(width).flatten().collect();
    let openers = OPENING_AT_ONCE.saturating_sub(width).min(ahead.len());
    if openers == 0 {
        return work();
    }
    let next = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|threads| {
        for _ in 0..openers {
            threads.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    let Some(link) = ahead.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    // What fails here is the worker's to report, from the link's own state.
                    let _ = link.connect();
                }
            });
        }
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tack_connect::StagedFile;

    use super::*;

    /// A link whose opening takes a while, counting how many open at once.
    struct Slow {
        opened: AtomicUsize,
        now: Arc<AtomicUsize>,
        most: Arc<AtomicUsize>,
    }

    impl Connection for Slow {
        fn connect(&self) -> Result<(), ConnectionError> {
            let at_once = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(at_once, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            self.now.fetch_sub(1, Ordering::SeqCst);
            self.opened.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }

        fn is_open(&self) -> bool {
            self.opened.load(Ordering::SeqCst) > 0
        }

        fn run_module(
            &self,
            _: &str,
            _: &tack_agent::Invocation,
        ) -> Result<tack_agent::ModuleResult, ConnectionError> {
            unreachable!("only opened")
        }

        fn exec_command(
            &self,
            _: &str,
            _: &std::path::Path,
        ) -> Result<tack_connect::ExecOutput, ConnectionError> {
            unreachable!("only opened")
        }

        fn stage(&self, _: &[u8], _: &str, _: bool) -> Result<StagedFile, ConnectionError> {
            unreachable!("only opened")
        }

        fn unstage(&self, _: StagedFile) -> Result<(), ConnectionError> {
            unreachable!("only opened")
        }
    }

    #[test]
    fn later_hosts_links_open_while_the_first_run_and_never_more_than_ten_at_once() {
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let slow: Vec<Arc<Slow>> = (0..30)
            .map(|_| {
                Arc::new(Slow {
                    opened: AtomicUsize::new(0),
                    now: Arc::clone(&now),
                    most: Arc::clone(&most),
                })
            })
            .collect();
        let links: Vec<Option<Arc<dyn Connection>>> =
            slow.iter().map(|l| Some(Arc::clone(l) as Arc<dyn Connection>)).collect();
        let width = 4;
        let ahead = slow[width..].to_vec();
        opening_ahead(links, width, || {
            // The workers open their first hosts' links themselves, at once.
            std::thread::scope(|s| {
                for link in &slow[..width] {
                    s.spawn(|| link.connect().unwrap());
                }
            });
            // Meanwhile every later host's link opens without a worker.
            while ahead.iter().any(|l| !l.is_open()) {
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        assert!(slow.iter().all(|l| l.opened.load(Ordering::SeqCst) == 1), "each opened once");
        let most = most.load(Ordering::SeqCst);
        assert!(most <= OPENING_AT_ONCE, "{most} links opened at once");
        assert!(most > width, "the later hosts' links opened beside the workers ({most})");
    }

    #[test]
    fn nothing_opens_ahead_when_the_workers_take_every_host() {
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let slow = Arc::new(Slow { opened: AtomicUsize::new(0), now, most });
        let links = vec![Some(Arc::clone(&slow) as Arc<dyn Connection>), None];
        opening_ahead(links, 2, || ());
        assert!(!slow.is_open());
    }

    #[test]
    fn one_worker_reaches_its_hosts_one_at_a_time() {
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let slow = Arc::new(Slow { opened: AtomicUsize::new(0), now, most });
        let links = vec![None, Some(Arc::clone(&slow) as Arc<dyn Connection>)];
        opening_ahead(links, 1, || ());
        assert!(!slow.is_open(), "nothing opened beside the one worker");
    }
}
