-- Schedules and drift: which occurrences of each incarnation's schedules were handled, which
-- runs a schedule queued, what a plan found it could not call unchanged, and the incarnations
-- a scheduled plan or check found drifted.

-- Per schedule (its text: cron, time zone, mode), every occurrence up to `covered_until` was
-- handled: a server that was down runs the ones it missed once, then moves this on.
CREATE TABLE schedule_state (
    incarnation TEXT NOT NULL,
    schedule TEXT NOT NULL,
    covered_until BIGINT NOT NULL,
    PRIMARY KEY (incarnation, schedule)
);

ALTER TABLE runs ADD COLUMN scheduled BIGINT NOT NULL DEFAULT 0;

-- What a plan could not call unchanged besides a change: `would_run` or `deferred`.
ALTER TABLE run_results ADD COLUMN plan TEXT;

-- An incarnation a scheduled plan or check found would change: the run that found it and
-- what would change (JSON). The next apply that succeeds removes the row.
CREATE TABLE drift (
    incarnation TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    detected_at BIGINT NOT NULL,
    changes TEXT NOT NULL
);
