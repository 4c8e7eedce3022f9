//! The minijinja environment, configured as ansible's `AnsibleEnvironment`: `trim_blocks` on,
//! no auto-escaping, undefined values that chain, Python's `str()` for every `{{ }}` result,
//! Python's methods on values, and the plugin families registered.

use std::borrow::Cow;
use std::path::Path;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Value as JValue;
use minijinja::value::{Rest, ValueKind, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Output, State, UndefinedBehavior};

use super::{EXPRESSION, INLINE, active, prepass};
use crate::python;
use crate::python_plugins::{PluginCall, PluginFailure, PluginKind, PythonPlugins};
use crate::value::is_undefined;
use crate::vars::objects::is_omit;

/// The environment for one engine.
///
/// Plugin families register at the end of this function, after tack's own builtins so that
/// theirs win: `crate::filters::register(&mut env)`, `crate::test_plugins::register(&mut env)`,
/// `crate::lookups::register(&mut env)`. A plugin that needs the run's loader, secrets or
/// variables takes them from `crate::value::current()` when it is called.
pub(super) fn build(
    plugins: Option<&std::sync::Arc<dyn crate::PythonPlugins>>,
) -> Environment<'static> {
    let mut env = Environment::new();
    // ansible's undefined fails when used (printed, iterated, tested for truth, an attribute
    // taken); where ansible lets a missing chain be undefined (`a.b.c is defined`,
    // `a.b | default(1)`), the pre-pass turns the chain into a probe that stops at the first
    // missing step.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Two whitespace flags on the default delimiters cannot make an invalid syntax.
    env.set_syntax(syntax());
    // Errors keep the failing template's source, which some of ansible's messages are read
    // from (a macro parameter that was not passed); only failures pay for it.
    env.set_debug(true);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_formatter(format_value);
    env.set_loader(load);
    env.set_path_join_callback(join_path);
    env.set_unknown_method_callback(python::methods::unknown_method);
    python::register(&mut env);
    env.add_function(prepass::LIST, |v: JValue| -> Result<JValue, Error> {
        Ok(crate::value::new_list(v.try_iter()?.collect()))
    });
    env.add_function(prepass::DICT, |v: JValue| -> Result<JValue, Error> {
        let mut entries = indexmap::IndexMap::new();
        for k in v.try_iter()? {
            let value = v.get_item(&k)?;
            entries.insert(k, value);
        }
        Ok(crate::value::new_dict(entries))
    });
    env.add_function(prepass::MOD, python::percent::py_mod);
    env.add_function(prepass::PROBE, probe);
    env.add_function(prepass::EMBEDDED, embedded);
    env.add_function(prepass::EMBEDDED_TERM, embedded_term);
    env.add_function(
        "undef",
        // The hint's type is checked as a Python call's arguments are.
        |hint: Option<JValue>, kwargs: minijinja::value::Kwargs| {
            crate::markers::keep(undef(hint, kwargs), Some("AnsibleTypeError"))
        },
    );
    env.add_function(super::chosen::MARK, super::chosen::mark);
    env.add_function(super::chosen::NAMED, super::chosen::named);
    super::context::register(&mut env);
    // Plugins register last: where a name clashes with a builtin, ansible's version wins.
    crate::filters::register(&mut env);
    crate::filters::install_vaulted(super::vaulted_value);
    crate::test_plugins::register(&mut env);
    crate::lookups::register(&mut env);
    // Python plugins on the run's plugin paths shadow builtins of the same name, as ansible
    // searches those paths before its own.
    if let Some(plugins) = plugins {
        register_python(&mut env, plugins);
    }
    // A collection's filters and tests, by fully qualified name (see `prepass`).
    env.add_filter(prepass::QUALIFIED_FILTER, |_: &State, raw: Rest<ValueOrKwargs>| {
        call_qualified(PluginKind::Filter, raw)
    });
    env.add_test(prepass::QUALIFIED_TEST, |_: &State, raw: Rest<ValueOrKwargs>| {
        let value = call_qualified(PluginKind::Test, raw)?;
        if value.is_undefined() {
            return Err(crate::value::undefined_error(&value));
        }
        Ok(value.is_true())
    });
    env
}

/// `dump_object` of the failure `value` stands for (a captured marker, or a variable whose
/// template failed, read as minijinja's invalid value): `{"exception": ...}`, the exception
/// holding the failure's words as ansible's has them.
fn failure_dump(value: &JValue) -> Option<JValue> {
    let (failure, class) = crate::markers::disarm_captured(value)
        .or_else(|| (value.kind() == ValueKind::Invalid).then(|| (value.clone(), None)))?;
    let message = super::errors::message(&crate::value::invalid_error(&failure));
    let message = message.strip_prefix(super::RENDER_FAILED).unwrap_or(&message);
    let class = class.or_else(|| crate::markers::class_of(message));
    let exception = crate::markers::CapturedException { message: message.to_string(), class };
    let mut entries = indexmap::IndexMap::new();
    entries.insert(JValue::from("exception"), JValue::from_object(exception));
    Some(crate::value::new_dict(entries))
}

/// A collection's filter or test: the pre-pass put its name after the value.
fn call_qualified(kind: PluginKind, raw: Rest<ValueOrKwargs>) -> Result<JValue, Error> {
    let (mut positional, keywords) = crate::filters::args::split(raw);
    let name = match positional.len() > 1 {
        true => positional.remove(1).as_str().unwrap_or_default().to_string(),
        false => String::new(),
    };
    if super::protomatter::handles(&name, kind == PluginKind::Test) {
        let readers = super::protomatter::Readers {
            container_origin: crate::vars::objects::written_origin_of,
            is_decrypted: super::active::is_decrypted,
            failure_dump,
        };
        return super::protomatter::call(&name, &positional, &keywords, &readers)
            .map_err(|message| super::final_error(ErrorKind::InvalidOperation, message));
    }
    let unknown = || match kind {
        PluginKind::Test => crate::test_plugins::unknown_test_message(&name),
        _ => crate::filters::unknown_filter_message(&name),
    };
    let plugins = crate::value::current().and_then(|env| env.templar().engine().plugins().cloned());
    let Some(plugins) = plugins else {
        return Err(super::final_error(ErrorKind::InvalidOperation, unknown()));
    };
    match plugin_call(&plugins, kind, &name, positional, keywords)? {
        Err(PluginFailure::Missing) => {
            Err(super::final_error(ErrorKind::InvalidOperation, unknown()))
        }
        reply => finish(reply),
    }
}

/// Writes one `{{ }}` result as Python's `str()` would, remembering it for native typing.
fn format_value(out: &mut Output, _state: &mut State, value: &JValue) -> Result<(), Error> {
    if is_undefined(value) {
        // minijinja fails on printing an undefined before calling the formatter, except for
        // the one an `if` expression without `else` yields: Jinja2 prints that as nothing,
        // and as the only node it is the template's (unstorable) value.
        active::emitted(value, 0);
        return Ok(());
    }
    if is_omit(value) {
        active::emitted_omit();
        return Ok(());
    }
    if value.is_none() {
        return Ok(());
    }
    // `{{ hostvars[host] }}` as a whole value must not render every variable of the host
    // (one may be broken, another deprecated): as in ansible, the view stays lazy, and its
    // text is made only if the render's text is what it gives. So does an undecryptable
    // value's marker, which a variable's template hands on as it is.
    if crate::vars::objects::is_lazy_view(value) || crate::markers::is_marker(value) {
        let marker = active::emitted_deferred(value);
        return out
            .write_str(&marker)
            .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"));
    }
    let text = match python::repr::str_of(value) {
        Ok(text) => text,
        // A container holding an undefined value is a value as long as nobody reads that
        // item (ansible's lazy markers): its text is made only if the render's text is what
        // it gives, and fails then.
        Err(e)
            if e.kind() == ErrorKind::UndefinedError
                && matches!(value.kind(), ValueKind::Seq | ValueKind::Map) =>
        {
            let Some(failure) = active::lazy_container() else { return Err(e) };
            let kept = crate::value::marked(value, failure)?;
            let marker = active::emitted_deferred(&kept);
            return out
                .write_str(&marker)
                .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"));
        }
        Err(e) => return Err(e),
    };
    out.write_str(&text).map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))?;
    active::emitted(value, text.len());
    Ok(())
}

/// `a.b["c"]` for a guarded use: undefined at the first step that is missing (or whose
/// template is undefined), instead of an error.
fn probe(root: JValue, steps: minijinja::value::Rest<JValue>) -> JValue {
    let mut current = root;
    for key in steps.iter() {
        if current.is_undefined() {
            return current;
        }
        current = match current.get_item(key) {
            Ok(v) if v.is_undefined() => match key.as_str() {
                // `x.y` also finds an attribute Jinja2 would find (`loop.index`, methods).
                Some(name) => current.get_attr(name).unwrap_or(JValue::UNDEFINED),
                None => v,
            },
            Ok(v) => v,
            Err(_) => JValue::UNDEFINED,
        };
    }
    current
}

/// ansible's `undef(hint=None)`: an undefined value (a role's mandatory variable, a lookup's
/// default that must not be used). What using it says comes from the call itself
/// (`undefined::explain`): the hint, or ansible's default words.
fn undef(hint: Option<JValue>, kwargs: minijinja::value::Kwargs) -> Result<JValue, Error> {
    let named: Option<JValue> = kwargs.get("hint")?;
    kwargs.assert_all_used()?;
    let hint = hint.or(named);
    let hint = hint.filter(|h| !h.is_none() && !h.is_undefined());
    if let Some(hint) = &hint
        && hint.as_str().is_none()
    {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "The 'hint' argument must be of type 'str' or 'NoneType', not '{}'.",
                crate::python::repr::type_name(hint)
            ),
        ));
    }
    let hint = hint.and_then(|h| h.as_str().filter(|h| !h.is_empty()).map(str::to_string));
    active::undef_made(hint);
    Ok(JValue::UNDEFINED)
}

/// A string constant in a conditional that is itself a template: rendered, with ansible's
/// warning (the feature is deprecated).
fn embedded(source: String) -> Result<JValue, Error> {
    let diag = tack_diag::Diagnostic::at(
        "Jinja constant strings should not contain embedded templates. This feature will be \
         disabled by default in ansible-core 2.23.",
        active::current_origin(),
    )
    .with_help("Use inline expressions, for example: `when: \"{{ a_var }}\" == 42` becomes `when: a_var == 42`");
    tack_diag::warn(&diag);
    render_embedded(&source)
}

/// Renders a string constant holding a template as ansible's templar does there: a
/// container holding an undefined value, or an undefined result, is a value (ansible's
/// marker) that fails only where it is used, with the render's words.
fn render_embedded(source: &str) -> Result<JValue, Error> {
    let Some(render) = crate::value::current() else { return Ok(JValue::from(source)) };
    match active::accepting_lazy(|| render.render_str(source)) {
        Err(e) if e.kind() == ErrorKind::UndefinedError => {
            active::undef_made(Some(super::errors::message(&e)));
            Ok(JValue::UNDEFINED)
        }
        other => other,
    }
}

/// A lookup's term that is a string constant holding a template: rendered, with ansible's
/// warning (the feature is deprecated), pointing at the template that holds it.
fn embedded_term(source: String) -> Result<JValue, Error> {
    let diag = tack_diag::Diagnostic::at(
        "Jinja constant strings should not contain embedded templates. This feature will be \
         disabled by default in ansible-core 2.23.",
        active::current_origin(),
    )
    .with_help(
        "Use inline expressions, for example: `msg: \"{{ lookup('env', '{{ a_var }}') }}\"` \
         becomes `msg: \"{{ lookup('env', a_var) }}\"`",
    );
    tack_diag::warn(&diag);
    render_embedded(&source)
}

/// Template strings are cached under their own text; other names are template files.
fn load(name: &str) -> Result<Option<String>, Error> {
    let loaded = load_source(name)?;
    // A chain too deep to compile fails as ansible's recursion does (`engine::depth`).
    if let Some(text) = &loaded
        && super::depth::too_deep(text, syntax())
    {
        return Err(Error::new(ErrorKind::InvalidOperation, "recursion limit exceeded"));
    }
    // A call naming a keyword twice fails the whole template, as Python's compiler fails
    // Jinja2's code for it; a syntax error (found first by Jinja2's parser) still wins.
    let written = match name.chars().next() {
        Some(INLINE) => Some((&name[INLINE.len_utf8()..], super::kwargs::Shape::Template)),
        Some(EXPRESSION) => {
            Some((&name[EXPRESSION.len_utf8()..], super::kwargs::Shape::Expression))
        }
        _ => None,
    };
    if let (Some(text), Some((source, shape))) = (&loaded, written)
        && let Some(message) = super::kwargs::repeated(source, shape, syntax())
        && minijinja::machinery::parse(text, name, syntax()).is_ok()
    {
        let message = format!("Error rendering template: {message}");
        return Err(super::final_error(ErrorKind::InvalidOperation, message));
    }
    Ok(loaded)
}

/// The environment's delimiters: the defaults, with `trim_blocks`.
pub(super) fn syntax() -> SyntaxConfig {
    SyntaxConfig::builder().trim_blocks(true).build().unwrap_or_default()
}

fn load_source(name: &str) -> Result<Option<String>, Error> {
    if let Some(refusal) = name.strip_prefix(REFUSED) {
        return Err(super::final_error(ErrorKind::InvalidOperation, refusal.to_string()));
    }
    if let Some(source) = name.strip_prefix(INLINE) {
        let rewritten = prepass::rewrite(source, prepass::Mode::Template);
        return Ok(Some(rewritten.unwrap_or_else(|| source.to_string())));
    }
    if let Some(source) = name.strip_prefix(EXPRESSION) {
        let rewritten = prepass::rewrite(source, prepass::Mode::Expression);
        return Ok(Some(rewritten.unwrap_or_else(|| source.to_string())));
    }
    match std::fs::read_to_string(name) {
        Ok(text) => {
            // Read as the top-level file is: Jinja2's lexer takes `\r\n` and `\r` as newlines.
            let text = super::template_file::with_newlines(&text, "\n").unwrap_or(text);
            let text = super::tags::rewrite(&text, true).unwrap_or(text);
            Ok(Some(prepass::rewrite(&text, prepass::Mode::File).unwrap_or(text)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::new(ErrorKind::TemplateNotFound, format!("{name}: {e}"))),
    }
}

/// `{% include "x" %}` in a template file names a file on the `template` action's search
/// path (the first that exists; the last candidate when none does). A name a managed host
/// chose (`chosen`) is found only inside that search path, and never from a template that is
/// not a file; otherwise the joined name is a refusal [`load`] reports.
pub(super) fn join_path<'s>(name: &'s str, parent: &'s str) -> Cow<'s, str> {
    let chosen = super::chosen::include_host_named();
    if parent.starts_with([INLINE, EXPRESSION]) {
        if chosen {
            return Cow::Owned(format!(
                "{REFUSED}the template an include or import names was named by a managed host, \
                 and a controller file a host chose is read only from a template file's \
                 search path"
            ));
        }
        return Cow::Borrowed(name);
    }
    let candidates = super::template_file::search_path(Path::new(parent));
    let refused = |escape: tack_loader::confine::Escape| {
        let subject = "the template an include or import names was";
        Cow::Owned(format!("{REFUSED}{}", escape.message(subject, name)))
    };
    if chosen && let Err(escape) = tack_loader::confine::check_name(name, &candidates) {
        return refused(escape);
    }
    if Path::new(name).is_absolute() {
        return Cow::Borrowed(name);
    }
    let found = candidates.iter().map(|dir| dir.join(name)).find(|p| p.is_file());
    if chosen
        && let Some(path) = &found
        && let Err(escape) = tack_loader::confine::check_found(path, &candidates)
    {
        return refused(escape);
    }
    match found.or_else(|| candidates.last().map(|dir| dir.join(name))) {
        Some(path) => Cow::Owned(path.to_string_lossy().into_owned()),
        None => Cow::Borrowed(name),
    }
}

/// The first character of a joined name that is a refusal rather than a file
/// ([`join_path`]); no file name starts with it.
const REFUSED: char = '\u{0}';

/// Registers the run's Python filters and tests (see `crate::python_plugins`).
fn register_python(env: &mut Environment<'static>, plugins: &std::sync::Arc<dyn PythonPlugins>) {
    for name in plugins.jinja_names(PluginKind::Filter) {
        let plugins = plugins.clone();
        let called = name.clone();
        env.add_filter(name, move |_: &State, raw: Rest<ValueOrKwargs>| {
            call_python(&plugins, PluginKind::Filter, &called, raw)
        });
    }
    for name in plugins.jinja_names(PluginKind::Test) {
        let plugins = plugins.clone();
        let called = name.clone();
        env.add_test(name, move |_: &State, raw: Rest<ValueOrKwargs>| -> Result<bool, Error> {
            let value = call_python(&plugins, PluginKind::Test, &called, raw)?;
            if value.is_undefined() {
                // ansible hands the undefined argument back as the test's result; using it
                // fails with the value's own message.
                return Err(crate::value::undefined_error(&value));
            }
            Ok(value.is_true())
        });
    }
}

/// A Python filter's or test's call: an undefined argument is the result (ansible's
/// intercept), every other argument crosses rendered.
fn call_python(
    plugins: &std::sync::Arc<dyn PythonPlugins>,
    kind: PluginKind,
    name: &str,
    raw: Rest<ValueOrKwargs>,
) -> Result<JValue, Error> {
    let (positional, keywords) = crate::filters::args::split(raw);
    finish(plugin_call(plugins, kind, name, positional, keywords)?)
}

fn finish(reply: Result<JValue, PluginFailure>) -> Result<JValue, Error> {
    reply.map_err(|failure| super::final_error(ErrorKind::InvalidOperation, failure.to_string()))
}

/// [`call_python`]'s call, its plugin's failure not yet worded (`Err` only when an argument
/// cannot cross).
fn plugin_call(
    plugins: &std::sync::Arc<dyn PythonPlugins>,
    kind: PluginKind,
    name: &str,
    positional: Vec<JValue>,
    keywords: Vec<(String, JValue)>,
) -> Result<Result<JValue, PluginFailure>, Error> {
    if let Some(undefined) =
        positional.iter().chain(keywords.iter().map(|(_, v)| v)).find(|v| v.is_undefined())
    {
        return Ok(Ok(undefined.clone()));
    }
    let args = positional.iter().map(crate::value::to_value).collect::<Result<Vec<_>, _>>()?;
    let mut kwargs = Vec::with_capacity(keywords.len());
    for (key, value) in &keywords {
        kwargs.push((key.clone(), crate::value::to_value(value)?));
    }
    let call = PluginCall { kind, name, args, kwargs };
    let reply = match crate::value::current() {
        Some(env) => plugins.call(call, &env),
        None => plugins.call(call, &crate::value::NoVariables),
    };
    Ok(reply.map(crate::value::plugin_value))
}
