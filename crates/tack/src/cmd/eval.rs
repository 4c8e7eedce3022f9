//! `tack eval`: renders one expression or template with the given extra vars and prints the
//! result as JSON, the quick way to try a filter or check what ansible would make of a value.
//!
//! `EXPRESSION` with template syntax in it is rendered as a task argument string is
//! (`"{{ x }}"` keeps x's type, mixed text becomes a string); without template syntax it is
//! one Jinja2 expression (`x | default('z')`), evaluated as `debug: var=` evaluates its
//! argument. `--conditional` evaluates it as a `when:`; `--template-file` renders a file as
//! the `template` module does. Errors are printed as ansible prints them, with exit code 1.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args as ClapArgs;
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_yaml::{JsonOptions, Node, Value};

use tack_loader::{DataLoader, HashBehaviour, load_extra_vars};

use crate::options::{ExtraVarsOpts, VaultOpts};
use crate::session::{load_config, vault_secrets};

#[derive(ClapArgs, Debug)]
#[command(about = "Render an expression or template with extra vars and print the result as JSON")]
pub(crate) struct Args {
    /// A Jinja2 expression (`x | default(1)`) or a template (`{{ x }}-{{ y }}`); omit it with
    /// --template-file.
    #[arg(value_name = "EXPRESSION", required_unless_present = "template_file")]
    pub expression: Option<String>,

    #[command(flatten)]
    pub extra_vars: ExtraVarsOpts,
    #[command(flatten)]
    pub vault: VaultOpts,

    /// Evaluate EXPRESSION as a conditional (`when:`) and print true or false.
    #[arg(long = "conditional", conflicts_with = "template_file")]
    pub conditional: bool,
    /// Render this template file as the template module does and print the text as JSON.
    #[arg(long = "template-file", value_name = "PATH", conflicts_with = "expression")]
    pub template_file: Option<PathBuf>,
    /// Print {"type": "<python type name>", "value": <json>} instead of the bare value.
    #[arg(long = "typed")]
    pub typed: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // No inventory: an expression sees exactly the extra vars it is given.
    let config = load_config(crate::session::DisplayLog::Keep)?;
    let loader = DataLoader::new(vault_secrets(&config, &args.vault)?);
    let behaviour = match config.hash_behaviour() {
        tack_config::HashBehaviour::Merge => HashBehaviour::Merge,
        tack_config::HashBehaviour::Replace => HashBehaviour::Replace,
    };
    let extra_vars = load_extra_vars(&loader, &args.extra_vars.extra_vars, behaviour)?;
    let templar = Templar::with_loader(Arc::new(loader));
    let layer = Layer::from_mapping(&extra_vars, Provenance::Trusted);
    let scope = Scope::new().with_layer(Arc::new(layer));

    let value = if let Some(path) = &args.template_file {
        templar.render_file(path, &scope).map_err(|e| e.to_diagnostic())?.value
    } else {
        let text = args.expression.unwrap_or_default();
        // A bare expression is what a user trying a filter types; plain text would otherwise
        // come back unchanged, which tells them nothing.
        let text = if args.conditional || Templar::is_template(&text) {
            text
        } else {
            format!("{{{{ {text} }}}}")
        };
        let node = Node::bare(Value::Str(text));
        if args.conditional {
            let result =
                templar.evaluate_conditional(&node, &scope).map_err(|e| e.to_diagnostic())?;
            Node::bare(Value::Bool(result.value))
        } else {
            templar.render(&node, &scope).map_err(|e| e.to_diagnostic())?.value
        }
    };
    let json =
        tack_yaml::to_json(&value, &JsonOptions::compact()).map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.typed {
        println!("{{\"type\": \"{}\", \"value\": {json}}}", value.python_type());
    } else {
        println!("{json}");
    }
    Ok(ExitCode::SUCCESS)
}
