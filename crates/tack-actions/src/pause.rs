//! `pause` and `wait_for_connection`, as ansible's action plugins of those names run them.
//! Without a terminal `pause` sleeps its `seconds`/`minutes` (at least one second) or, with
//! only a prompt, does not wait and warns; `wait_for_connection` runs `ping` over a newly
//! opened link to the host (ansible resets its connection before each try) until it
//! answers or the timeout passes.
//!
//! At a terminal (stdin one, and tack in its foreground) `pause` asks as ansible's plugin
//! does there: its prompt shown and keys read in raw mode through [`crate::terminal`], Enter
//! ending an untimed wait, Ctrl+C then `C` or `A` to continue early or abort.
//!
//! What `pause` announces before it waits is [`announce`], which the executor shows through
//! its callback; the prompt itself is written to the terminal, as ansible's display writes
//! it, not through a callback.

use std::time::{Duration, Instant, SystemTime};

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// What a `pause` was asked to do.
struct Plan {
    /// `None`: wait for input.
    seconds: Option<i64>,
    minutes_unit: bool,
    prompt: Option<String>,
    echo: bool,
}

/// ansible's `int` conversion of an argument, in its argument-spec words.
fn as_int(name: &str, node: &Node) -> Result<i64, String> {
    match &node.value {
        Value::Int(i) => Ok(*i),
        Value::Bool(v) => Ok(i64::from(*v)),
        Value::Float(f) if f.is_finite() => Ok(f.trunc() as i64),
        Value::Str(text) => tack_py::num::int(text).map_err(|e| {
            let why = match e {
                tack_py::num::IntError::Invalid(why) => why,
                tack_py::num::IntError::TooLarge => {
                    "the number does not fit tack's integers".into()
                }
            };
            format!(
                "argument '{name}' is of type str and we were unable to convert to int: \
                 {why}"
            )
        }),
        other => Err(format!(
            "argument '{name}' is of type {} and we were unable to convert to int",
            other.python_type()
        )),
    }
}

/// A failed argument check, as ansible's `validate_argument_spec` in an action reports it.
fn invalid(msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(msg));
    let mut out = ActionOutput::new(data);
    out.error =
        Some(tack_diag::Diagnostic::at(format!("Task failed: {msg}"), input.task_origin.clone()));
    out
}

fn plan(args: &Mapping) -> Result<Plan, String> {
    if args.get("minutes").is_some() && args.get("seconds").is_some() {
        return Err("parameters are mutually exclusive: minutes|seconds".into());
    }
    // `echo` is `type: bool` in the action's argument spec: `check_type_bool`.
    let echo = match args.get("echo").map(|n| &n.value) {
        None => true,
        Some(other) => other.boolean_strict().map_err(|e| {
            format!(
                "argument 'echo' is of type {} and we were unable to convert to bool: {e}",
                other.python_type()
            )
        })?,
    };
    let (seconds, minutes_unit) = match (args.get("minutes"), args.get("seconds")) {
        (Some(m), _) => (Some(as_int("minutes", m)? * 60), true),
        (None, Some(sec)) => (Some(as_int("seconds", sec)?), false),
        (None, None) => (None, true),
    };
    let prompt = args
        .get("prompt")
        .filter(|p| !matches!(p.value, Value::Null))
        .map(|p| tack_yaml::pyrepr::str(&p.value))
        .filter(|p| !p.is_empty());
    Ok(Plan { seconds: seconds.map(|s| s.max(1)), minutes_unit, prompt, echo })
}

/// The lines `pause` shows before it waits (none when it waits for input).
pub fn announce(args: &Mapping) -> Vec<String> {
    // An argument pause does not know fails it before it says anything.
    let known = ["echo", "minutes", "seconds", "prompt"];
    if args.iter().any(|(k, _)| k.as_str().is_none_or(|k| !known.contains(&k))) {
        return Vec::new();
    }
    let Ok(plan) = plan(args) else { return Vec::new() };
    let Some(seconds) = plan.seconds else { return Vec::new() };
    let hidden = if plan.echo { "" } else { " (output is hidden)" };
    let mut lines = vec![format!("Pausing for {seconds} seconds{hidden}")];
    if plan.prompt.is_some() {
        lines.push("(ctrl+C then 'C' = continue early, ctrl+C then 'A' = abort)\r".into());
    }
    lines
}

pub fn pause(input: &ActionInput<'_>) -> ActionOutput {
    let plan = match plan(input.args) {
        Ok(plan) => plan,
        Err(msg) => return invalid(&msg, input),
    };
    let start_at = SystemTime::now();
    let start = Instant::now();
    let mut warnings = Vec::new();
    let mut user_input = Vec::new();
    if crate::terminal::stdin_interactive() {
        match at_terminal(&plan, input.task_name) {
            Ok(Some(typed)) => user_input = typed,
            Ok(None) => return aborted(input),
            Err(e) => {
                let msg = format!("cannot read keys from the terminal: {e}");
                return ActionOutput::action_failed(
                    Mapping::new(),
                    s(&msg),
                    input.task_origin.clone(),
                );
            }
        }
    } else {
        match plan.seconds {
            Some(seconds) => std::thread::sleep(Duration::from_secs(seconds.unsigned_abs())),
            None => {
                warnings.push(s("Not waiting for response to prompt as stdin is not interactive"))
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("rc"), Node::bare(Value::Int(0)));
    data.insert(s("stderr"), s(""));
    let (amount, unit) = if plan.minutes_unit {
        ((elapsed / 60.0 * 100.0).round() / 100.0, "minutes")
    } else {
        ((elapsed * 100.0).round() / 100.0, "seconds")
    };
    let stdout = format!("Paused for {} {unit}", tack_py::repr::float_repr(amount));
    data.insert(s("stdout"), s(&stdout));
    data.insert(s("start"), s(&tack_agent::modules::timestamp(start_at)));
    data.insert(s("stop"), s(&tack_agent::modules::timestamp(SystemTime::now())));
    data.insert(s("delta"), Node::bare(Value::Int(elapsed as i64)));
    data.insert(s("echo"), b(plan.echo));
    data.insert(s("user_input"), s(&String::from_utf8_lossy(&user_input)));
    if !warnings.is_empty() {
        data.insert(s("warnings"), Node::bare(Value::Seq(warnings)));
    }
    ActionOutput::new(data)
}

/// The pause at a terminal, as ansible's plugin asks there: the prompt (or, timed without
/// one, the Ctrl+C hint) shown, keys read until Enter or the time is up; Ctrl+C asks
/// whether to continue or abort. What was typed, or `None` for an abort.
fn at_terminal(plan: &Plan, task_name: &str) -> std::io::Result<Option<Vec<u8>>> {
    use crate::terminal::{Keys, Prompt, prompt_until};
    const HINT: &str = "(ctrl+C then 'C' = continue early, ctrl+C then 'A' = abort)\r";
    let hidden = if plan.echo { "" } else { " (output is hidden)" };
    let asked = plan.prompt.as_deref().unwrap_or("Press enter to continue, Ctrl+C to interrupt");
    let mut msg = format!("[{}]\n{asked}{hidden}:", task_name.trim());
    if plan.seconds.is_some() && plan.prompt.is_none() {
        msg = HINT.to_string();
    }
    // Timed, the keys are neither echoed nor ending the wait.
    let echo = plan.seconds.is_none() && plan.echo;
    let first = Prompt {
        msg: &msg,
        private: !echo,
        seconds: plan.seconds.map(i64::unsigned_abs),
        interrupt: None,
        complete: plan.seconds.map(|_| &[][..]),
    };
    match prompt_until(&first)? {
        Keys::Typed(typed) => Ok(Some(if plan.seconds.is_none() { typed } else { Vec::new() })),
        Keys::Interrupted => {
            let second = Prompt {
                msg: "Press 'C' to continue the play or 'A' to abort \r",
                private: !echo,
                seconds: None,
                interrupt: Some(b"a"),
                complete: Some(b"c"),
            };
            match prompt_until(&second)? {
                Keys::Typed(typed) => Ok(Some(typed)),
                Keys::Interrupted => Ok(None),
            }
        }
    }
}

/// `A` after Ctrl+C: ansible's plugin raises, and the task fails with its error.
fn aborted(input: &ActionInput<'_>) -> ActionOutput {
    // Raised while handling the interrupt: its own segment in the error block.
    let mut cause = tack_diag::Diagnostic::at("user requested abort!", None);
    cause.raised_while_handling = true;
    crate::output::raised(tack_diag::Diagnostic::caused_by(
        "Task failed.",
        input.task_origin.clone(),
        cause,
    ))
}

fn int_arg(input: &ActionInput<'_>, name: &str, default: i64) -> Result<i64, String> {
    match input.args.get(name) {
        None => Ok(default),
        Some(node) => as_int(name, node),
    }
}

pub fn wait_for_connection(input: &ActionInput<'_>) -> ActionOutput {
    let read = || -> Result<(i64, i64, i64), String> {
        let _connect_timeout = int_arg(input, "connect_timeout", 5)?;
        Ok((
            int_arg(input, "delay", 0)?,
            int_arg(input, "sleep", 1)?,
            int_arg(input, "timeout", 600)?,
        ))
    };
    let (delay, sleep, timeout) = match read() {
        Ok(values) => values,
        Err(msg) => {
            return ActionOutput::action_failed(Mapping::new(), s(&msg), input.task_origin.clone());
        }
    };
    if input.check_mode {
        input.trace.note("wait_for_connection: skipping for check_mode".into());
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("skipped"), b(true));
        return ActionOutput::new(data);
    }
    let start = Instant::now();
    if delay > 0 {
        std::thread::sleep(Duration::from_secs(delay.unsigned_abs()));
    }
    let deadline = Instant::now() + Duration::from_secs(timeout.max(0).unsigned_abs());
    let invocation = tack_agent::Invocation { args: serde_json::Map::new(), ..Default::default() };
    let mut data = Mapping::new();
    let mut last_error = String::new();
    let mut answered = false;
    while Instant::now() < deadline {
        input.trace.note("wait_for_connection: attempting ping module test".into());
        let pinged = (input.relink)(None)
            .and_then(|link| link.run_module("ping", &invocation).map_err(|e| e.to_string()));
        match pinged {
            Ok(result) if result.get("ping").and_then(|p| p.as_str()) == Some("pong") => {
                answered = true;
                break;
            }
            Ok(_) => last_error = "ping test failed".into(),
            Err(e) => last_error = e,
        }
        std::thread::sleep(Duration::from_secs(sleep.max(0).unsigned_abs()));
    }
    if !answered {
        let msg = format!("timed out waiting for ping module test: {last_error}");
        data.insert(s("changed"), b(false));
        data.insert(s("elapsed"), Node::bare(Value::Int(start.elapsed().as_secs() as i64)));
        return ActionOutput::action_failed(data, s(&msg), input.task_origin.clone());
    }
    data.insert(s("elapsed"), Node::bare(Value::Int(start.elapsed().as_secs() as i64)));
    data.insert(s("changed"), b(false));
    ActionOutput::new(data)
}
