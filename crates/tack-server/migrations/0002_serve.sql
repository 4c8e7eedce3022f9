-- What `tack serve` adds: access tokens, the controllers sharing the queue, and per run the
-- incarnation as it was when the run was queued and a cancel request.

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    -- SHA-256 of the token, hex; the token itself is shown once and never stored.
    hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE controllers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

ALTER TABLE runs ADD COLUMN spec TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0;
