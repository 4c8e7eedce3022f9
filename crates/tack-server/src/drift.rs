//! Drift: an incarnation whose scheduled `plan` or `check` run found something that would
//! change (or that a plan could not call unchanged: a task that would run, one deferred on
//! output only an apply gives) is **drifted**, with what the run found per host and task. The
//! next apply of it that succeeds clears the mark; so does a scheduled run that finds nothing.
//! The mark changes in the transaction that ends the run ([`crate::Store::finish_run`]).
//! A scheduled run that fails or is stopped leaves the mark as it was: it found nothing out.

use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::store::{RunStatus, Store, StoreError};

/// One host and task a scheduled run found would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub host: String,
    pub task: String,
    /// `would_change`, `would_run` or `deferred`.
    pub outcome: String,
}

/// A drifted incarnation, as the API serves it.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub incarnation: String,
    /// The scheduled run that found it.
    pub apply_id: String,
    /// Unix milliseconds.
    pub detected_at: i64,
    pub changes: Vec<Change>,
}

/// What a run's end does to its incarnation's drift mark.
pub(crate) enum DriftUpdate {
    Keep,
    Clear(String),
    Mark { incarnation: String, changes: String },
}

impl DriftUpdate {
    /// Applies the update as part of `tx`, the transaction that ends run `apply_id` at `now`:
    /// whoever reads the run ended reads its drift too.
    pub(crate) async fn apply(
        self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        apply_id: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        let name = match &self {
            DriftUpdate::Keep => return Ok(()),
            DriftUpdate::Clear(name) | DriftUpdate::Mark { incarnation: name, .. } => name,
        };
        sqlx::query("DELETE FROM drift WHERE incarnation = $1")
            .bind(name)
            .execute(&mut **tx)
            .await?;
        if let DriftUpdate::Mark { incarnation, changes } = &self {
            sqlx::query(
                "INSERT INTO drift (incarnation, run_id, detected_at, changes) VALUES ($1, $2, \
                 $3, $4)",
            )
            .bind(incarnation)
            .bind(apply_id)
            .bind(now)
            .bind(changes)
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }
}

impl Store {
    /// What ending run `apply_id` as `status` does to the drift mark (see the module's
    /// words). Read before the run is ended: its results are all stored by then.
    pub(crate) async fn drift_update(
        &self,
        apply_id: &str,
        status: RunStatus,
    ) -> Result<DriftUpdate, StoreError> {
        if status != RunStatus::Success {
            return Ok(DriftUpdate::Keep);
        }
        let Some(run) = self.run(apply_id).await? else { return Ok(DriftUpdate::Keep) };
        let Some(name) = run.incarnation else { return Ok(DriftUpdate::Keep) };
        if run.mode == "apply" {
            return Ok(DriftUpdate::Clear(name));
        }
        if !run.scheduled {
            return Ok(DriftUpdate::Keep);
        }
        let changes = self.changes(apply_id).await?;
        if changes.is_empty() {
            return Ok(DriftUpdate::Clear(name));
        }
        let changes =
            serde_json::to_string(&changes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(DriftUpdate::Mark { incarnation: name, changes })
    }

    pub(crate) async fn clear_drift(&self, name: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM drift WHERE incarnation = $1")
            .bind(name)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// What run `apply_id` found would change, in the order it ran.
    async fn changes(&self, apply_id: &str) -> Result<Vec<Change>, StoreError> {
        let rows = sqlx::query(
            "SELECT r.host AS host, t.name AS task, r.changed AS changed, r.plan AS plan FROM \
             run_results r JOIN run_tasks t ON t.run_id = r.run_id AND t.idx = r.task_idx WHERE \
             r.run_id = $1 AND (r.changed = 1 OR r.plan IS NOT NULL) ORDER BY r.task_idx, r.seq",
        )
        .bind(apply_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let plan: Option<String> = r.try_get("plan")?;
                let changed = r.try_get::<i64, _>("changed")? != 0;
                let outcome = match plan {
                    Some(plan) if !changed => plan,
                    _ => "would_change".to_string(),
                };
                Ok(Change { host: r.try_get("host")?, task: r.try_get("task")?, outcome })
            })
            .collect()
    }

    /// The incarnation `name`'s drift mark, if it is drifted.
    pub async fn drift(&self, name: &str) -> Result<Option<Drift>, StoreError> {
        Ok(self.drifts_where(Some(name)).await?.pop())
    }

    /// Every drifted incarnation, by name.
    pub async fn drifts(&self) -> Result<Vec<Drift>, StoreError> {
        self.drifts_where(None).await
    }

    async fn drifts_where(&self, name: Option<&str>) -> Result<Vec<Drift>, StoreError> {
        const COLUMNS: &str = "SELECT incarnation, run_id, detected_at, changes FROM drift";
        let rows = match name {
            Some(name) => {
                sqlx::query(&format!("{COLUMNS} WHERE incarnation = $1"))
                    .bind(name)
                    .fetch_all(self.pool())
                    .await?
            }
            None => {
                sqlx::query(&format!("{COLUMNS} ORDER BY incarnation"))
                    .fetch_all(self.pool())
                    .await?
            }
        };
        rows.iter()
            .map(|r| {
                let changes: String = r.try_get("changes")?;
                Ok(Drift {
                    incarnation: r.try_get("incarnation")?,
                    apply_id: r.try_get("run_id")?,
                    detected_at: r.try_get("detected_at")?,
                    changes: serde_json::from_str(&changes)
                        .map_err(|e| StoreError::Corrupt(format!("drift changes: {e}")))?,
                })
            })
            .collect()
    }
}
