//! The runtime side of the Jinja2 context rules `tags` rewrites templates for: an include
//! rendered without context, the play's variables hidden while an import runs, and macros
//! that take `varargs`/`kwargs`.
//!
//! It registers only `__tack_` names and must not decide when a rule applies (that is the
//! rewrite's); it changes no value and prints nothing.

use std::sync::Arc;

use minijinja::value::{Kwargs, Object, Value as JValue};
use minijinja::{Environment, Error, ErrorKind, State};

use tack_yaml::pyrepr::str_repr;

use super::{active, errors, tags};
use crate::vars::Scope;
use crate::vars::objects::{Ctx, Root};

pub(super) fn register(env: &mut Environment<'static>) {
    env.add_filter(tags::BARE_INCLUDE, bare_include);
    env.add_function(tags::CONTEXT, |show: bool| {
        active::hide_context(!show);
        JValue::from(())
    });
    env.add_function(
        tags::VARARGS_MACRO,
        |inner: JValue, params: Vec<String>, va: bool, kw: bool| {
            JValue::from_object(VarargsMacro { inner, params, varargs: va, kwargs: kw })
        },
    );
}

/// `{% include name without context %}`: the file rendered on its own, with none of the
/// play's variables and none of the including template's names (Jinja2 gives it a new
/// context holding the environment's globals only).
fn bare_include(
    state: &State,
    _body: JValue,
    args: minijinja::value::Rest<JValue>,
) -> Result<JValue, Error> {
    // The prepass puts a mark before the name (`chosen`): whether a managed host chose it.
    let (name, ignore_missing) = match args.as_slice() {
        [mark, name, missing] => {
            (super::chosen::named(mark.clone(), name.clone()), missing.is_true())
        }
        [name, missing] => (name.clone(), missing.is_true()),
        _ => return Err(Error::new(ErrorKind::InvalidOperation, "include without a name")),
    };
    let Some(ctx) = active::current_ctx() else {
        return Err(Error::new(ErrorKind::InvalidOperation, "include outside a render"));
    };
    let names: Vec<JValue> = match name.as_str() {
        Some(_) => vec![name.clone()],
        None => name.try_iter()?.collect(),
    };
    let mut tried = Vec::new();
    for choice in names {
        let Some(choice) = choice.as_str() else {
            return Err(Error::new(ErrorKind::InvalidOperation, "template name was not a string"));
        };
        let path = super::env::join_path(choice, state.name());
        let template = match state.env().get_template(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::TemplateNotFound => {
                tried.push(choice.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        let bare = Ctx { scope: Scope::new(), engine: ctx.engine.clone() };
        let root = Arc::new(Root::new(bare.clone()));
        let (result, _) = active::with_ctx(bare, template.name(), || {
            active::collecting(|| template.render(JValue::from_dyn_object(root.clone())))
        });
        return match result {
            Ok(out) => Ok(JValue::from(out)),
            Err(e) => Err(errors::ansible_error(&e, Some(&root))),
        };
    }
    match tried.as_slice() {
        _ if ignore_missing => Ok(JValue::from("")),
        [one] => Err(Error::new(
            ErrorKind::TemplateNotFound,
            format!("tried to include non-existing template {one:?}"),
        )),
        _ => Err(Error::new(
            ErrorKind::TemplateNotFound,
            format!(
                "tried to include one of multiple templates, none of which existed {}",
                JValue::from(tried)
            ),
        )),
    }
}

/// A macro whose body uses `varargs`/`kwargs`: positional arguments beyond its parameters go
/// to `varargs`, keyword arguments that name none of them to `kwargs`, as Jinja2's do.
#[derive(Debug)]
struct VarargsMacro {
    inner: JValue,
    params: Vec<String>,
    varargs: bool,
    kwargs: bool,
}

impl Object for VarargsMacro {
    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[JValue]) -> Result<JValue, Error> {
        let (positional, given) = match args.split_last() {
            Some((last, rest)) if last.is_kwargs() => (rest, Some(Kwargs::try_from(last.clone())?)),
            _ => (args, None),
        };
        let take = positional.len().min(self.params.len());
        let extra: Vec<JValue> = positional[take..].to_vec();
        if !extra.is_empty() && !self.varargs {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                format!("macro {} takes not more than {take} argument(s)", str_repr(&self.name())),
            ));
        }
        let mut named: Vec<(String, JValue)> = Vec::new();
        let mut rest = indexmap::IndexMap::new();
        if let Some(given) = &given {
            for key in given.args() {
                let value: JValue = given.peek(key)?;
                if key == "caller" || self.params.iter().any(|p| p == key) {
                    named.push((key.to_string(), value));
                } else if self.kwargs {
                    rest.insert(JValue::from(key), value);
                } else {
                    return Err(Error::new(
                        ErrorKind::TooManyArguments,
                        format!(
                            "macro {} takes no keyword argument {}",
                            str_repr(&self.name()),
                            str_repr(key)
                        ),
                    ));
                }
            }
        }
        named.push(("varargs".into(), crate::value::new_list(extra)));
        named.push(("kwargs".into(), crate::value::new_dict(rest)));
        let mut call: Vec<JValue> = positional[..take].to_vec();
        call.push(JValue::from(named.into_iter().collect::<Kwargs>()));
        self.inner.call(state, &call)
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        match key.as_str()? {
            "name" => Some(JValue::from(self.name())),
            "arguments" => Some(JValue::from_iter(self.params.iter().cloned())),
            _ => self.inner.get_attr(key.as_str()?).ok().filter(|v| !v.is_undefined()),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<macro {}>", self.name())
    }
}

impl VarargsMacro {
    fn name(&self) -> String {
        let name = self.inner.get_attr("name").ok().and_then(|n| n.as_str().map(str::to_string));
        let name = name.unwrap_or_default();
        name.strip_prefix("__tack_va_").unwrap_or(&name).to_string()
    }
}
