-- Operating from the web page: a signed-in browser's session (its own secret in the cookie,
-- never the token; a per-session token every form carries back), and the audit log of every
-- change made through the server.

CREATE TABLE sessions (
    -- SHA-256 of the session's secret, hex; the secret lives only in the browser's cookie.
    id TEXT PRIMARY KEY,
    token_id TEXT NOT NULL,
    -- What each form of this session posts back: a cookie alone never authorises a write.
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE TABLE audit_log (
    seq BIGINT PRIMARY KEY,
    at BIGINT NOT NULL,
    -- The token's name and id as they were when it acted.
    actor TEXT NOT NULL,
    token_id TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    -- JSON: what was done, never a value that may be secret (extra vars by name only).
    detail TEXT NOT NULL
);
