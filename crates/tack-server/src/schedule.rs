//! Schedules: an incarnation may carry cron patterns (vixie cron's five fields, `@daily` and
//! the like, in UTC or a named time zone) that queue `plan` or `check` runs of it. Apply runs
//! are people's to start: a schedule asking for one is refused when the spec is checked.
//!
//! Each schedule has a mark in the store, `covered_until`: every occurrence up to it has been
//! handled. A look at the schedules ([`tick`]) at time `now` queues one run of a schedule whose
//! next occurrence after its mark has come, and moves the mark to `now`; so a server that was
//! down for a week runs a daily schedule once when it starts, not seven times. The mark moves
//! by compare-and-set, so of several servers sharing a store exactly one queues each run. A
//! schedule seen for the first time (new, or edited: its text is its name) starts its mark at
//! `now`, with nothing to catch up. While a run one of an incarnation's schedules queued is
//! still queued or running, none of its schedules queues another and their marks stay: a slow
//! plan on a frequent schedule runs once more when it ends, never piles up.
//!
//! Time comes from a [`Clock`], so a test moves it instead of sleeping.

use std::sync::Arc;
use std::time::Duration;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use tokio::sync::Notify;

use crate::incarnations::{Invalid, Mode};
use crate::store::{Store, StoreError};

/// One schedule of an incarnation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Five fields (minute, hour, day of month, month, day of week) or `@hourly`, `@daily`,
    /// `@weekly`, `@monthly`, `@yearly`.
    pub cron: String,
    /// An IANA time zone (`Europe/Berlin`); UTC when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// `plan` (the default) or `check`.
    #[serde(default = "plan")]
    pub mode: Mode,
}

fn plan() -> Mode {
    Mode::Plan
}

/// The most schedules one incarnation carries.
pub const MAX_SCHEDULES: usize = 20;

impl Schedule {
    fn parse(&self) -> Result<(Cron, jiff::tz::TimeZone), Invalid> {
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(&self.cron)
            .map_err(|e| {
                Invalid(format!(
                    "the schedule {:?} is not a cron pattern of five fields (minute hour \
                     day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, \
                     @yearly: {e}",
                    self.cron
                ))
            })?;
        let zone = match &self.timezone {
            None => jiff::tz::TimeZone::UTC,
            Some(name) => jiff::tz::TimeZone::get(name).map_err(|_| {
                Invalid(format!(
                    "the schedule {:?} names the time zone {name:?}, which is not one this \
                     server knows (an IANA name such as Europe/Berlin)",
                    self.cron
                ))
            })?,
        };
        Ok((cron, zone))
    }

    /// Checks the schedule as the spec is stored.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.mode == Mode::Apply {
            return Err(Invalid(format!(
                "the schedule {:?} asks for apply runs: a schedule queues plan or check runs; \
                 apply runs are started by people",
                self.cron
            )));
        }
        self.parse().map(|_| ())
    }

    /// What the store knows the schedule by: changing any part of it makes a new one.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}",
            self.cron,
            self.timezone.as_deref().unwrap_or("UTC"),
            self.mode.as_str()
        )
    }

    /// The first time (Unix milliseconds) after `after` the schedule comes due.
    pub fn next_after(&self, after: i64) -> Option<i64> {
        let (cron, zone) = self.parse().ok()?;
        let start = jiff::Timestamp::from_millisecond(after).ok()?.to_zoned(zone);
        let next = cron.find_next_occurrence(&start, false).ok()?;
        Some(next.timestamp().as_millisecond())
    }
}

/// Where the schedules read the time.
pub trait Clock: Send + Sync {
    /// Unix milliseconds.
    fn now_ms(&self) -> i64;
}

/// The machine's clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        crate::store::now_ms()
    }
}

/// A run a look at the schedules queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub incarnation: String,
    pub schedule: String,
    pub apply_id: String,
}

/// Looks at every incarnation's schedules as of `now`: queues each run that has come due
/// (one per schedule, however many occurrences were missed) and says which.
pub async fn tick(store: &Store, now: i64) -> Result<Vec<Fired>, StoreError> {
    let mut fired = Vec::new();
    for spec in store.incarnations().await? {
        if spec.schedules.is_empty() || store.scheduled_run_pending(&spec.name).await? {
            continue;
        }
        for schedule in &spec.schedules {
            let key = schedule.key();
            let Some(covered) = store.schedule_mark(&spec.name, &key).await? else {
                store.start_schedule_mark(&spec.name, &key, now).await?;
                continue;
            };
            let due = schedule.next_after(covered).is_some_and(|next| next <= now);
            // Another server may have moved the mark: then that server queues the run.
            if !due || !store.move_schedule_mark(&spec.name, &key, covered, now).await? {
                continue;
            }
            let mut run = spec.clone();
            run.mode = schedule.mode;
            let by = format!("schedule {}", schedule.key().replace('|', " "));
            let apply_id = store.enqueue_as(&run, &by, true).await?;
            fired.push(Fired { incarnation: spec.name.clone(), schedule: key, apply_id });
            // One scheduled run of an incarnation at a time (see the module's words).
            break;
        }
    }
    Ok(fired)
}

/// How often the server looks at the schedules (their patterns count in minutes).
const LOOK_EVERY: Duration = Duration::from_secs(10);

/// Looks at the schedules until the process ends, waking the runner when a run was queued.
pub async fn run_schedules(store: Store, clock: Arc<dyn Clock>, wake: Arc<Notify>) {
    loop {
        match tick(&store, clock.now_ms()).await {
            Ok(fired) if !fired.is_empty() => wake.notify_one(),
            Ok(_) => {}
            Err(e) => eprintln!("tack serve: cannot look at the schedules: {e}"),
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

impl Store {
    /// Drops the marks of the incarnation `name`'s schedules but those in `keep` (a schedule
    /// edited away, or the incarnation deleted).
    pub(crate) async fn forget_schedules(
        &self,
        name: &str,
        keep: &[String],
    ) -> Result<(), StoreError> {
        let rows = sqlx::query("SELECT schedule FROM schedule_state WHERE incarnation = $1")
            .bind(name)
            .fetch_all(self.pool())
            .await?;
        for row in rows {
            let key: String = row.try_get("schedule")?;
            if keep.contains(&key) {
                continue;
            }
            sqlx::query("DELETE FROM schedule_state WHERE incarnation = $1 AND schedule = $2")
                .bind(name)
                .bind(&key)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }

    /// Whether a run a schedule of the incarnation `name` queued is still queued or running.
    async fn scheduled_run_pending(&self, name: &str) -> Result<bool, StoreError> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM runs WHERE incarnation = $1 AND scheduled = 1 AND status \
             IN ($2, $3)",
        )
        .bind(name)
        .bind(crate::store::RunStatus::Queued.as_str())
        .bind(crate::store::RunStatus::Running.as_str())
        .fetch_one(self.pool())
        .await?;
        Ok(row.try_get::<i64, _>("n")? > 0)
    }

    async fn schedule_mark(&self, incarnation: &str, key: &str) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query(
            "SELECT covered_until FROM schedule_state WHERE incarnation = $1 AND schedule = $2",
        )
        .bind(incarnation)
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| r.try_get("covered_until")).transpose()?)
    }

    async fn start_schedule_mark(
        &self,
        incarnation: &str,
        key: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO schedule_state (incarnation, schedule, covered_until) VALUES ($1, $2, \
             $3) ON CONFLICT (incarnation, schedule) DO NOTHING",
        )
        .bind(incarnation)
        .bind(key)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Moves the mark from `from` to `to`; false when it was no longer at `from`.
    async fn move_schedule_mark(
        &self,
        incarnation: &str,
        key: &str,
        from: i64,
        to: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE schedule_state SET covered_until = $1 WHERE incarnation = $2 AND schedule = \
             $3 AND covered_until = $4",
        )
        .bind(to)
        .bind(incarnation)
        .bind(key)
        .bind(from)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        text.parse::<jiff::Timestamp>().unwrap().as_millisecond()
    }

    fn schedule(cron: &str, timezone: Option<&str>) -> Schedule {
        Schedule { cron: cron.into(), timezone: timezone.map(str::to_string), mode: Mode::Plan }
    }

    #[test]
    fn the_next_time_is_in_the_schedules_zone() {
        let utc = schedule("30 2 * * *", None);
        assert_eq!(utc.next_after(at("2026-12-07T10:00:00Z")), Some(at("2026-12-08T02:30:00Z")));
        let berlin = schedule("30 2 * * *", Some("Europe/Berlin"));
        assert_eq!(berlin.next_after(at("2026-12-07T10:00:00Z")), Some(at("2026-12-08T01:30:00Z")));
        let daily = schedule("@daily", None);
        assert_eq!(daily.next_after(at("2026-12-07T00:00:00Z")), Some(at("2026-12-08T00:00:00Z")));
    }

    #[test]
    fn bad_schedules_are_refused_by_name() {
        for (bad, says) in [
            (schedule("61 * * * *", None), "not a cron pattern"),
            (schedule("0 0 * * * *", None), "not a cron pattern"),
            (schedule("0 0 * * *", Some("Mars/Olympus")), "Mars/Olympus"),
        ] {
            let err = bad.validate().unwrap_err();
            assert!(err.0.contains(says), "{err}");
        }
        let apply = Schedule { mode: Mode::Apply, ..schedule("0 0 * * *", None) };
        assert!(apply.validate().unwrap_err().0.contains("apply runs are started by people"));
    }
}
