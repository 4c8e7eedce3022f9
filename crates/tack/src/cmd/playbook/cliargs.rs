//! The command line as ansible-playbook's default callback shows it at `-vvvv`
//! (`v2_playbook_on_start`): `Positional arguments: ...`, then `name: value` for every
//! `CLIARGS` entry whose value is true in Python, in `CLIARGS` order (argparse's defaults in
//! the order the parser adds its options), values as Python's `str()` gives them.

use tack_config::Config;
use tack_py::repr::str_repr;

use super::Args;

/// Python's `str()` of a tuple of strings.
fn tuple(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().map(|s| str_repr(s)).collect();
    match shown.len() {
        1 => format!("({},)", shown[0]),
        _ => format!("({})", shown.join(", ")),
    }
}

pub(crate) fn setting_flag(config: &Config, name: &str) -> bool {
    config.get(name).and_then(|v| v.as_bool()).unwrap_or(false)
}

/// ansible's tag options: every value split at commas, stripped, kept once. ansible keeps
/// them in a set, so more than one tag comes out in an order that changes between runs; tack
/// keeps the order they were given in (one of ansible's).
fn tag_set(values: &[String]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for value in values {
        for tag in value.split(',') {
            let tag = tag.trim().to_string();
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
    }
    tags
}

/// The lines.
pub(super) fn lines(args: &Args, config: &Config, sources: &[String]) -> Vec<String> {
    // `--vault-password-file` is made absolute (`unfrack_path(follow=False)`) as it is parsed.
    let password_files: Vec<String> = args
        .vault
        .vault_password_files
        .iter()
        .map(|p| tack_py::ansible::unfrackpath(p, false, None).to_string_lossy().into_owned())
        .collect();
    // argparse runs an option's `type` on a string default too: the configured file is
    // made absolute, symlinks followed (`unfrack_path()`), as a given one is; `-` stays.
    let become_password_file =
        crate::links::become_password_file(config, &args.become_opts)
            .map(|p| {
                if p.as_os_str() == "-" { p } else { tack_py::ansible::unfrackpath(&p, true, None) }
            })
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
    let conn = &args.connection_opts;
    // Made absolute as it is parsed (`unfrack_path`), a configured one too.
    let connection_password_file = crate::links::connection_password_file(config, conn)
        .map(|p| tack_py::ansible::unfrackpath(&p, true, None).to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tags = tag_set(&args.tags);
    if tags.is_empty() {
        tags.push("all".into());
    }
    let skip_tags = tag_set(&args.skip_tags);
    let playbooks: Vec<String> =
        args.playbooks.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let text = |name: &str| config.get(name).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let forks = args.forks.map_or_else(|| config.forks(), i64::from);
    let bool_line = |name: &str, on: bool| on.then(|| format!("{name}: True"));
    let text_line =
        |name: &str, value: String| (!value.is_empty()).then(|| format!("{name}: {value}"));
    let entries = [
        (args.verbosity.verbose > 0).then(|| format!("verbosity: {}", args.verbosity.verbose)),
        text_line(
            "private_key_file",
            conn.private_key
                .as_ref()
                .map(|k| tack_py::ansible::unfrackpath(k, true, None))
                .or_else(|| config.private_key_file())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        text_line(
            "remote_user",
            conn.remote_user
                .clone()
                .or_else(|| config.remote_user().map(str::to_string))
                .unwrap_or_default(),
        ),
        text_line(
            "connection",
            conn.connection.clone().unwrap_or_else(|| text("DEFAULT_TRANSPORT")),
        ),
        conn.timeout.map(|t| format!("timeout: {t}")),
        text_line("ssh_common_args", conn.ssh_common_args.clone().unwrap_or_default()),
        text_line("sftp_extra_args", conn.sftp_extra_args.clone().unwrap_or_default()),
        text_line("scp_extra_args", conn.scp_extra_args.clone().unwrap_or_default()),
        text_line("ssh_extra_args", conn.ssh_extra_args.clone().unwrap_or_default()),
        bool_line("ask_pass", conn.ask_pass || setting_flag(config, "DEFAULT_ASK_PASS")),
        text_line("connection_password_file", connection_password_file),
        bool_line(
            "force_handlers",
            args.force_handlers || setting_flag(config, "DEFAULT_FORCE_HANDLERS"),
        ),
        bool_line("become", args.become_opts.become_ || setting_flag(config, "DEFAULT_BECOME")),
        text_line(
            "become_method",
            args.become_opts.become_method.clone().unwrap_or_else(|| text("DEFAULT_BECOME_METHOD")),
        ),
        // `--become-user` has no default of its own (the configuration's is read later).
        text_line("become_user", args.become_opts.become_user.clone().unwrap_or_default()),
        bool_line(
            "become_ask_pass",
            args.become_opts.ask_become_pass || setting_flag(config, "DEFAULT_BECOME_ASK_PASS"),
        ),
        text_line("become_password_file", become_password_file),
        Some(format!("tags: {}", tuple(&tags))),
        (!skip_tags.is_empty()).then(|| format!("skip_tags: {}", tuple(&skip_tags))),
        bool_line("check", args.check),
        bool_line("diff", args.diff || setting_flag(config, "DIFF_ALWAYS")),
        (!sources.is_empty()).then(|| format!("inventory: {}", tuple(sources))),
        text_line("subset", args.inventory.limit.clone().unwrap_or_default()),
        bool_line("flush_cache", args.inventory.flush_cache),
        (!args.extra_vars.extra_vars.is_empty())
            .then(|| format!("extra_vars: {}", tuple(&args.extra_vars.extra_vars))),
        (!args.vault.vault_ids.is_empty())
            .then(|| format!("vault_ids: {}", tuple(&args.vault.vault_ids))),
        bool_line(
            "ask_vault_pass",
            args.vault.ask_vault_pass || setting_flag(config, "DEFAULT_ASK_VAULT_PASS"),
        ),
        (!password_files.is_empty())
            .then(|| format!("vault_password_files: {}", tuple(&password_files))),
        (forks != 0).then(|| format!("forks: {forks}")),
        text_line("start_at_task", args.start_at_task.clone().unwrap_or_default()),
    ];
    let mut out = vec![format!("Positional arguments: {}", playbooks.join(" "))];
    out.extend(entries.into_iter().flatten());
    out
}
