//! The `validate` option of file-writing modules: the new content is written to a private
//! temporary file, the command (`%s` standing for that file) must exit 0, and only then does
//! the content replace the destination. The temporary file is always removed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use super::argspec::Params;
use super::common::{fail, shlex_split};
use super::fsattr::Outcome;
use super::textfile::write_atomic;
use super::{Ctx, ModuleResult};

/// Writes `content` to `dest` once `validate` (when given) accepts it.
pub(super) fn write_validated(p: &Params, dest: &str, content: &[u8], _ctx: Ctx) -> Outcome<()> {
    if let Some(validate) = p.str("validate").filter(|v| !v.is_empty()) {
        run_validate(validate, content)?;
    }
    write_atomic(dest, content, p.bool("unsafe_writes"))
        .map_err(|e| fail(format!("Could not replace {dest:?}: {e}")))
}

/// Runs the `validate` command on `content`; `Err` is ansible's failure.
pub(super) fn run_validate(validate: &str, content: &[u8]) -> Outcome<()> {
    if !validate.contains("%s") {
        return Err(fail(format!("validate must contain %s: {validate}")));
    }
    let dir = super::environment::temp_dir();
    let tmp = dir.join(format!(
        ".tack-validate-{}-{}",
        std::process::id(),
        super::tempname::random_part()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(content));
    let outcome = match written {
        Err(e) => Err(fail(format!("could not write the file to validate: {e}"))),
        Ok(()) => {
            let line = validate.replace("%s", &tmp.to_string_lossy());
            match shlex_split(&line) {
                None => Err(fail("Invalid command syntax in run_command")),
                Some(argv) if argv.is_empty() => Err(fail("validate command is empty")),
                Some(argv) => {
                    match super::environment::command(&argv[0]).args(&argv[1..]).output() {
                        Ok(out) if out.status.success() => Ok(()),
                        Ok(out) => {
                            let rc = out.status.code().unwrap_or(-1);
                            Err(fail(format!(
                                "failed to validate: rc:{rc} error:{}",
                                String::from_utf8_lossy(&out.stderr)
                            )))
                        }
                        Err(e) => {
                            let mut r = ModuleResult::new();
                            r.insert("rc".into(), e.raw_os_error().unwrap_or(2).into());
                            r.extend(fail("Error executing command."));
                            Err(r)
                        }
                    }
                }
            }
        }
    };
    let _ = std::fs::remove_file(&tmp);
    outcome
}
