//! A rewrite of a template file's tags before minijinja compiles it, for Jinja2 rules minijinja
//! does otherwise and that a change of source can give exactly (the runtime side is in
//! `context`):
//!
//! - `{% include ... without context %}` renders the file with no variables, as its own render
//!   (minijinja ignores the marker);
//! - `{% import %}` and `{% from ... import %}` without `with context` run inside a macro of
//!   their own with the play's variables hidden, so the macros they define see neither the
//!   play's variables nor the importer's names;
//! - `loop` written outside any `{% for %}` of the file is undefined (Jinja2 does not pass the
//!   including template's `loop` into an included one);
//! - a macro whose body refers to `varargs` or `kwargs` takes extra positional and keyword
//!   arguments into them;
//! - with `trim_blocks`, the newline after `{% raw %}` is kept (Jinja2 takes a raw block's
//!   content as written).
//!
//! It reads minijinja's own tokens of the default syntax, so strings and comments are never
//! touched; a source it cannot tokenize is left as it is. It must not change how expressions
//! evaluate (that is `prepass`).

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

/// What a bare `loop` outside a for loop becomes: a name no template defines, reported as
/// `'loop' is undefined`.
pub(crate) const NO_LOOP: &str = "__tack_no_loop";
/// The filter that renders an include without context.
pub(crate) const BARE_INCLUDE: &str = "__tack_bare_include";
/// The function that hides (`false`) or shows (`true`) the play's variables.
pub(crate) const CONTEXT: &str = "__tack_context";
/// The function that wraps a macro to take `varargs`/`kwargs`.
pub(crate) const VARARGS_MACRO: &str = "__tack_varargs_macro";
/// The prefix of a macro's name once wrapped.
const WRAPPED: &str = "__tack_va_";

struct Tok<'s> {
    token: Token<'s>,
    start: usize,
    end: usize,
}

/// A macro being read: where its name and parameter list are, and what its body uses.
struct OpenMacro<'s> {
    name: &'s str,
    name_span: (usize, usize),
    /// Where the parameter list's `)` is, and whether it has parameters.
    close_paren: usize,
    params: Vec<&'s str>,
    varargs: bool,
    kwargs: bool,
}

/// The rewritten file source, or `None` when nothing needs rewriting.
pub(crate) fn rewrite(source: &str, trim_blocks: bool) -> Option<String> {
    if !["loop", "include", "import", "varargs", "kwargs", "raw"].iter().any(|w| source.contains(w))
    {
        return None;
    }
    let mut toks = Vec::new();
    for item in tokenize(source, false, SyntaxConfig::default()) {
        let (token, span) = item.ok()?;
        toks.push(Tok { token, start: span.start_offset as usize, end: span.end_offset as usize });
    }
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut for_depth = 0usize;
    let mut macros: Vec<OpenMacro> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].token {
            Token::TemplateData(data)
                if trim_blocks
                    && data.starts_with('\n')
                    && after_raw_tag(source, toks[i].start) =>
            {
                edits.push((toks[i].start, toks[i].start, "\n".to_string()));
            }
            Token::BlockStart => {
                let end = (i..toks.len()).find(|&j| matches!(toks[j].token, Token::BlockEnd))?;
                let tag = match toks.get(i + 1).map(|t| &t.token) {
                    Some(Token::Ident(tag)) => *tag,
                    _ => "",
                };
                match tag {
                    "for" => for_depth += 1,
                    "endfor" => for_depth = for_depth.saturating_sub(1),
                    "include" => bare_include(source, &toks[i..=end], &mut edits),
                    "import" | "from" => hidden_import(source, &toks[i..=end], &mut edits),
                    "macro" => {
                        if let Some(m) = open_macro(&toks[i..=end]) {
                            macros.push(m);
                        }
                    }
                    "endmacro" => {
                        if let Some(m) = macros.pop()
                            && (m.varargs || m.kwargs)
                        {
                            wrap_macro(source, &m, &toks[i..=end], &mut edits);
                        }
                    }
                    _ => {}
                }
                names(&toks[i..=end], for_depth, &mut macros, &mut edits);
                i = end + 1;
                continue;
            }
            Token::VariableStart => {
                let end = (i..toks.len()).find(|&j| matches!(toks[j].token, Token::VariableEnd))?;
                names(&toks[i..=end], for_depth, &mut macros, &mut edits);
                i = end + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(source.len() + edits.len() * 32);
    let mut pos = 0;
    for (start, end, text) in edits {
        if start < pos {
            return None;
        }
        out.push_str(&source[pos..start]);
        out.push_str(&text);
        pos = end;
    }
    out.push_str(&source[pos..]);
    Some(out)
}

/// Whether template data at `at` is the content of a raw block whose opening tag ends with a
/// plain block end (no whitespace control).
fn after_raw_tag(source: &str, at: usize) -> bool {
    let before = &source[..at];
    let Some(tag) = before.strip_suffix("%}") else { return false };
    if tag.ends_with(['-', '+']) {
        return false;
    }
    let Some(open) = tag.rfind("{%") else { return false };
    tag[open + 2..].trim_start_matches(['-', '+']).trim() == "raw"
}

/// The bare names of one tag: `loop` outside a for loop, and `varargs`/`kwargs` in a macro.
fn names(
    tag: &[Tok],
    for_depth: usize,
    macros: &mut [OpenMacro],
    edits: &mut Vec<(usize, usize, String)>,
) {
    for (k, t) in tag.iter().enumerate() {
        let Token::Ident(name) = t.token else { continue };
        let after_dot = k > 0 && matches!(tag[k - 1].token, Token::Dot);
        let keyword = tag.get(k + 1).is_some_and(|n| matches!(n.token, Token::Assign));
        if after_dot || keyword {
            continue;
        }
        match name {
            "loop" if for_depth == 0 && !is_tag_name(tag, k) => {
                edits.push((t.start, t.end, NO_LOOP.to_string()));
            }
            "varargs" | "kwargs" => {
                if let Some(m) = macros.last_mut() {
                    // The macro's own parameter list does not count as a use.
                    if t.start >= m.close_paren {
                        m.varargs |= name == "varargs";
                        m.kwargs |= name == "kwargs";
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_tag_name(tag: &[Tok], k: usize) -> bool {
    k == 1 && matches!(tag[0].token, Token::BlockStart)
}

/// `{% include X without context %}` as a filter block rendering `X` on its own (the block
/// keeps the tag's whitespace control, and `trim_blocks` still applies after it).
fn bare_include(source: &str, tag: &[Tok], edits: &mut Vec<(usize, usize, String)>) {
    let n = tag.len();
    let ident = |k: usize, w: &str| matches!(tag.get(k).map(|t| &t.token), Some(Token::Ident(x)) if *x == w);
    if n < 5 || !(ident(n - 3, "without") && ident(n - 2, "context")) {
        return;
    }
    let mut expr_end = n - 3;
    let ignore_missing =
        expr_end >= 4 && ident(expr_end - 2, "ignore") && ident(expr_end - 1, "missing");
    if ignore_missing {
        expr_end -= 2;
    }
    let (open, close) = (&tag[0], &tag[n - 1]);
    let Some(expr) = source.get(tag[2].start..tag[expr_end - 1].end) else { return };
    let (open_text, close_text) = (&source[open.start..open.end], &source[close.start..close.end]);
    let missing = if ignore_missing { "true" } else { "false" };
    edits.push((
        open.start,
        close.end,
        format!(
            "{open_text} filter {BARE_INCLUDE}({expr}, {missing}) %}}{{% endfilter {close_text}"
        ),
    ));
}

/// `{% import %}`/`{% from ... import %}` without `with context`, run inside a macro of its own
/// (a macro sees none of its caller's names) with the play's variables hidden; the names it
/// binds are handed out through a namespace.
fn hidden_import(source: &str, tag: &[Tok], edits: &mut Vec<(usize, usize, String)>) {
    let n = tag.len();
    let ident = |k: usize| match tag.get(k).map(|t| &t.token) {
        Some(Token::Ident(w)) => Some(*w),
        _ => None,
    };
    if n >= 4 && ident(n - 3) == Some("with") && ident(n - 2) == Some("context") {
        return;
    }
    let Some(names) = imported_names(tag) else { return };
    let (open, close) = (&tag[0], &tag[n - 1]);
    let (open_text, close_text) = (&source[open.start..open.end], &source[close.start..close.end]);
    let statement = &source[open.end..close.start];
    let mut out = format!(
        "{open_text} set __tack_ns = namespace() %}}{{% macro __tack_import(__tack_ns) %}}\
         {{% set __tack_ctx = {CONTEXT}(false) %}}{{%{statement}%}}"
    );
    for name in &names {
        out.push_str(&format!("{{% set __tack_ns.{name} = {name} %}}"));
    }
    out.push_str(&format!(
        "{{% set __tack_ctx = {CONTEXT}(true) %}}{{% endmacro %}}\
         {{% set __tack_ctx = __tack_import(__tack_ns) %}}"
    ));
    for name in &names {
        out.push_str(&format!("{{% set {name} = __tack_ns.{name} %}}"));
    }
    // The last tag closes as the original did (whitespace control, `trim_blocks`).
    if let Some(stripped) = out.strip_suffix("%}") {
        out = format!("{stripped}{close_text}");
    }
    edits.push((open.start, close.end, out));
}

/// The names an import tag binds: `import X as m` binds `m`; `from X import a, b as c` binds
/// `a` and `c`. `None` for a tag of another shape.
fn imported_names<'s>(tag: &[Tok<'s>]) -> Option<Vec<&'s str>> {
    let ident = |k: usize| match tag.get(k).map(|t| &t.token) {
        Some(Token::Ident(w)) => Some(*w),
        _ => None,
    };
    let mut end = tag.len() - 1;
    if end >= 2 && ident(end - 2) == Some("without") && ident(end - 1) == Some("context") {
        end -= 2;
    }
    match ident(1)? {
        "import" => {
            let name = ident(end - 1)?;
            (ident(end - 2)? == "as").then(|| vec![name])
        }
        "from" => {
            let start = (2..end).find(|&k| ident(k) == Some("import"))? + 1;
            let mut names = Vec::new();
            let mut k = start;
            while k < end {
                let name = ident(k)?;
                if ident(k + 1) == Some("as") {
                    names.push(ident(k + 2)?);
                    k += 3;
                } else {
                    names.push(name);
                    k += 1;
                }
                match tag.get(k).map(|t| &t.token) {
                    Some(Token::Comma) => k += 1,
                    _ if k == end => {}
                    _ => return None,
                }
            }
            Some(names)
        }
        _ => None,
    }
}

/// The name and parameters of a `{% macro name(a, b=1) %}` tag.
fn open_macro<'s>(tag: &[Tok<'s>]) -> Option<OpenMacro<'s>> {
    let Token::Ident(name) = tag.get(2)?.token else { return None };
    if !matches!(tag.get(3)?.token, Token::ParenOpen) {
        return None;
    }
    let mut depth = 0usize;
    let mut params = Vec::new();
    for k in 3..tag.len() {
        match tag[k].token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth -= 1;
                if depth == 0 {
                    return Some(OpenMacro {
                        name,
                        name_span: (tag[2].start, tag[2].end),
                        close_paren: tag[k].start,
                        params,
                        varargs: false,
                        kwargs: false,
                    });
                }
            }
            Token::Ident(p)
                if depth == 1 && matches!(tag[k - 1].token, Token::ParenOpen | Token::Comma) =>
            {
                params.push(p);
            }
            _ => {}
        }
    }
    None
}

/// Renames the macro, gives it `varargs`/`kwargs` parameters, and binds its name to a wrapper
/// that fills them, right after `{% endmacro %}` (which keeps its whitespace control).
fn wrap_macro(
    source: &str,
    m: &OpenMacro,
    endtag: &[Tok],
    edits: &mut Vec<(usize, usize, String)>,
) {
    let name = m.name;
    edits.push((m.name_span.0, m.name_span.1, format!("{WRAPPED}{name}")));
    let sep = if m.params.is_empty() { "" } else { ", " };
    edits.push((m.close_paren, m.close_paren, format!("{sep}varargs=none, kwargs=none")));
    let close = &endtag[endtag.len() - 1];
    let close_text = &source[close.start..close.end];
    let params: Vec<String> = m.params.iter().map(|p| format!("'{p}'")).collect();
    edits.push((
        close.start,
        close.end,
        format!(
            "%}}{{% set {name} = {VARARGS_MACRO}({WRAPPED}{name}, [{}], {}, {}) {close_text}",
            params.join(", "),
            m.varargs,
            m.kwargs
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn include_without_context_is_a_bare_render() {
        assert_eq!(
            rewrite("{% include 'a.j2' without context %}\n", true).as_deref(),
            Some("{% filter __tack_bare_include('a.j2', false) %}{% endfilter %}\n")
        );
        assert_eq!(rewrite("{% include 'a.j2' %}\n", true), None);
    }

    #[test]
    fn imports_hide_the_context_unless_asked() {
        assert_eq!(
            rewrite("{% import 'm.j2' as m %}", true).as_deref(),
            Some(
                "{% set __tack_ns = namespace() %}{% macro __tack_import(__tack_ns) %}\
                 {% set __tack_ctx = __tack_context(false) %}{% import 'm.j2' as m %}\
                 {% set __tack_ns.m = m %}{% set __tack_ctx = __tack_context(true) %}\
                 {% endmacro %}{% set __tack_ctx = __tack_import(__tack_ns) %}\
                 {% set m = __tack_ns.m %}"
            )
        );
        let from = rewrite("{% from 'm.j2' import a, b as c -%}", true).unwrap_or_default();
        assert!(from.ends_with("{% set a = __tack_ns.a %}{% set c = __tack_ns.c -%}"), "{from}");
        assert_eq!(rewrite("{% import 'm.j2' as m with context %}", true), None);
    }

    #[test]
    fn loop_outside_a_for_loop_is_undefined() {
        assert_eq!(
            rewrite("{{ loop.index }}{% for x in y %}{{ loop.index }}{% endfor %}", true)
                .as_deref(),
            Some("{{ __tack_no_loop.index }}{% for x in y %}{{ loop.index }}{% endfor %}")
        );
    }

    #[test]
    fn raw_keeps_its_first_newline() {
        assert_eq!(
            rewrite("{% raw %}\n{{ x }}{% endraw %}", true).as_deref(),
            Some("{% raw %}\n\n{{ x }}{% endraw %}")
        );
        assert_eq!(rewrite("{% raw %}\n{{ x }}{% endraw %}", false), None);
        assert_eq!(rewrite("{% raw -%}\n{{ x }}{% endraw %}", true), None);
    }

    #[test]
    fn macros_using_varargs_are_wrapped() {
        assert_eq!(
            rewrite("{% macro m(a) %}{{ varargs }}{% endmacro %}", true).as_deref(),
            Some(
                "{% macro __tack_va_m(a, varargs=none, kwargs=none) %}{{ varargs }}\
                 {% endmacro %}{% set m = __tack_varargs_macro(__tack_va_m, ['a'], true, false) %}"
            )
        );
    }
}
