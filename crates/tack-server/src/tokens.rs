//! Access tokens: made with a role, shown once, stored only as their SHA-256, revoked by id.
//!
//! A token is `tack_` and 40 hex digits (160 random bits), so a fast hash is as good as a slow
//! one: nobody guesses it, and the database alone never lets anyone act.

use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Store, StoreError, now_ms};

/// What a token may do; each role may do everything the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads incarnations and runs.
    Viewer,
    /// Also starts and cancels runs.
    Operator,
    /// Also manages incarnations and tokens.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::Viewer, Role::Operator, Role::Admin].into_iter().find(|r| r.as_str() == text)
    }
}

/// A token as listed: never its secret.
#[derive(Debug, Clone, Serialize)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// Who a request comes from.
#[derive(Debug, Clone)]
pub struct Caller {
    pub token_id: String,
    pub name: String,
    pub role: Role,
}

pub(crate) fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn random_hex(bytes: usize) -> Result<String, StoreError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf)
        .map_err(|e| StoreError::Corrupt(format!("no randomness for a token: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

impl Store {
    /// Makes a token; the returned text is its only copy.
    pub async fn create_token(
        &self,
        name: &str,
        role: Role,
    ) -> Result<(TokenInfo, String), StoreError> {
        let secret = format!("tack_{}", random_hex(20)?);
        let info = TokenInfo {
            id: random_hex(6)?,
            name: name.to_string(),
            role,
            created_at: now_ms(),
            revoked_at: None,
        };
        sqlx::query(
            "INSERT INTO tokens (id, name, role, hash, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&info.id)
        .bind(&info.name)
        .bind(role.as_str())
        .bind(hash(&secret))
        .bind(info.created_at)
        .execute(self.pool())
        .await?;
        Ok((info, secret))
    }

    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, role, created_at, revoked_at FROM tokens ORDER BY created_at, id",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let role: String = r.try_get("role")?;
                Ok(TokenInfo {
                    id: r.try_get("id")?,
                    name: r.try_get("name")?,
                    role: Role::parse(&role)
                        .ok_or_else(|| StoreError::Corrupt(format!("token role {role:?}")))?,
                    created_at: r.try_get("created_at")?,
                    revoked_at: r.try_get("revoked_at")?,
                })
            })
            .collect()
    }

    /// Revokes the token `id`; false when no live token has it.
    pub async fn revoke_token(&self, id: &str) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
                .bind(now_ms())
                .bind(id)
                .execute(self.pool())
                .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The live token `secret` is, if any.
    pub async fn caller(&self, secret: &str) -> Result<Option<Caller>, StoreError> {
        let row =
            sqlx::query("SELECT id, name, role FROM tokens WHERE hash = $1 AND revoked_at IS NULL")
                .bind(hash(secret))
                .fetch_optional(self.pool())
                .await?;
        let Some(row) = row else { return Ok(None) };
        let role: String = row.try_get("role")?;
        Ok(Some(Caller {
            token_id: row.try_get("id")?,
            name: row.try_get("name")?,
            role: Role::parse(&role)
                .ok_or_else(|| StoreError::Corrupt(format!("token role {role:?}")))?,
        }))
    }

    /// Whether the token `id` names is still in force (not revoked): a stream it opened
    /// ends when it is not.
    pub async fn token_active(&self, id: &str) -> Result<bool, StoreError> {
        let row =
            sqlx::query("SELECT COUNT(*) AS n FROM tokens WHERE id = $1 AND revoked_at IS NULL")
                .bind(id)
                .fetch_one(self.pool())
                .await?;
        Ok(row.try_get::<i64, _>("n")? > 0)
    }

    /// Whether any token was ever made (the first start makes the first admin's).
    pub async fn has_tokens(&self) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM tokens").fetch_one(self.pool()).await?;
        Ok(row.try_get::<i64, _>("n")? > 0)
    }
}
