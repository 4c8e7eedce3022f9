//! Incarnations: a named (project directory, playbook, inventory, extra vars, vault password
//! source, limit, tags, mode) that the server runs again and again. The spec is checked
//! before it is stored; a run keeps the spec it was queued with, so editing an incarnation
//! never changes a run already asked for.

use std::path::{Component, Path};

use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::store::{Store, StoreError, now_ms};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Apply,
    Check,
    Plan,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Apply => "apply",
            Mode::Check => "check",
            Mode::Plan => "plan",
        }
    }

    pub const ALL: [Mode; 3] = [Mode::Apply, Mode::Check, Mode::Plan];

    pub fn parse(text: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// `tags` as ansible takes them: one comma-separated string or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Tags {
    One(String),
    Many(Vec<String>),
}

impl Tags {
    pub fn joined(&self) -> String {
        match self {
            Tags::One(s) => s.clone(),
            Tags::Many(v) => v.join(","),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incarnation {
    pub name: String,
    /// Absolute; every other path is relative to it.
    pub project_dir: String,
    pub playbook: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_vars: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault_password_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
    #[serde(default = "apply")]
    pub mode: Mode,
    /// When the server queues plan or check runs of it by itself ([`crate::schedule`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<crate::schedule::Schedule>,
}

fn apply() -> Mode {
    Mode::Apply
}

/// Why a spec was refused, in words a person can act on.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct Invalid(pub String);

/// The largest `extra_vars` an incarnation takes, as JSON text (a run hands them to its child
/// in a file; a spec this large is a mistake, not configuration).
pub const MAX_EXTRA_VARS: usize = 64 * 1024;

impl Incarnation {
    /// The spec as `role` may read it: extra vars may hold secrets, so below admin each
    /// value is `********` (the names stay, to say what a run is given).
    pub fn shown_to(mut self, role: crate::tokens::Role) -> Incarnation {
        if role < crate::tokens::Role::Admin
            && let Some(vars) = self.extra_vars.as_mut()
        {
            for value in vars.values_mut() {
                *value = serde_json::Value::String("********".into());
            }
        }
        self
    }

    /// Checks the spec as stored: a usable name, an existing absolute project directory,
    /// and every other path inside it.
    pub fn validate(&self) -> Result<(), Invalid> {
        // `.` and `..` would name the collection and its parent in a URL path.
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 100
            && self.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && self.name != "."
            && self.name != "..";
        if !name_ok {
            return Err(Invalid(format!(
                "the incarnation name {:?} must be 1 to 100 letters, digits, '.', '_' or '-', \
                 and not '.' or '..'",
                self.name
            )));
        }
        let vars_size = self
            .extra_vars
            .as_ref()
            .map_or(0, |v| serde_json::to_string(v).map_or(usize::MAX, |text| text.len()));
        if vars_size > MAX_EXTRA_VARS {
            return Err(Invalid(format!(
                "extra_vars take {vars_size} bytes as JSON; at most {MAX_EXTRA_VARS} are taken"
            )));
        }
        if self.schedules.len() > crate::schedule::MAX_SCHEDULES {
            return Err(Invalid(format!(
                "{} schedules: an incarnation carries at most {}",
                self.schedules.len(),
                crate::schedule::MAX_SCHEDULES
            )));
        }
        for schedule in &self.schedules {
            schedule.validate()?;
        }
        let dir = Path::new(&self.project_dir);
        if !dir.is_absolute() {
            return Err(Invalid(format!(
                "project_dir {:?} must be an absolute path",
                self.project_dir
            )));
        }
        if !dir.is_dir() {
            return Err(Invalid(format!(
                "project_dir {} is not a directory on this server",
                self.project_dir
            )));
        }
        let mut paths = vec![("playbook", Some(&self.playbook))];
        paths.push(("inventory", self.inventory.as_ref()));
        paths.push(("vault_password_file", self.vault_password_file.as_ref()));
        // `limit: @FILE` reads the hosts from a file: one inside the project too.
        let limit_file = self.limit.as_ref().and_then(|l| l.strip_prefix('@')).map(str::to_string);
        paths.push(("limit", limit_file.as_ref()));
        for (key, path) in paths {
            let Some(path) = path else { continue };
            let p = Path::new(path);
            let inside = !path.is_empty()
                && p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if !inside {
                return Err(Invalid(format!(
                    "{key} {path:?} must be a relative path inside project_dir, without '..'"
                )));
            }
        }
        Ok(())
    }
}

/// What one run of an incarnation may be given besides the incarnation itself (the body of
/// `POST .../runs` and the page's start form): each field given replaces the incarnation's,
/// but `extra_vars`, which are laid over the incarnation's name by name, as a second `-e`
/// would be.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    #[serde(default)]
    pub limit: Option<String>,
    #[serde(default)]
    pub tags: Option<Tags>,
    #[serde(default)]
    pub extra_vars: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    pub mode: Option<Mode>,
}

impl RunRequest {
    /// The spec a run of `spec` with this request is queued with, checked as a stored spec is.
    pub fn apply_to(&self, mut spec: Incarnation) -> Result<Incarnation, Invalid> {
        if let Some(limit) = &self.limit {
            spec.limit = Some(limit.clone());
        }
        if let Some(tags) = &self.tags {
            spec.tags = Some(tags.clone());
        }
        if let Some(mode) = self.mode {
            spec.mode = mode;
        }
        if let Some(extra) = &self.extra_vars {
            let vars = spec.extra_vars.get_or_insert_with(Default::default);
            for (name, value) in extra {
                vars.insert(name.clone(), value.clone());
            }
        }
        spec.validate()?;
        Ok(spec)
    }

    /// What the audit log says of the request: everything but the extra vars' values.
    pub fn audit_detail(&self, apply_id: &str, spec: &Incarnation) -> serde_json::Value {
        let names: Vec<&String> =
            self.extra_vars.as_ref().map(|v| v.keys().collect()).unwrap_or_default();
        serde_json::json!({
            "apply_id": apply_id,
            "mode": spec.mode.as_str(),
            "limit": self.limit,
            "tags": self.tags.as_ref().map(Tags::joined),
            "extra_vars": names,
        })
    }
}

impl Store {
    /// Stores a new incarnation; false when the name is taken.
    pub async fn create_incarnation(&self, spec: &Incarnation) -> Result<bool, StoreError> {
        let now = now_ms();
        let text = serde_json::to_string(spec).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let done = sqlx::query(
            "INSERT INTO incarnations (name, spec, created_at, updated_at) VALUES ($1, $2, $3, \
             $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&spec.name)
        .bind(text)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Replaces an incarnation's spec; false when there is none of that name.
    pub async fn replace_incarnation(&self, spec: &Incarnation) -> Result<bool, StoreError> {
        let text = serde_json::to_string(spec).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let done =
            sqlx::query("UPDATE incarnations SET spec = $1, updated_at = $2 WHERE name = $3")
                .bind(text)
                .bind(now_ms())
                .bind(&spec.name)
                .execute(self.pool())
                .await?;
        if done.rows_affected() == 1 {
            let keep: Vec<String> = spec.schedules.iter().map(|s| s.key()).collect();
            self.forget_schedules(&spec.name, &keep).await?;
        }
        Ok(done.rows_affected() == 1)
    }

    /// Deletes an incarnation (its runs stay, still naming it) with its schedules' marks and
    /// its drift mark, so one made later under the name starts afresh; false when there is
    /// none.
    pub async fn delete_incarnation(&self, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM incarnations WHERE name = $1")
            .bind(name)
            .execute(self.pool())
            .await?;
        if done.rows_affected() == 1 {
            self.forget_schedules(name, &[]).await?;
            self.clear_drift(name).await?;
        }
        Ok(done.rows_affected() == 1)
    }

    pub async fn incarnation(&self, name: &str) -> Result<Option<Incarnation>, StoreError> {
        let row = sqlx::query("SELECT spec FROM incarnations WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| parse_spec(&r.try_get::<String, _>("spec")?)).transpose()
    }

    pub async fn incarnations(&self) -> Result<Vec<Incarnation>, StoreError> {
        let rows = sqlx::query("SELECT spec FROM incarnations ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| parse_spec(&r.try_get::<String, _>("spec")?)).collect()
    }
}

pub(crate) fn parse_spec(text: &str) -> Result<Incarnation, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("incarnation spec: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, playbook: &str) -> Incarnation {
        Incarnation {
            name: name.into(),
            project_dir: "/".into(),
            playbook: playbook.into(),
            inventory: None,
            extra_vars: None,
            vault_password_file: None,
            limit: None,
            tags: None,
            mode: Mode::Apply,
            schedules: Vec::new(),
        }
    }

    #[test]
    fn paths_stay_inside_the_project() {
        assert!(spec("web", "site.yml").validate().is_ok());
        assert!(spec("web", "plays/site.yml").validate().is_ok());
        for bad in ["../site.yml", "/etc/site.yml", "a/../../b", ""] {
            let err = spec("web", bad).validate().unwrap_err();
            assert!(err.0.contains("must be a relative path inside project_dir"), "{bad}: {err}");
        }
        for bad in ["", "a b", "a/b", "ü", ".", ".."] {
            assert!(spec(bad, "site.yml").validate().is_err(), "{bad:?}");
        }
        assert!(spec("..web", "site.yml").validate().is_ok());
    }

    #[test]
    fn a_limit_file_stays_inside_the_project() {
        let with_limit =
            |limit: &str| Incarnation { limit: Some(limit.into()), ..spec("web", "site.yml") };
        assert!(with_limit("@retry/hosts.txt").validate().is_ok());
        assert!(with_limit("web1,-db").validate().is_ok());
        for bad in ["@../hosts", "@/etc/hosts", "@"] {
            let err = with_limit(bad).validate().unwrap_err();
            assert!(err.0.starts_with("limit "), "{bad}: {err}");
        }
    }

    #[test]
    fn a_run_request_replaces_fields_and_lays_extra_vars_over() {
        let mut base = spec("web", "site.yml");
        base.extra_vars = Some(serde_json::from_str(r#"{"a": 1, "b": 2}"#).unwrap());
        let req: RunRequest = serde_json::from_str(
            r#"{"limit": "web1", "mode": "check", "tags": ["x", "y"], "extra_vars": {"b": 3}}"#,
        )
        .unwrap();
        let run = req.apply_to(base.clone()).unwrap();
        assert_eq!(run.limit.as_deref(), Some("web1"));
        assert_eq!(run.mode, Mode::Check);
        assert_eq!(run.tags.as_ref().map(Tags::joined).as_deref(), Some("x,y"));
        assert_eq!(serde_json::to_string(&run.extra_vars).unwrap(), r#"{"a":1,"b":3}"#);
        let detail = req.audit_detail("id1", &run).to_string();
        assert!(detail.contains(r#""extra_vars":["b"]"#) && !detail.contains('3'), "{detail}");
        assert_eq!(RunRequest::default().apply_to(base.clone()).unwrap(), base);
        let escape: RunRequest = serde_json::from_str(r#"{"limit": "@../hosts"}"#).unwrap();
        assert!(escape.apply_to(base.clone()).unwrap_err().0.starts_with("limit "));
        assert!(serde_json::from_str::<RunRequest>(r#"{"playbook": "x.yml"}"#).is_err());
    }

    #[test]
    fn limit_and_tags_starting_with_a_dash_stay_values() {
        let spec = Incarnation {
            limit: Some("-x".into()),
            tags: Some(Tags::One("--check".into())),
            ..spec("web", "site.yml")
        };
        let args = crate::runner::child_args(&spec, None);
        assert_eq!(args, ["playbook", "--limit=-x", "--tags=--check", "--", "site.yml"]);
    }
}
