//! The OpenAPI 3.1 document of `/v1`, served at `/v1/openapi.json`. Written by hand next to
//! the routes in [`crate::api`]; a test checks every route it names answers.

use serde_json::{Value, json};

fn op(summary: &str, role: Option<&str>, responses: &[(&str, &str)]) -> Value {
    let mut r = serde_json::Map::new();
    for (code, what) in responses {
        r.insert((*code).into(), json!({"description": what}));
    }
    for (code, what) in
        [("401", "no token, or one not known"), ("403", "the token's role is too low")]
    {
        if role.is_some() {
            r.insert(code.into(), json!({"description": what}));
        }
    }
    let mut o = json!({"summary": summary, "responses": r});
    match role {
        Some(role) => {
            o["security"] = json!([{"bearer": []}]);
            o["x-tack-role"] = json!(role);
        }
        None => o["security"] = json!([]),
    }
    o
}

fn with_body(mut o: Value, schema: &str) -> Value {
    o["requestBody"] = json!({
        "required": true,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
    });
    o
}

fn optional_body(mut o: Value, schema: &str) -> Value {
    o = with_body(o, schema);
    o["requestBody"]["required"] = json!(false);
    o
}

pub(crate) fn document() -> Value {
    let name =
        json!({"name": "name", "in": "path", "required": true, "schema": {"type": "string"}});
    let id =
        json!({"name": "apply_id", "in": "path", "required": true, "schema": {"type": "string"}});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "tack run server", "version": env!("CARGO_PKG_VERSION")},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Incarnation": {
                    "type": "object",
                    "required": ["name", "project_dir", "playbook"],
                    "additionalProperties": false,
                    "properties": {
                        "name": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,100}$"},
                        "project_dir": {"type": "string", "description": "absolute path on the server"},
                        "playbook": {"type": "string", "description": "relative to project_dir"},
                        "inventory": {"type": "string"},
                        "extra_vars": {"type": "object", "description": "At most 64 KiB as JSON. Handed to a run in a private file, never on a command line; shown to callers below admin with every value as ********."},
                        "vault_password_file": {"type": "string"},
                        "limit": {"type": "string"},
                        "tags": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                        "mode": {"enum": ["apply", "check", "plan"], "default": "apply"},
                        "schedules": {"type": "array", "maxItems": 20, "items": {"$ref": "#/components/schemas/Schedule"}}
                    }
                },
                "Schedule": {
                    "type": "object",
                    "description": "Queues a plan or check run of its incarnation when its cron pattern comes due; occurrences missed while no server ran are run once.",
                    "required": ["cron"],
                    "additionalProperties": false,
                    "properties": {
                        "cron": {"type": "string", "description": "five fields (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly"},
                        "timezone": {"type": "string", "description": "an IANA name; UTC when absent"},
                        "mode": {"enum": ["plan", "check"], "default": "plan"}
                    }
                },
                "Drift": {
                    "type": "object",
                    "description": "An incarnation a scheduled plan or check found would change; the next apply of it that succeeds clears it.",
                    "properties": {
                        "incarnation": {"type": "string"},
                        "drifted": {"type": "boolean", "description": "in the per-incarnation answer only"},
                        "apply_id": {"type": "string", "description": "the scheduled run that found it"},
                        "detected_at": {"type": "integer", "description": "milliseconds since the epoch"},
                        "changes": {"type": "array", "items": {"type": "object", "properties": {
                            "host": {"type": "string"}, "task": {"type": "string"},
                            "outcome": {"enum": ["would_change", "would_run", "deferred"]}
                        }}}
                    }
                },
                "Run": {
                    "type": "object",
                    "properties": {
                        "apply_id": {"type": "string"},
                        "incarnation": {"type": ["string", "null"]},
                        "status": {"enum": ["queued", "running", "success", "failed", "unreachable", "cancelled", "interrupted"]},
                        "recap": {"type": ["object", "null"]},
                        "scheduled": {"type": "boolean", "description": "queued by a schedule, not a person"}
                    }
                },
                "RunRequest": {
                    "type": "object",
                    "description": "What one run is given besides its incarnation. Each field given replaces the incarnation's, but extra_vars, laid over the incarnation's name by name; the result is checked as an incarnation is. No body runs the incarnation as it is.",
                    "additionalProperties": false,
                    "properties": {
                        "limit": {"type": "string"},
                        "tags": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                        "extra_vars": {"type": "object"},
                        "mode": {"enum": ["apply", "check", "plan"]}
                    }
                },
                "AuditEntry": {
                    "type": "object",
                    "description": "One change made through the server. `detail` never holds an extra var's value, only its name.",
                    "properties": {
                        "seq": {"type": "integer"},
                        "at": {"type": "integer", "description": "milliseconds since the epoch"},
                        "actor": {"type": "string", "description": "the token's name"},
                        "token_id": {"type": "string"},
                        "action": {"enum": ["run.start", "run.cancel", "incarnation.create", "incarnation.update", "incarnation.delete", "token.create", "token.revoke"]},
                        "target": {"type": "string", "description": "the incarnation's name, or the token's name (made) or id (revoked)"},
                        "detail": {"type": "object"}
                    }
                },
                "NewToken": {
                    "type": "object",
                    "required": ["name", "role"],
                    "additionalProperties": false,
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 100},
                        "role": {"enum": ["viewer", "operator", "admin"]}
                    }
                },
                "Token": {
                    "type": "object",
                    "description": "A token as listed: never its secret.",
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "role": {"enum": ["viewer", "operator", "admin"]},
                        "created_at": {"type": "integer", "description": "milliseconds since the epoch"},
                        "revoked_at": {"type": ["integer", "null"]},
                        "token": {"type": "string", "description": "the secret: only in the answer that made it"}
                    }
                },
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}}
            }
        },
        "paths": {
            "/v1/openapi.json": {"get": op("this document", None, &[("200", "the document")])},
            "/v1/incarnations": {
                "get": op("every incarnation", Some("viewer"), &[("200", "the incarnations")]),
                "post": with_body(op("create an incarnation", Some("admin"), &[
                    ("201", "created"), ("400", "malformed or invalid"), ("409", "the name is taken")
                ]), "Incarnation")
            },
            "/v1/incarnations/{name}": {
                "parameters": [name],
                "get": op("one incarnation", Some("viewer"), &[("200", "it"), ("404", "none of that name")]),
                "put": with_body(op("replace an incarnation", Some("admin"), &[
                    ("200", "replaced"), ("400", "malformed or invalid"), ("404", "none of that name")
                ]), "Incarnation"),
                "delete": op("delete an incarnation (its runs stay)", Some("admin"), &[
                    ("204", "deleted"), ("404", "none of that name")
                ])
            },
            "/v1/incarnations/{name}/runs": {
                "parameters": [name],
                "get": op("the incarnation's runs, newest first", Some("viewer"), &[("200", "the runs"), ("404", "no such incarnation")]),
                "post": optional_body(op("queue a run, optionally with its own limit, tags, extra vars and mode", Some("operator"), &[("202", "{\"apply_id\": ...}"), ("400", "malformed, or the run's spec invalid"), ("404", "no such incarnation")]), "RunRequest")
            },
            "/v1/incarnations/{name}/runs/{apply_id}": {
                "parameters": [name, id],
                "get": op("one run: status, times, recap", Some("viewer"), &[("200", "the run"), ("404", "no such run")])
            },
            "/v1/incarnations/{name}/runs/{apply_id}/tasks": {
                "parameters": [
                    name, id,
                    {"name": "host_offset", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0, "default": 0}, "description": "skip this many of each task's host results"},
                    {"name": "host_limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 100}, "description": "at most this many of each task's host results"}
                ],
                "get": op("the run plan: per task its marked params, how many hosts have each status (hosts_total, host_counts), and one page of its hosts' results, each with the host's own `input` (masked) where the hosts' inputs differ", Some("viewer"), &[("200", "the tasks"), ("400", "a bad host_offset or host_limit"), ("404", "no such run")])
            },
            "/v1/incarnations/{name}/runs/{apply_id}/events": {
                "parameters": [name, id, {"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "integer"}}],
                "get": op("the run's events as server-sent events, live until it ends", Some("viewer"), &[("200", "text/event-stream"), ("404", "no such run")])
            },
            "/v1/incarnations/{name}/runs/{apply_id}/transcript": {
                "parameters": [
                    name, id,
                    {"name": "Accept", "in": "header", "required": false, "schema": {"type": "string"}, "description": "text/event-stream: follow the lines as they are printed"},
                    {"name": "after", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0, "default": 0}, "description": "a stream starts after this line"},
                    {"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "integer"}, "description": "a stream resumes after this line (over `after`)"}
                ],
                "get": op("what the run printed, secrets masked as in its events: as text (so far, while it runs), or as server-sent events, `line` per line (its number the id, its text a JSON string) live until the run ends, then `end` (the run's status as a JSON string)", Some("viewer"), &[("200", "text/plain, or text/event-stream"), ("400", "a bad after or Last-Event-ID"), ("404", "no such run")])
            },
            "/v1/incarnations/{name}/runs/{apply_id}/cancel": {
                "parameters": [name, id],
                "post": op("cancel a queued or running run", Some("operator"), &[
                    ("200", "cancelled before it ran"), ("202", "its controller stops it"), ("404", "no such run"), ("409", "it had ended")
                ])
            },
            "/v1/runs": {"get": op("every run, newest first", Some("viewer"), &[("200", "the runs")])},
            "/v1/drift": {"get": op("every drifted incarnation: Drift each", Some("viewer"), &[("200", "the drifted incarnations")])},
            "/v1/incarnations/{name}/drift": {
                "parameters": [name],
                "get": op("whether the incarnation is drifted (`drifted`), and with what: Drift", Some("viewer"), &[("200", "its drift"), ("404", "no such incarnation")])
            },
            "/v1/audit": {
                "parameters": [
                    {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
                    {"name": "before", "in": "query", "required": false, "schema": {"type": "integer"}, "description": "entries older than this seq"}
                ],
                "get": op("the audit log, newest first: AuditEntry each", Some("admin"), &[("200", "the entries"), ("400", "a bad limit or before")])
            },
            "/v1/tokens": {
                "get": op("every token, revoked ones too, never a secret", Some("admin"), &[("200", "the tokens")]),
                "post": with_body(op("make a token: the answer holds its secret, shown this once", Some("admin"), &[
                    ("201", "made, with `token`"), ("400", "malformed, a bad name or an unknown role")
                ]), "NewToken")
            },
            "/v1/tokens/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "delete": op("revoke a token: it stops working at once, its open event streams end", Some("admin"), &[
                    ("204", "revoked"), ("404", "no token has that id"), ("409", "revoked already")
                ])
            }
        }
    })
}
