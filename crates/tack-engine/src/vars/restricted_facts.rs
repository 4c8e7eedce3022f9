//! Which facts a module may not set: ansible's `clean_facts` (names that would steer how the
//! controller reaches the host, or reach the controller's own values, never become top-level
//! variables; they stay in `ansible_facts`) and `remove_internal_keys` (interpreter discovery's
//! facts are the controller's to set, never a module's).
//!
//! This module only decides; the task applies facts and words the warnings.

/// ansible's `MAGIC_VARIABLE_MAPPING` and `COMMON_CONNECTION_VARS` names, and its
/// `RESTRICTED_RESULT_KEYS`.
const NAMED: &[&str] = &[
    "ansible_connection",
    "ansible_module_compression",
    "ansible_shell_type",
    "ansible_shell_executable",
    "ansible_ssh_host",
    "ansible_host",
    "ansible_ssh_user",
    "ansible_user",
    "ansible_ssh_pass",
    "ansible_password",
    "ansible_ssh_port",
    "ansible_port",
    "ansible_ssh_pipelining",
    "ansible_pipelining",
    "ansible_ssh_timeout",
    "ansible_timeout",
    "ansible_ssh_private_key_file",
    "ansible_private_key_file",
    "ansible_network_os",
    "ansible_connection_user",
    "ansible_ssh_executable",
    "ansible_ssh_common_args",
    "ansible_sftp_extra_args",
    "ansible_scp_extra_args",
    "ansible_ssh_extra_args",
    "ansible_ssh_transfer_method",
    "ansible_docker_extra_args",
    "ansible_become",
    "ansible_become_method",
    "ansible_become_user",
    "ansible_become_password",
    "ansible_become_pass",
    "ansible_become_exe",
    "ansible_become_flags",
    "ansible_playbook_python",
    "ansible_facts",
];

/// The connection plugins ansible-core ships: a fact named `ansible_<plugin>_...` would be one
/// of their options.
const CONNECTIONS: &[&str] = &["local", "psrp", "ssh", "winrm"];

/// Whether a module's fact `name` is kept out of the top-level variables (and warned about).
pub(crate) fn is_restricted(name: &str) -> bool {
    // Host keys gathered by `setup` share the `ansible_ssh_` prefix and are facts like any.
    if name.starts_with("ansible_ssh_host_key_") {
        return false;
    }
    if NAMED.contains(&name) || name.starts_with("ansible_become_") {
        return true;
    }
    let plugin_option = CONNECTIONS.iter().any(|c| {
        name.strip_prefix("ansible_")
            .and_then(|rest| rest.strip_prefix(c))
            .is_some_and(|rest| rest.starts_with('_'))
    });
    // Virtual network devices (`ansible_local_bridge`, docker's `_gwbridge`) are real facts.
    if plugin_option && !name.ends_with("_bridge") && !name.ends_with("_gwbridge") {
        return true;
    }
    name.strip_prefix("ansible_").and_then(|rest| rest.strip_suffix("_interpreter")).is_some()
}

/// Whether a module's fact `name` is interpreter discovery's, which only the controller sets.
pub(crate) fn is_internal(name: &str) -> bool {
    name.starts_with("discovered_interpreter_")
        || name.starts_with("ansible_discovered_interpreter_")
}

/// ansible's warning for a fact kept out of the top-level variables.
pub(crate) fn warning(name: &str) -> String {
    format!("Removed restricted key from module data: {name}")
}

#[cfg(test)]
mod tests {
    use super::{is_internal, is_restricted};

    #[test]
    fn steering_names_are_restricted_and_facts_are_not() {
        for name in [
            "ansible_host",
            "ansible_connection",
            "ansible_become_anything",
            "ansible_ssh_extra",
            "ansible_local_tmp",
            "ansible_bogus_interpreter",
            "ansible_playbook_python",
        ] {
            assert!(is_restricted(name), "{name}");
        }
        for name in [
            "ansible_ssh_host_key_rsa_public",
            "ansible_local_bridge",
            "ansible_local",
            "ansible_hostname",
            "ansible_user_id",
            "ansible_interpreter",
            "test_fact",
        ] {
            assert!(!is_restricted(name), "{name}");
        }
    }

    #[test]
    fn discovery_facts_are_internal() {
        assert!(is_internal("discovered_interpreter_python"));
        assert!(is_internal("ansible_discovered_interpreter_bogus"));
        assert!(!is_internal("ansible_python_interpreter"));
    }
}
