//! Which controller interpreter has ansible-core: `--ansible-python PATH` when given (an
//! error when it cannot import ansible), else the first of the configured candidates that
//! can.
//!
//! Owns the probe (one interpreter start per candidate, once per run); what the candidates
//! are is the binary's (its options, settings and inventory).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{AnsibleCore, Found};

/// `--ansible-python` named an interpreter that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--ansible-python {path}: {why}")]
pub struct FindError {
    pub path: String,
    pub why: String,
}

/// The run's ansible-core: `option` (`--ansible-python`) alone when given, else the first of
/// `candidates` (configured interpreters, in the binary's order) that imports ansible.
pub fn find(option: Option<&Path>, candidates: &[String]) -> Result<Found, FindError> {
    if let Some(path) = option {
        return probe(path)
            .map(Found::Core)
            .map_err(|why| FindError { path: path.display().to_string(), why });
    }
    let mut tried = Vec::new();
    for candidate in candidates {
        // `auto` and its kin ask for interpreter discovery, which names no controller path.
        if candidate.is_empty() || candidate.starts_with("auto") || candidate.contains("{{") {
            continue;
        }
        match probe(Path::new(candidate)) {
            Ok(core) => return Ok(Found::Core(core)),
            Err(why) => tried.push(format!("{candidate} ({why})")),
        }
    }
    let looked = if tried.is_empty() {
        "no Python interpreter is configured".to_string()
    } else {
        format!("tried {}", tried.join(", "))
    };
    Ok(Found::None(format!(
        "no ansible-core was found on the controller to run it through ansible's own module code \
         ({looked}); point tack at a Python that has ansible-core with --ansible-python PATH, or \
         set ansible_python_interpreter for localhost or interpreter_python in ansible.cfg"
    )))
}

fn probe(python: &Path) -> Result<AnsibleCore, String> {
    let out = Command::new(python)
        .args(["-c", "import ansible, sys; sys.stdout.write(ansible.__version__)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run it: {e}"))?;
    if !out.status.success() {
        return Err("it cannot import ansible".into());
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(AnsibleCore { python: PathBuf::from(python), version })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_without_ansible_is_passed_over_and_named() {
        let found = find(None, &["auto".into(), "/nonexistent/python".into()]).unwrap();
        let Found::None(why) = found else { panic!("found {found:?}") };
        assert!(why.contains("/nonexistent/python (cannot run it"), "{why}");
        assert!(why.contains("--ansible-python PATH"), "{why}");
    }

    #[test]
    fn the_option_is_an_error_when_it_cannot_be_used() {
        let err = find(Some(Path::new("/nonexistent/python")), &[]).unwrap_err();
        assert!(err.to_string().starts_with("--ansible-python /nonexistent/python: "), "{err}");
    }

    #[test]
    fn the_reference_ansible_core_is_found() {
        let reference = "/opt/ansible-ref/bin/python";
        if !Path::new(reference).exists() {
            eprintln!("no ansible-core at {reference}: not run");
            return;
        }
        let found = find(None, &["/nonexistent/python".into(), reference.into()]).unwrap();
        let Found::Core(core) = found else { panic!("{found:?}") };
        assert_eq!(core.python, Path::new(reference));
        assert_eq!(core.version, "2.21.5");
    }
}
