//! The run queue several servers may share: runs are queued with the incarnation as it is
//! then, claimed by exactly one controller, fenced by an attempt number, cancelled, and marked
//! `interrupted` when the controller running them is gone. A run is never run again by
//! itself.
//!
//! Claiming is one statement: PostgreSQL takes the oldest queued row no other transaction
//! holds (`FOR UPDATE SKIP LOCKED`); SQLite, with its single writer, needs no lock clause.
//! Controllers say they are alive every few seconds; one whose heartbeat is older than
//! [`STALE_MS`], or a process of this machine that no longer exists, is gone.

use sqlx::Row;

use crate::incarnations::{Incarnation, parse_spec};
use crate::store::{Backend, RunStatus, Store, StoreError, now_ms};

/// How old a controller's heartbeat may be before its runs are interrupted.
pub const STALE_MS: i64 = 20_000;

/// A run this controller now holds.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub apply_id: String,
    pub attempt: i64,
    pub spec: Incarnation,
}

/// What a cancel request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// It was queued: it is cancelled and will never run.
    Cancelled,
    /// It is running: its controller stops it.
    Requested,
    /// It had already ended.
    AlreadyEnded(RunStatus),
    NotFound,
}

fn alive(pid: i64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

impl Store {
    /// Queues a run of `spec` started by `started_by`.
    pub async fn enqueue(
        &self,
        spec: &Incarnation,
        started_by: &str,
    ) -> Result<String, StoreError> {
        self.enqueue_as(spec, started_by, false).await
    }

    /// Queues a run of `spec`; `scheduled` when one of its schedules, not a person, asks.
    pub async fn enqueue_as(
        &self,
        spec: &Incarnation,
        started_by: &str,
        scheduled: bool,
    ) -> Result<String, StoreError> {
        let id = crate::store::new_run_id();
        let text = serde_json::to_string(spec).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query(
            "INSERT INTO runs (id, incarnation, mode, playbook, started_by, status, attempt, \
             queued_at, spec, scheduled) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9)",
        )
        .bind(&id)
        .bind(&spec.name)
        .bind(spec.mode.as_str())
        .bind(&spec.playbook)
        .bind(started_by)
        .bind(RunStatus::Queued.as_str())
        .bind(now_ms())
        .bind(text)
        .bind(i64::from(scheduled))
        .execute(self.pool())
        .await?;
        Ok(id)
    }

    /// Registers (or refreshes) controller `id` of this machine.
    pub async fn heartbeat(&self, id: &str, host: &str, pid: i64) -> Result<(), StoreError> {
        let now = now_ms();
        let done = sqlx::query("UPDATE controllers SET heartbeat_at = $1 WHERE id = $2")
            .bind(now)
            .bind(id)
            .execute(self.pool())
            .await?;
        if done.rows_affected() == 0 {
            sqlx::query(
                "INSERT INTO controllers (id, host, pid, started_at, heartbeat_at) VALUES ($1, \
                 $2, $3, $4, $4)",
            )
            .bind(id)
            .bind(host)
            .bind(pid)
            .bind(now)
            .execute(self.pool())
            .await?;
        }
        Ok(())
    }

    /// Forgets controller `id`, which ended (a command-line run's, once its run is stored as
    /// ended).
    pub async fn forget_controller(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM controllers WHERE id = $1").bind(id).execute(self.pool()).await?;
        Ok(())
    }

    /// Marks `interrupted` every running run whose controller is gone, and forgets those
    /// controllers. Returns the runs marked.
    pub async fn sweep_interrupted(&self, host: &str, me: &str) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        let rows = sqlx::query("SELECT id, host, pid, heartbeat_at FROM controllers")
            .fetch_all(self.pool())
            .await?;
        let mut gone = Vec::new();
        for r in &rows {
            let id: String = r.try_get("id")?;
            let (their_host, pid): (String, i64) = (r.try_get("host")?, r.try_get("pid")?);
            let beat: i64 = r.try_get("heartbeat_at")?;
            let dead_here = their_host == host && id != me && !alive(pid);
            if id != me && (now - beat > STALE_MS || dead_here) {
                gone.push(id);
            }
        }
        let mut marked = Vec::new();
        for controller in gone {
            let runs = sqlx::query(
                "UPDATE runs SET status = $1, finished_at = $2, error = $3 WHERE status = $4 AND \
                 controller = $5 RETURNING id",
            )
            .bind(RunStatus::Interrupted.as_str())
            .bind(now)
            .bind("its controller stopped before the run ended; it is not run again by itself")
            .bind(RunStatus::Running.as_str())
            .bind(&controller)
            .fetch_all(self.pool())
            .await?;
            for r in &runs {
                marked.push(r.try_get("id")?);
            }
            sqlx::query("DELETE FROM controllers WHERE id = $1")
                .bind(&controller)
                .execute(self.pool())
                .await?;
        }
        Ok(marked)
    }

    /// Takes the oldest queued run for `controller`, if there is one.
    pub async fn claim(&self, controller: &str) -> Result<Option<Claimed>, StoreError> {
        let lock = match self.backend() {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let sql = format!(
            "UPDATE runs SET status = $1, attempt = attempt + 1, controller = $2, started_at = \
             $3 WHERE status = $4 AND id = (SELECT id FROM runs WHERE status = $4 ORDER BY \
             queued_at, id LIMIT 1{lock}) RETURNING id, attempt, spec"
        );
        let row = sqlx::query(&sql)
            .bind(RunStatus::Running.as_str())
            .bind(controller)
            .bind(now_ms())
            .bind(RunStatus::Queued.as_str())
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let spec: Option<String> = row.try_get("spec")?;
        let apply_id: String = row.try_get("id")?;
        let Some(spec) = spec else {
            return Err(StoreError::Corrupt(format!("the queued run {apply_id} has no spec")));
        };
        Ok(Some(Claimed { apply_id, attempt: row.try_get("attempt")?, spec: parse_spec(&spec)? }))
    }

    /// Asks for run `id` to stop.
    pub async fn cancel(&self, id: &str) -> Result<Cancel, StoreError> {
        let queued = sqlx::query(
            "UPDATE runs SET status = $1, finished_at = $2 WHERE id = $3 AND status = $4",
        )
        .bind(RunStatus::Cancelled.as_str())
        .bind(now_ms())
        .bind(id)
        .bind(RunStatus::Queued.as_str())
        .execute(self.pool())
        .await?;
        if queued.rows_affected() == 1 {
            return Ok(Cancel::Cancelled);
        }
        let running =
            sqlx::query("UPDATE runs SET cancel_requested = 1 WHERE id = $1 AND status = $2")
                .bind(id)
                .bind(RunStatus::Running.as_str())
                .execute(self.pool())
                .await?;
        if running.rows_affected() == 1 {
            return Ok(Cancel::Requested);
        }
        Ok(match self.run(id).await? {
            Some(run) => Cancel::AlreadyEnded(run.status),
            None => Cancel::NotFound,
        })
    }

    /// Whether a stop was asked for run `id`.
    pub async fn cancel_requested(&self, id: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT cancel_requested FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(match row {
            Some(r) => r.try_get::<i64, _>("cancel_requested")? != 0,
            None => false,
        })
    }

    /// The status of run `id` as stored now.
    pub async fn status(&self, id: &str) -> Result<Option<RunStatus>, StoreError> {
        let row = sqlx::query("SELECT status FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let text: String = row.try_get("status")?;
        Ok(RunStatus::parse(&text))
    }
}
