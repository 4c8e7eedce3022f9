//! The Python type names ansible's messages give values read from variables: a value a
//! template reads from the play's variables is one of ansible's tagged or lazy classes
//! (`_AnsibleTaggedInt`, `_AnsibleTaggedStr`, `_AnsibleTaggedFloat`,
//! `_AnsibleLazyTemplateList`, `_AnsibleLazyTemplateDict`; `bool` and `None` cannot be
//! subclassed), and stays so through attribute and item lookups; a value computed from it is
//! a plain one.
//!
//! minijinja's values carry no such mark, so a failing operation's operand is read from the
//! template source at the error's span: an operand written as a chain (`port`, `svc.port`,
//! `ports[0]`) rooted in a variable the template does not bind itself (or in a name it set to
//! such a chain, or loops over one with), or as such a chain's `| sort` (ansible's gives back
//! its lazy list) or `| first`/`| last` (after `sort`, `reverse`, `list`), is named by the
//! tagged class of its value. Any other operand (a literal, a computed value, a template's own name)
//! keeps its plain name. Only reached when a render has already failed.

use std::sync::Arc;

use minijinja::Error;
use minijinja::machinery::{Token, tokenize};
use minijinja::value::{Object, Value as JValue, ValueKind};

use super::undefined::{Step, parse};
use crate::vars::objects::Root;

/// The tagged class names of a failed operation's operands, where they are read from
/// variables: for a binary operator `op`, (left, right); otherwise the one operand as left.
pub(super) fn operand_names(
    err: &Error,
    root: &Arc<Root>,
    op: Option<&str>,
) -> (Option<&'static str>, Option<&'static str>) {
    let (Some(source), Some(range)) = (err.template_source(), err.range()) else {
        return (None, None);
    };
    let Some(text) = source.get(range) else { return (None, None) };
    let name = |operand: &str| tagged_name(operand.trim(), source, root);
    match op {
        Some(op) => match split_at_operator(text, op) {
            Some((left, right)) => (name(left), name(right)),
            None => (None, None),
        },
        None => {
            // A call's span is the call; its callee is the operand.
            let callee = text.trim().strip_suffix("()").unwrap_or(text);
            (name(callee), None)
        }
    }
}

/// The tagged class of `operand`'s value, if it is a chain rooted in a variable, or in a name
/// the template set to one (`{% set q = port %}`) or loops over one with (`{% for p in
/// ports %}`: every item of that value has the same class).
fn tagged_name(operand: &str, source: &str, root: &Arc<Root>) -> Option<&'static str> {
    // `first` and `last` hand back one of the items themselves, and `sort`, `reverse` and
    // `list` before them keep the items as they are.
    if let Some((chain, filters)) = operand.split_once('|') {
        let filters: Vec<&str> = filters.split('|').map(str::trim).collect();
        let (last, keeping) = filters.split_last()?;
        let kept = keeping.iter().all(|f| matches!(*f, "sort" | "reverse" | "list"));
        let value = chain_or_local(chain.trim(), source, root)?;
        return match *last {
            "first" | "last" if kept => common_class(&value),
            // ansible's `sort` gives back its lazy list.
            "sort" if keeping.is_empty() => class_of(&value),
            _ => None,
        };
    }
    let (name, steps) = parse(operand)?;
    let value = match local_binding(source, name) {
        Binding::None => root.get_value_by_str(name)?,
        Binding::Set(chain) => chain_value(chain, source, root)?,
        Binding::Loop(chain) if steps.is_empty() => {
            return common_class(&chain_value(chain, source, root)?);
        }
        Binding::Loop(_) => return None,
        Binding::Other => return None,
    };
    class_of(&follow(value, steps)?)
}

/// The class every item of `items` has, if they all have the same.
fn common_class(items: &JValue) -> Option<&'static str> {
    let names: Vec<_> = items.try_iter().ok()?.map(|item| class_of(&item)).collect();
    let first = *names.first()?;
    names.iter().all(|n| *n == first).then_some(first)?
}

/// The value of a chain rooted in a variable, or in a name the template set to one.
fn chain_or_local(chain: &str, source: &str, root: &Arc<Root>) -> Option<JValue> {
    let (name, steps) = parse(chain)?;
    match local_binding(source, name) {
        Binding::None => follow(root.get_value_by_str(name)?, steps),
        Binding::Set(bound) => follow(chain_value(bound, source, root)?, steps),
        _ => None,
    }
}

/// The value of a chain rooted in a variable the template does not bind itself.
fn chain_value(chain: &str, source: &str, root: &Arc<Root>) -> Option<JValue> {
    let (name, steps) = parse(chain.trim())?;
    if !matches!(local_binding(source, name), Binding::None) {
        return None;
    }
    follow(root.get_value_by_str(name)?, steps)
}

fn follow(mut value: JValue, steps: Vec<Step>) -> Option<JValue> {
    for step in steps {
        value = match step {
            Step::Attr(attr) => value.get_attr(&attr).ok()?,
            Step::Item(key) => value.get_item(&key).ok()?,
            Step::Unknown => return None,
        };
        if value.is_undefined() {
            return None;
        }
    }
    Some(value)
}

/// The class ansible gives a value of this kind read from variables.
fn class_of(value: &JValue) -> Option<&'static str> {
    Some(match value.kind() {
        ValueKind::Bool => "bool",
        ValueKind::None => "NoneType",
        ValueKind::Number if value.is_integer() => "_AnsibleTaggedInt",
        ValueKind::Number => "_AnsibleTaggedFloat",
        ValueKind::String => "_AnsibleTaggedStr",
        ValueKind::Seq => "_AnsibleLazyTemplateList",
        ValueKind::Map => "_AnsibleLazyTemplateDict",
        _ => return None,
    })
}

/// The operands either side of the last `op` outside brackets and strings (the span of a
/// failed binary operation is that operation, and its operators associate to the left).
fn split_at_operator<'t>(text: &'t str, op: &str) -> Option<(&'t str, &'t str)> {
    let mut depth = 0usize;
    let mut last = None;
    for item in tokenize(text, true, minijinja::syntax::SyntaxConfig::default()) {
        let (token, span) = item.ok()?;
        let at = span.start_offset as usize;
        match token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth = depth.saturating_sub(1);
            }
            _ if depth == 0 && text.get(at..span.end_offset as usize) == Some(op) => {
                last = Some((at, span.end_offset as usize));
            }
            _ => {}
        }
    }
    let (start, end) = last?;
    Some((&text[..start], &text[end..]))
}

/// How the template binds a name itself.
enum Binding<'s> {
    /// It does not: the name is the variable's.
    None,
    /// Only by `{% set name = <expression> %}`, written as here.
    Set(&'s str),
    /// Only as the one target of `{% for name in <expression> %}`, written as here.
    Loop(&'s str),
    /// Otherwise (several bindings, a parameter, an import, a `with`, an unpacking target).
    Other,
}

/// How the template source binds `name` itself.
fn local_binding<'s>(source: &'s str, name: &str) -> Binding<'s> {
    let mut toks = Vec::new();
    for item in tokenize(source, false, minijinja::syntax::SyntaxConfig::default()) {
        let Ok((token, span)) = item else { return Binding::Other };
        toks.push((token, span.start_offset as usize, span.end_offset as usize));
    }
    let mut found = Binding::None;
    let mut i = 0;
    while i < toks.len() {
        if !matches!(toks[i].0, Token::BlockStart) {
            i += 1;
            continue;
        }
        let Some(end) = (i..toks.len()).find(|&j| matches!(toks[j].0, Token::BlockEnd)) else {
            return Binding::Other;
        };
        let tag = &toks[i + 1..end];
        let word = |k: usize| match tag.get(k).map(|t| &t.0) {
            Some(Token::Ident(w)) => Some(*w),
            _ => None,
        };
        let rest = |from: usize| {
            let (start, stop) = (tag.get(from).map(|t| t.1), tag.last().map(|t| t.2));
            start.zip(stop).and_then(|(a, b)| source.get(a..b))
        };
        let named = |t: &(Token, usize, usize)| matches!(t.0, Token::Ident(w) if w == name);
        let binds = match word(0) {
            // The targets: before `=` (or the whole tag of a block `set`), before `in`.
            Some("set") => tag[1..].iter().take_while(|t| !matches!(t.0, Token::Assign)).any(named),
            Some("for") => {
                tag[1..].iter().take_while(|t| !matches!(t.0, Token::Ident("in"))).any(named)
            }
            Some("with" | "macro" | "call" | "import" | "from") => tag.iter().any(named),
            _ => false,
        };
        if binds {
            let simple = word(1) == Some(name);
            let this = match (word(0), tag.get(2).map(|t| &t.0)) {
                (Some("set"), Some(Token::Assign)) if simple => rest(3).map(Binding::Set),
                (Some("for"), Some(Token::Ident("in"))) if simple => {
                    // The loop's iterable, without a filter condition or `recursive`.
                    let iterable = rest(3).map(|r| r.split(" if ").next().unwrap_or(r));
                    iterable.map(|r| Binding::Loop(r.trim_end_matches(" recursive")))
                }
                _ => None,
            };
            found = match (found, this) {
                (Binding::None, Some(b)) => b,
                _ => return Binding::Other,
            };
        }
        i = end + 1;
    }
    found
}
