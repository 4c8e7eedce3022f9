//! The web page's sessions: signing in with a token makes a session whose own random secret
//! is the browser's cookie (the token never is), and a second random value, the session's
//! form token, that every form the page serves carries back. A write through the page needs
//! both: a cookie another site makes the browser send is not enough, because that site cannot
//! read the form token off the page.
//!
//! A session ends when the browser signs out, when its token is revoked, or [`LIFETIME_MS`]
//! after it began. Only SHA-256 of the secret is stored, as for tokens.

use axum::http::{HeaderMap, header};
use sqlx::Row;

use crate::store::{Store, StoreError, now_ms};
use crate::tokens::{Caller, Role, hash, random_hex};

/// The cookie that holds a signed-in browser's session secret.
pub const SESSION_COOKIE: &str = "tack_session";

/// A cookie's value from the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// How long a sign-in lasts.
pub const LIFETIME_MS: i64 = 12 * 60 * 60 * 1000;

/// A signed-in browser.
#[derive(Debug, Clone)]
pub struct Session {
    pub caller: Caller,
    /// What the session's forms post back (see the module's words).
    pub form_token: String,
}

impl Session {
    /// Whether `posted` is this session's form token (compared in time independent of where
    /// the two first differ).
    pub fn accepts(&self, posted: &str) -> bool {
        let (a, b) = (self.form_token.as_bytes(), posted.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl Store {
    /// Starts a session for the token `token_id`; the returned text is the cookie's secret,
    /// its only copy.
    pub async fn create_session(&self, token_id: &str) -> Result<String, StoreError> {
        let secret = random_hex(32)?;
        let now = now_ms();
        // Sessions that ran out are dropped as new ones begin, so the table stays small.
        sqlx::query("DELETE FROM sessions WHERE expires_at < $1")
            .bind(now)
            .execute(self.pool())
            .await?;
        sqlx::query(
            "INSERT INTO sessions (id, token_id, csrf, created_at, expires_at) VALUES ($1, $2, \
             $3, $4, $5)",
        )
        .bind(hash(&secret))
        .bind(token_id)
        .bind(random_hex(32)?)
        .bind(now)
        .bind(now + LIFETIME_MS)
        .execute(self.pool())
        .await?;
        Ok(secret)
    }

    /// The live session whose cookie secret is `secret`: not ended, not run out, its token
    /// not revoked.
    pub async fn session(&self, secret: &str) -> Result<Option<Session>, StoreError> {
        let row = sqlx::query(
            "SELECT t.id AS token_id, t.name AS name, t.role AS role, s.csrf AS csrf FROM \
             sessions s JOIN tokens t ON t.id = s.token_id WHERE s.id = $1 AND s.expires_at > \
             $2 AND t.revoked_at IS NULL",
        )
        .bind(hash(secret))
        .bind(now_ms())
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let role: String = row.try_get("role")?;
        Ok(Some(Session {
            caller: Caller {
                token_id: row.try_get("token_id")?,
                name: row.try_get("name")?,
                role: Role::parse(&role)
                    .ok_or_else(|| StoreError::Corrupt(format!("token role {role:?}")))?,
            },
            form_token: row.try_get("csrf")?,
        }))
    }

    /// Ends the session whose cookie secret is `secret` (signing out).
    pub async fn end_session(&self, secret: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(hash(secret))
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
