//! The audit log: every change made through the server (runs started and cancelled,
//! incarnations created, changed and deleted, tokens made and revoked), who made it (the
//! token's name and id) and when, whether through the API or the page. Admins read it.
//!
//! What an entry says is chosen so it can never hold a secret: an incarnation's or a run's
//! extra vars are named, never given.

use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use crate::store::{Store, StoreError, now_ms};
use crate::tokens::Caller;

/// What was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    RunStart,
    RunCancel,
    IncarnationCreate,
    IncarnationUpdate,
    IncarnationDelete,
    TokenCreate,
    TokenRevoke,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::RunStart => "run.start",
            Action::RunCancel => "run.cancel",
            Action::IncarnationCreate => "incarnation.create",
            Action::IncarnationUpdate => "incarnation.update",
            Action::IncarnationDelete => "incarnation.delete",
            Action::TokenCreate => "token.create",
            Action::TokenRevoke => "token.revoke",
        }
    }
}

/// One entry, as served.
#[derive(Debug, Clone, Serialize)]
pub struct AuditEntry {
    pub seq: i64,
    /// Unix milliseconds.
    pub at: i64,
    pub actor: String,
    pub token_id: String,
    pub action: String,
    pub target: String,
    pub detail: Value,
}

/// How many entries one read returns at most.
pub const MAX_PAGE: i64 = 1000;

impl Store {
    /// Records that `caller` did `action` to `target`.
    pub async fn audit(
        &self,
        caller: &Caller,
        action: Action,
        target: &str,
        detail: &Value,
    ) -> Result<(), StoreError> {
        // Numbered one after the last: two servers writing at once collide on the key, and
        // the later takes the next number.
        let mut tries = 0;
        loop {
            let done = sqlx::query(
                "INSERT INTO audit_log (seq, at, actor, token_id, action, target, detail) SELECT \
                 COALESCE(MAX(seq), 0) + 1, $1, $2, $3, $4, $5, $6 FROM audit_log",
            )
            .bind(now_ms())
            .bind(&caller.name)
            .bind(&caller.token_id)
            .bind(action.as_str())
            .bind(target)
            .bind(detail.to_string())
            .execute(self.pool())
            .await;
            match done {
                Ok(_) => return Ok(()),
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() && tries < 10 => {
                    tries += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Entries newest first: `limit` of them, before entry `before` when given.
    pub async fn audit_log(
        &self,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, at, actor, token_id, action, target, detail FROM audit_log WHERE seq < \
             $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit.clamp(0, MAX_PAGE))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let detail: String = r.try_get("detail")?;
                Ok(AuditEntry {
                    seq: r.try_get("seq")?,
                    at: r.try_get("at")?,
                    actor: r.try_get("actor")?,
                    token_id: r.try_get("token_id")?,
                    action: r.try_get("action")?,
                    target: r.try_get("target")?,
                    detail: serde_json::from_str(&detail)
                        .map_err(|e| StoreError::Corrupt(format!("audit detail: {e}")))?,
                })
            })
            .collect()
    }
}
