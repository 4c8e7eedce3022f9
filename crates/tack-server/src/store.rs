//! The database every run is kept in: opening it (creating a SQLite file private to its
//! owner), migrating it, and the queries over runs, their plan, results and events.
//!
//! Both backends go through sqlx's `Any` driver with `$N` placeholders, which SQLite reads as
//! PostgreSQL does, so there is one query text per question. Values are the types both store
//! alike: text, 64-bit integers (flags as 0/1, times as Unix milliseconds) and doubles; JSON
//! travels as text.
//!
//! What this module must not do: interpret events (that is [`crate::ingest`]) or decide who
//! may read what (that is the server's).

use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

/// The schema's migrations, embedded in the binary. Listed here rather than read by sqlx's
/// `migrate!` macro: the macro builds all of sqlx a second time for the compiler (minutes on
/// two cores) to do what these lines do.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "runs", include_str!("../migrations/0001_runs.sql")),
    (2, "serve", include_str!("../migrations/0002_serve.sql")),
    (3, "transcript", include_str!("../migrations/0003_transcript.sql")),
    (4, "task_inputs", include_str!("../migrations/0004_task_inputs.sql")),
    (5, "operate", include_str!("../migrations/0005_operate.sql")),
    (6, "schedules", include_str!("../migrations/0006_schedules.sql")),
];

#[derive(Debug)]
struct Embedded;

impl sqlx::migrate::MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> futures_util::future::BoxFuture<
        'static,
        Result<Vec<sqlx::migrate::Migration>, sqlx::error::BoxDynError>,
    > {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, name, sql)| {
                    sqlx::migrate::Migration::new(
                        version,
                        name.into(),
                        sqlx::migrate::MigrationType::Simple,
                        sql.into(),
                        false,
                    )
                })
                .collect())
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the run store {0:?} is not a database URL tack opens: use sqlite://PATH or \
         postgres://USER@HOST/DB"
    )]
    UnsupportedUrl(String),
    #[error("cannot create the run store {path}: {source}")]
    CreateFile { path: PathBuf, source: std::io::Error },
    #[error("cannot open the run store {url}: {source}")]
    Open { url: String, source: sqlx::Error },
    #[error("cannot migrate the run store {url}: {source}")]
    Migrate { url: String, source: sqlx::migrate::MigrateError },
    #[error("the run store failed: {0}")]
    Query(#[from] sqlx::Error),
    #[error("the run store holds a value tack cannot read: {0}")]
    Corrupt(String),
}

/// Which database a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Queued,
    Running,
    Success,
    Failed,
    Unreachable,
    Cancelled,
    /// Its controller stopped before it ended; never run again by itself.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Success => "success",
            RunStatus::Failed => "failed",
            RunStatus::Unreachable => "unreachable",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        [
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::Success,
            RunStatus::Failed,
            RunStatus::Unreachable,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// How a finished run's exit code reads: ansible's 0, 4 for unreachable hosts, else failed.
    pub fn from_exit_code(code: u8) -> RunStatus {
        match code {
            0 => RunStatus::Success,
            4 => RunStatus::Unreachable,
            _ => RunStatus::Failed,
        }
    }

    pub fn is_final(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

/// A run about to be stored.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// `None` for a run recorded from the command line.
    pub incarnation: Option<String>,
    /// `apply`, `check` or `plan`.
    pub mode: String,
    pub playbook: String,
    /// Who started it: a token's name, or `user@host` on the command line.
    pub started_by: String,
}

/// A stored run, as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub apply_id: String,
    pub incarnation: Option<String>,
    pub mode: String,
    pub playbook: String,
    pub started_by: String,
    pub status: RunStatus,
    pub attempt: i64,
    pub queued_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
    pub recap: Option<serde_json::Value>,
    /// Queued by one of its incarnation's schedules, not by a person.
    pub scheduled: bool,
}

/// One task of a run's plan with its hosts' results: how many of each status, and the
/// results of one window of its hosts (in the order they came).
#[derive(Debug, Clone, Serialize)]
pub struct TaskRecord {
    pub index: i64,
    pub play: String,
    pub name: String,
    pub module: String,
    pub handler: bool,
    /// The first host's params, masked then marked; `None` where the engine sent none.
    pub params: Option<serde_json::Value>,
    pub params_shared: Option<bool>,
    /// How many hosts have a result for the task.
    pub hosts_total: i64,
    /// How many results have each status.
    pub host_counts: std::collections::BTreeMap<String, i64>,
    /// The results of the window asked for ([`HostWindow`]).
    pub hosts: Vec<HostRecord>,
}

/// Which of each task's host results to read: the `limit` after the first `offset`, in the
/// order they came. A run of 1,000 hosts is read a page at a time.
#[derive(Debug, Clone, Copy)]
pub struct HostWindow {
    pub offset: i64,
    pub limit: i64,
}

impl HostWindow {
    /// How many hosts a page shows when the caller does not say.
    pub const PAGE: i64 = 100;
    /// The most one request may ask for.
    pub const MAX: i64 = 1000;

    pub fn all() -> HostWindow {
        HostWindow { offset: 0, limit: i64::MAX }
    }

    pub fn none() -> HostWindow {
        HostWindow { offset: 0, limit: 0 }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct HostRecord {
    pub host: String,
    pub status: String,
    pub changed: bool,
    pub ignored: bool,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit_code: Option<i64>,
    pub msg: Option<String>,
    pub duration: f64,
    /// The host's own input to the task, masked, where the hosts' inputs differ (absent where
    /// every host received the task's shared `params`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
}

/// One stored event line.
#[derive(Debug, Clone)]
pub struct EventRecord {
    pub seq: i64,
    pub kind: String,
    pub body: String,
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A run id: the time it was made (so ids sort by age) and 64 random bits.
pub(crate) fn new_run_id() -> String {
    let mut random = [0u8; 8];
    // Without an entropy source the time part alone still keeps ids apart in practice; the
    // primary key refuses a duplicate rather than mixing two runs.
    let _ = getrandom::fill(&mut random);
    format!("{:012x}{:016x}", now_ms(), u64::from_le_bytes(random))
}

/// `sqlite://PATH` made ready to open: its file created private (0600) if missing, and the
/// URL asking sqlx to open it read-write.
fn prepare_sqlite(url: &str) -> Result<String, StoreError> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"));
    let Some(rest) = rest.filter(|r| !r.is_empty()) else {
        return Err(StoreError::UnsupportedUrl(url.to_string()));
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = Path::new(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|source| StoreError::CreateFile { path: dir.to_path_buf(), source })?;
    }
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| StoreError::CreateFile { path: path.to_path_buf(), source })?;
    let mode = if query.split('&').any(|p| p.starts_with("mode=")) { "" } else { "mode=rwc" };
    let sep = if query.is_empty() || mode.is_empty() { "" } else { "&" };
    Ok(format!("sqlite://{}?{query}{sep}{mode}", path.display()))
}

impl Store {
    /// Opens (creating a SQLite file if need be) and migrates the store at `url`.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        static DRIVERS: Once = Once::new();
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let (backend, connect) = if url.starts_with("sqlite:") {
            (Backend::Sqlite, prepare_sqlite(url)?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        };
        let shown = redact(url);
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 4 } else { 8 })
            // A store that does not answer stops the command soon, not after sqlx's 30 s.
            .acquire_timeout(std::time::Duration::from_secs(10))
            .connect(&connect)
            .await
            .map_err(|source| StoreError::Open { url: shown.clone(), source })?;
        if backend == Backend::Sqlite {
            // Readers (the server, its page) never wait behind the run that writes.
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let migrator = sqlx::migrate::Migrator::new(Embedded)
            .await
            .map_err(|source| StoreError::Migrate { url: shown.clone(), source })?;
        migrator.run(&pool).await.map_err(|source| StoreError::Migrate { url: shown, source })?;
        Ok(Store { pool, backend })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Stores a run that starts now on this controller (`tack playbook --record`).
    pub async fn start_run(&self, run: &NewRun, controller: &str) -> Result<String, StoreError> {
        let id = new_run_id();
        let now = now_ms();
        sqlx::query(
            "INSERT INTO runs (id, incarnation, mode, playbook, started_by, status, attempt, \
             controller, queued_at, started_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $8)",
        )
        .bind(&id)
        .bind(run.incarnation.as_deref())
        .bind(&run.mode)
        .bind(&run.playbook)
        .bind(&run.started_by)
        .bind(RunStatus::Running.as_str())
        .bind(controller)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(id)
    }

    /// Ends a running run of `attempt`; a controller that lost the run (another claimed it,
    /// or it was marked interrupted or cancelled since) changes nothing. Returns whether the
    /// run was this attempt's to end.
    pub async fn finish_run(
        &self,
        id: &str,
        attempt: i64,
        status: RunStatus,
        exit_code: Option<i64>,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let drift = self.drift_update(id, status).await?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE runs SET status = $1, finished_at = $2, exit_code = $3, error = $4 \
             WHERE id = $5 AND attempt = $6 AND status = $7",
        )
        .bind(status.as_str())
        .bind(now)
        .bind(exit_code)
        .bind(error)
        .bind(id)
        .bind(attempt)
        .bind(RunStatus::Running.as_str())
        .execute(&mut *tx)
        .await?;
        let ended = done.rows_affected() == 1;
        // Only the attempt that held the run says what it found.
        if ended {
            drift.apply(&mut tx, id, now).await?;
        }
        tx.commit().await?;
        Ok(ended)
    }

    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        let row = sqlx::query(&format!("{RUN_COLUMNS} WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| run_record(&r)).transpose()
    }

    /// Every run, newest first; those of one incarnation where one is named.
    pub async fn runs(&self, incarnation: Option<&str>) -> Result<Vec<RunRecord>, StoreError> {
        let rows = match incarnation {
            Some(name) => {
                sqlx::query(&format!(
                    "{RUN_COLUMNS} WHERE incarnation = $1 ORDER BY queued_at DESC, id DESC"
                ))
                .bind(name)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query(&format!("{RUN_COLUMNS} ORDER BY queued_at DESC, id DESC"))
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(run_record).collect()
    }

    /// A run's plan, task by task, each with its status counts and the results of `window`
    /// of its hosts (`only`: that task alone).
    pub async fn tasks(
        &self,
        id: &str,
        window: HostWindow,
        only: Option<i64>,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let tasks = sqlx::query(
            "SELECT idx, play, name, action, handler, params, params_shared FROM run_tasks \
             WHERE run_id = $1 ORDER BY idx",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let counts = sqlx::query(
            "SELECT task_idx, status, COUNT(*) AS n FROM run_results WHERE run_id = $1 \
             GROUP BY task_idx, status",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        // A task's results are numbered from 1 in the order they came (`crate::ingest`): a
        // window is a range of those numbers, read through the primary key.
        let last = window.offset.saturating_add(window.limit);
        let results = if window.limit == 0 {
            Vec::new()
        } else {
            sqlx::query(
                "SELECT r.task_idx, r.host, r.status, r.changed, r.ignored, r.stdout, r.stderr, \
                 r.exit_code, r.msg, r.duration, i.params AS input FROM run_results r LEFT JOIN \
                 run_task_inputs i ON i.run_id = r.run_id AND i.task_idx = r.task_idx AND \
                 i.host = r.host WHERE r.run_id = $1 AND r.seq > $2 AND r.seq <= $3 AND \
                 ($4 < 0 OR r.task_idx = $4) ORDER BY r.task_idx, r.seq",
            )
            .bind(id)
            .bind(window.offset)
            .bind(last)
            .bind(only.unwrap_or(-1))
            .fetch_all(&self.pool)
            .await?
        };
        let mut out = Vec::with_capacity(tasks.len());
        let mut at = std::collections::HashMap::new();
        for t in &tasks {
            let params: Option<String> = t.try_get("params")?;
            let shared: Option<i64> = t.try_get("params_shared")?;
            let index: i64 = t.try_get("idx")?;
            at.insert(index, out.len());
            out.push(TaskRecord {
                index,
                play: t.try_get("play")?,
                name: t.try_get("name")?,
                module: t.try_get("action")?,
                handler: t.try_get::<i64, _>("handler")? != 0,
                params: params.as_deref().map(json).transpose()?,
                params_shared: shared.map(|s| s != 0),
                hosts_total: 0,
                host_counts: Default::default(),
                hosts: Vec::new(),
            });
        }
        for c in &counts {
            let idx: i64 = c.try_get("task_idx")?;
            let Some(task) = at.get(&idx).map(|&i| &mut out[i]) else { continue };
            let n: i64 = c.try_get("n")?;
            task.hosts_total += n;
            task.host_counts.insert(c.try_get("status")?, n);
        }
        for r in &results {
            let idx: i64 = r.try_get("task_idx")?;
            let Some(task) = at.get(&idx).map(|&i| &mut out[i]) else { continue };
            task.hosts.push(HostRecord {
                host: r.try_get("host")?,
                status: r.try_get("status")?,
                changed: r.try_get::<i64, _>("changed")? != 0,
                ignored: r.try_get::<i64, _>("ignored")? != 0,
                stdout: r.try_get("stdout")?,
                stderr: r.try_get("stderr")?,
                exit_code: r.try_get("exit_code")?,
                msg: r.try_get("msg")?,
                duration: r.try_get("duration")?,
                input: r.try_get::<Option<String>, _>("input")?.as_deref().map(json).transpose()?,
            });
        }
        if let Some(only) = only {
            out.retain(|t| t.index == only);
        }
        Ok(out)
    }

    /// Adds line `seq` (from 1) of what run `id` printed (masked by the caller, as event
    /// lines are).
    pub async fn add_transcript_line(
        &self,
        id: &str,
        seq: i64,
        line: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO run_transcript (run_id, seq, line) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq)
            .bind(line)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// What run `id` printed, as stored: its lines after `after` (0 for all), in order.
    pub async fn transcript(&self, id: &str, after: i64) -> Result<Vec<(i64, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, line FROM run_transcript WHERE run_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id)
        .bind(after)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok((r.try_get("seq")?, r.try_get("line")?))).collect()
    }

    /// The last `count` lines run `id` printed, in order.
    pub async fn transcript_tail(
        &self,
        id: &str,
        count: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, line FROM run_transcript WHERE run_id = $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(id)
        .bind(count)
        .fetch_all(&self.pool)
        .await?;
        let mut lines: Vec<(i64, String)> = rows
            .iter()
            .map(|r| Ok((r.try_get("seq")?, r.try_get("line")?)))
            .collect::<Result<_, StoreError>>()?;
        lines.reverse();
        Ok(lines)
    }

    /// A run's events after `after` (0 for all), in order.
    pub async fn events(&self, id: &str, after: i64) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, kind, body FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id)
        .bind(after)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(EventRecord {
                    seq: r.try_get("seq")?,
                    kind: r.try_get("kind")?,
                    body: r.try_get("body")?,
                })
            })
            .collect()
    }
}

const RUN_COLUMNS: &str = "SELECT id, incarnation, mode, playbook, started_by, status, attempt, \
                           queued_at, started_at, finished_at, exit_code, error, recap, scheduled FROM runs";

fn json(text: &str) -> Result<serde_json::Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{e}: {text:.80}")))
}

fn run_record(r: &AnyRow) -> Result<RunRecord, StoreError> {
    let status: String = r.try_get("status")?;
    let recap: Option<String> = r.try_get("recap")?;
    Ok(RunRecord {
        apply_id: r.try_get("id")?,
        incarnation: r.try_get("incarnation")?,
        mode: r.try_get("mode")?,
        playbook: r.try_get("playbook")?,
        started_by: r.try_get("started_by")?,
        status: RunStatus::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("run status {status:?}")))?,
        attempt: r.try_get("attempt")?,
        queued_at: r.try_get("queued_at")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
        exit_code: r.try_get("exit_code")?,
        error: r.try_get("error")?,
        recap: recap.as_deref().map(json).transpose()?,
        scheduled: r.try_get::<i64, _>("scheduled")? != 0,
    })
}

/// A database URL fit to print: its password, if it has one, replaced.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((auth, host)) = rest.split_once('@') else { return url.to_string() };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:********@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_url_is_never_shown() {
        assert_eq!(redact("postgres://tack:s3cret@db/runs"), "postgres://tack:********@db/runs");
        assert_eq!(redact("postgres://tack@db/runs"), "postgres://tack@db/runs");
        assert_eq!(redact("sqlite:///var/lib/tack/runs.db"), "sqlite:///var/lib/tack/runs.db");
    }

    #[test]
    fn statuses_read_back() {
        for code in [0u8, 2, 4] {
            let status = RunStatus::from_exit_code(code);
            assert_eq!(RunStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(RunStatus::from_exit_code(4), RunStatus::Unreachable);
    }
}
