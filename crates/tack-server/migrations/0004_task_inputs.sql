-- Each host's own input to a task, where the hosts' inputs differ (seed 000's planned feature):
-- masked as the run plan is; nothing is kept for a task every host received alike.

CREATE TABLE run_task_inputs (
    run_id TEXT NOT NULL,
    task_idx BIGINT NOT NULL,
    host TEXT NOT NULL,
    params TEXT NOT NULL,
    PRIMARY KEY (run_id, task_idx, host)
);
