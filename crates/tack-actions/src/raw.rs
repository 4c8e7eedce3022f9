//! `raw`, as ansible's action plugin runs it: no module, the free-form text handed to the
//! host's shell (through `executable -c` when one is named), `changed` always, skipped in
//! check mode.

use tack_yaml::Mapping;

use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::shell_run;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if input.check_mode {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("skipped"), b(true));
        return ActionOutput::new(data);
    }
    let text = |k: &str| input.args.get(k).map(|n| tack_yaml::pyrepr::str(&n.value));
    let cmd = text("_raw_params").unwrap_or_default();
    let executable = input.args.get("executable").filter(|n| n.value.is_truthy());
    let cmd = match executable {
        Some(exe) => {
            format!("{} -c {}", tack_yaml::pyrepr::str(&exe.value), tack_py::shlex::quote(&cmd))
        }
        None => cmd,
    };
    shell_run::run(input, &cmd)
}
