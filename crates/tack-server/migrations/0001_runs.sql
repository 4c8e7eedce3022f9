-- The run store. Written for both SQLite and PostgreSQL: only types both read alike (TEXT,
-- BIGINT, DOUBLE PRECISION), ids chosen by tack, JSON kept as TEXT, times as Unix
-- milliseconds.

CREATE TABLE incarnations (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    -- NULL for a run `tack playbook --record` stored from the command line.
    incarnation TEXT,
    mode TEXT NOT NULL,
    playbook TEXT NOT NULL,
    started_by TEXT NOT NULL,
    status TEXT NOT NULL,
    -- Raised each time a controller claims the run; a controller writes only under its own.
    attempt BIGINT NOT NULL,
    controller TEXT,
    queued_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    exit_code BIGINT,
    -- Why a run ended without a recap (a load error, a refusal), as the controller printed it.
    error TEXT,
    recap TEXT
);

CREATE INDEX runs_by_incarnation ON runs (incarnation, queued_at);
CREATE INDEX runs_by_status ON runs (status, queued_at);

-- The run plan: one params map per task, masked then marked (seed 000).
CREATE TABLE run_tasks (
    run_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    play TEXT NOT NULL,
    name TEXT NOT NULL,
    action TEXT NOT NULL,
    handler BIGINT NOT NULL,
    params TEXT,
    params_shared BIGINT,
    PRIMARY KEY (run_id, idx)
);

CREATE TABLE run_results (
    run_id TEXT NOT NULL,
    task_idx BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    host TEXT NOT NULL,
    status TEXT NOT NULL,
    changed BIGINT NOT NULL,
    ignored BIGINT NOT NULL,
    stdout TEXT,
    stderr TEXT,
    exit_code BIGINT,
    msg TEXT,
    duration DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, task_idx, seq)
);

CREATE TABLE run_events (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
