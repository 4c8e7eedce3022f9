-- What a run printed: the default callback's text, line by line, secrets masked as in events.

CREATE TABLE run_transcript (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
