//! The engine's event lines turned into the store's rows: each line is kept whole in the
//! run's event log, and in the same transaction what it says lands where the API reads it
//! (`task_start` → a task of the run plan, `task_result` → a host's row, `recap` → the run's
//! recap). A line is stored entirely or not at all.
//!
//! The lines arrive masked (`tack_report::callback::events` masks and marks before it writes),
//! so nothing here looks for secrets, and nothing here can bring one back.

use serde_json::Value;

use crate::store::{Store, StoreError};

/// One run's ingestion: where the next event goes.
pub struct Ingest {
    run: String,
    /// The last event stored, so a resumed run continues its numbering.
    seq: i64,
    /// The task results belong to: its index in the run, counted from 1.
    task: i64,
    result: i64,
    play: String,
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Ingest {
    pub fn new(run: String) -> Ingest {
        Ingest { run, seq: 0, task: 0, result: 0, play: String::new() }
    }

    pub fn run_id(&self) -> &str {
        &self.run
    }

    /// The number of the last event stored.
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// Stores one event line. A line that is not a JSON object with an `event` name is
    /// refused and changes nothing.
    pub async fn line(&mut self, store: &Store, line: &str) -> Result<(), StoreError> {
        let event: Value = serde_json::from_str(line)
            .map_err(|e| StoreError::Corrupt(format!("an event line that is not JSON: {e}")))?;
        let kind = event
            .get("event")
            .and_then(Value::as_str)
            .ok_or_else(|| StoreError::Corrupt("an event line without its event name".into()))?
            .to_string();
        let get = |k: &str| event.get(k).unwrap_or(&Value::Null);
        let seq = self.seq + 1;
        let mut tx = store.pool().begin().await?;
        sqlx::query("INSERT INTO run_events (run_id, seq, kind, body) VALUES ($1, $2, $3, $4)")
            .bind(&self.run)
            .bind(seq)
            .bind(&kind)
            .bind(line)
            .execute(&mut *tx)
            .await?;
        let (mut task, mut result, mut play) = (self.task, self.result, None);
        match kind.as_str() {
            "play_start" => play = text(get("play")),
            "task_start" => {
                task += 1;
                result = 0;
                let params = match get("params") {
                    Value::Null => None,
                    p => Some(p.to_string()),
                };
                let shared = get("params_shared").as_bool().map(i64::from);
                sqlx::query(
                    "INSERT INTO run_tasks (run_id, idx, play, name, action, handler, params, \
                     params_shared) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(&self.run)
                .bind(task)
                .bind(&self.play)
                .bind(text(get("task")).unwrap_or_default())
                .bind(text(get("action")).unwrap_or_default())
                .bind(i64::from(get("handler").as_bool().unwrap_or(false)))
                .bind(params)
                .bind(shared)
                .execute(&mut *tx)
                .await?;
                if let Value::Object(inputs) = get("params_per_host") {
                    for (host, input) in inputs {
                        sqlx::query(
                            "INSERT INTO run_task_inputs (run_id, task_idx, host, params) VALUES \
                             ($1, $2, $3, $4)",
                        )
                        .bind(&self.run)
                        .bind(task)
                        .bind(host)
                        .bind(input.to_string())
                        .execute(&mut *tx)
                        .await?;
                    }
                }
            }
            "task_result" if task > 0 => {
                result += 1;
                sqlx::query(
                    "INSERT INTO run_results (run_id, task_idx, seq, host, status, changed, \
                     ignored, stdout, stderr, exit_code, msg, duration, plan) VALUES ($1, $2, \
                     $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                )
                .bind(&self.run)
                .bind(task)
                .bind(result)
                .bind(text(get("host")).unwrap_or_default())
                .bind(text(get("status")).unwrap_or_default())
                .bind(i64::from(get("changed").as_bool().unwrap_or(false)))
                .bind(i64::from(get("ignored").as_bool().unwrap_or(false)))
                .bind(text(get("stdout")))
                .bind(text(get("stderr")))
                .bind(get("rc").as_i64())
                .bind(text(get("msg")))
                .bind(get("duration").as_f64().unwrap_or(0.0))
                .bind(text(get("plan")))
                .execute(&mut *tx)
                .await?;
            }
            "recap" => {
                sqlx::query("UPDATE runs SET recap = $1 WHERE id = $2")
                    .bind(get("hosts").to_string())
                    .bind(&self.run)
                    .execute(&mut *tx)
                    .await?;
            }
            _ => {}
        }
        tx.commit().await?;
        self.seq = seq;
        self.task = task;
        self.result = result;
        if let Some(play) = play {
            self.play = play;
        }
        Ok(())
    }
}
