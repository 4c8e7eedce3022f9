//! A rewrite of template source before minijinja compiles it, for two Python behaviours
//! minijinja's compiler cannot be extended to give:
//!
//! - list and dict literals (`[]`, `{}`) become tack's own containers, which Python's in-place
//!   methods can change (`{% set x = [] %}{{ x.append(1) }}`);
//! - `a % b` becomes a call that formats strings as Python's `%` does (minijinja's `%` only
//!   computes remainders);
//! - with `escape_backslashes` (ansible's default for task arguments and variables, not for
//!   conditionals or template files), string literals inside `{{ }}` keep their backslashes
//!   as written (`{{ 'a\nb' }}` is four characters), as ansible's lexer arranges so that a
//!   YAML string's escapes are processed once.
//!
//! It works on minijinja's own tokens, so strings, comments and raw blocks are never touched;
//! only tokens inside `{{ }}` and `{% %}` are. A source it cannot tokenize is left as it is
//! (minijinja then reports the syntax error itself). The result is what gets compiled and
//! cached; the user's text is still what error messages name.

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

pub(crate) const LIST: &str = "__tack_list";
pub(crate) const DICT: &str = "__tack_dict";
pub(crate) const MOD: &str = "__tack_mod";
const LIST_OPEN: &str = "__tack_list(";
const DICT_OPEN: &str = "__tack_dict(";
const MOD_OPEN: &str = "__tack_mod(";
pub(crate) const PROBE: &str = "__tack_probe";
pub(crate) const EMBEDDED: &str = "__tack_embedded";
/// What a lookup's term that is a string constant holding a template is wrapped in
/// (`engine::env`'s `embedded_term`).
pub(crate) const EMBEDDED_TERM: &str = "__tack_embedded_term";
const EMBEDDED_TERM_OPEN: &str = "__tack_embedded_term(";
/// What the pre-pass calls after an assignment to a namespace's attribute
/// (`crate::python`'s `namespace_check`).
pub(crate) const NAMESPACE_CHECK: &str = "__tack_ns_check";
/// What `{% do %}` becomes, so that minijinja reports an unknown tag.
pub(crate) const UNKNOWN_DO: &str = "__tack_unknown_do";
const PROBE_OPEN: &str = "__tack_probe(";

/// Words that end an operand: after them a `[` opens a list rather than a subscript.
const KEYWORDS: &[&str] =
    &["in", "and", "or", "not", "if", "else", "elif", "is", "for", "set", "with", "do", "return"];

/// Source worth tokenizing: a `[`, or a `{` or `%` that is not part of a delimiter.
fn may_need(s: &str) -> bool {
    let count = |p: &str| s.matches(p).count();
    let delimiters = count("{{") + count("{%") + count("{#");
    s.contains('[')
        || count("%") > count("{%") + count("%}")
        || count("{") > delimiters + count("{{")
        || ["defined", "default", "mandatory", "|d", "| d", "do"].iter().any(|w| s.contains(w))
        || CHOOSING.iter().any(|w| s.contains(w))
        || s.contains('.') && (s.contains('|') || s.contains(" is "))
        || s.contains('.') && s.contains("{%") && s.contains("set")
}

/// Words of calls and tags whose arguments may name a controller file or command: a
/// source holding one is tokenized to mark them (`chosen`).
const CHOOSING: &[&str] = &["lookup", "query", "q(", "include", "import", "extends"];
/// Calls that get a mark as their first argument.
const MARKED_CALLS: &[&str] = &["lookup", "query", "q", super::tags::BARE_INCLUDE];
/// Tags whose template name gets wrapped in a mark.
const NAME_TAGS: &[&str] = &["include", "import", "from", "extends"];
/// Words that end a tag's template name.
const NAME_ENDS: &[&str] = &["ignore", "with", "without", "as", "import"];
/// Tags whose words may bind names of the template's own.
const BINDING_TAGS: &[&str] = &["set", "for", "macro", "call", "with", "import", "from"];
/// Names Jinja2 binds by itself inside a template.
const IMPLICIT_NAMES: &[&str] = &["loop", "caller", "varargs", "kwargs", "self", "super"];
const MARK_OWN: &str = "__tack_mark(true)";
const MARK_OWN_ARGS: &str = "__tack_mark(true), ";
const MARK: &str = "__tack_mark(false)";
const MARK_ARGS: &str = "__tack_mark(false), ";
const NAMED_OWN: &str = "__tack_named(__tack_mark(true), ";
const NAMED: &str = "__tack_named(__tack_mark(false), ";

struct Tok<'s> {
    kind: Kind,
    start: usize,
    end: usize,
    text: &'s str,
}

#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Open(char),
    Close(char),
    Operand,
    Keyword,
    Dot,
    Pipe,
    Mod,
    Pow,
    Minus,
    Other,
    BlockEdge,
}

/// How a source is rewritten besides the Python behaviours every template gets.
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    /// A task argument or variable: string literals in `{{ }}` keep their backslashes.
    Template,
    /// A conditional's expression: literals process escapes, and a literal that is itself a
    /// template is rendered first (ansible's deprecated embedded templates).
    Expression,
    /// A template file: literals process escapes.
    File,
}

/// The rewritten source, or `None` when nothing needs rewriting.
pub(crate) fn rewrite(source: &str, mode: Mode) -> Option<String> {
    let escape_backslashes = matches!(mode, Mode::Template);
    let embedded = matches!(mode, Mode::Expression);
    let nested_template = |s: &str| s.contains("{{") || s.contains("{%") || s.contains("{#");
    if !(may_need(source)
        || escape_backslashes && source.contains('\\')
        || embedded && nested_template(source))
    {
        return None;
    }
    let mut in_variable = false;
    let mut literals: Vec<(usize, usize, String)> = Vec::new();
    let mut toks = Vec::new();
    let mut in_block = false;
    for item in tokenize(source, false, SyntaxConfig::default()) {
        let Ok((token, span)) = item else { return None };
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        // minijinja always knows `{% do %}`; ansible's Jinja2 has no such tag, so it must fail
        // there as an unknown tag.
        if matches!(token, Token::Ident("do"))
            && toks.last().is_some_and(|t: &Tok| {
                t.kind == Kind::BlockEdge
                    && source.get(t.start..t.end).is_some_and(|d| d.starts_with("{%"))
            })
        {
            literals.push((start, end, UNKNOWN_DO.to_string()));
        }
        if escape_backslashes
            && in_variable
            && matches!(token, Token::Str(_) | Token::String(_))
            && let Some(raw) = source.get(start..end)
            && raw.contains('\\')
        {
            literals.push((start, end, raw_literal(raw)));
        }
        if embedded
            && let Token::Str(value) = &token
            && nested_template(value)
            && let Some(raw) = source.get(start..end)
        {
            literals.push((start, end, format!("{EMBEDDED}({raw})")));
        }
        if embedded
            && let Token::String(value) = &token
            && nested_template(value)
            && let Some(raw) = source.get(start..end)
        {
            literals.push((start, end, format!("{EMBEDDED}({raw})")));
        }
        let kind = match token {
            Token::VariableStart | Token::BlockStart => {
                in_variable = matches!(token, Token::VariableStart);
                in_block = true;
                Kind::BlockEdge
            }
            Token::VariableEnd | Token::BlockEnd => {
                in_variable = false;
                in_block = false;
                Kind::BlockEdge
            }
            _ if !in_block => continue,
            Token::BracketOpen => Kind::Open('['),
            Token::BraceOpen => Kind::Open('{'),
            Token::ParenOpen => Kind::Open('('),
            Token::BracketClose => Kind::Close(']'),
            Token::BraceClose => Kind::Close('}'),
            Token::ParenClose => Kind::Close(')'),
            Token::Ident(name) if KEYWORDS.contains(&name) => Kind::Keyword,
            Token::Ident(_)
            | Token::Str(_)
            | Token::String(_)
            | Token::Int(_)
            | Token::Int128(_)
            | Token::Float(_) => Kind::Operand,
            Token::Dot => Kind::Dot,
            Token::Pipe => Kind::Pipe,
            Token::Mod => Kind::Mod,
            Token::Pow => Kind::Pow,
            Token::Minus => Kind::Minus,
            _ => Kind::Other,
        };
        toks.push(Tok { kind, start, end, text: source.get(start..end).unwrap_or_default() });
    }
    let mut inserts: Vec<(usize, u8, &str)> = Vec::new();
    let mut removed = Vec::new();
    for (start, end, text) in &literals {
        inserts.push((*start, 2, text.as_str()));
        removed.push((*start, *end));
    }
    let partner = matching(&toks)?;
    let checks = namespace_checks(&toks);
    for (at, text) in &checks {
        inserts.push((*at, 0, text.as_str()));
    }
    for (i, tok) in toks.iter().enumerate() {
        match tok.kind {
            Kind::Open('[') => {
                let subscript = i > 0 && matches!(toks[i - 1].kind, Kind::Operand | Kind::Close(_));
                if !subscript {
                    let close = &toks[partner[i]?];
                    inserts.push((tok.start, 1, LIST_OPEN));
                    inserts.push((close.end, 0, ")"));
                }
            }
            Kind::Open('{') => {
                let close = &toks[partner[i]?];
                inserts.push((tok.start, 1, DICT_OPEN));
                inserts.push((close.end, 0, ")"));
            }
            Kind::Keyword | Kind::Pipe if guards_undefined(&toks, i) => {
                if let Some(root) = chain_start(&toks, &partner, i) {
                    probe(&toks, &partner, root, i, &mut inserts, &mut removed);
                }
            }
            Kind::Mod => {
                let left = operand_start(&toks, &partner, i)?;
                let right = operand_end(&toks, &partner, i + 1)?;
                inserts.push((toks[left].start, 2, MOD_OPEN));
                inserts.push((tok.start, 3, ","));
                removed.push((tok.start, tok.end));
                inserts.push((toks[right].end, 0, ")"));
            }
            _ => {}
        }
    }
    mark_choices(&toks, &partner, &mut inserts);
    if !embedded {
        embedded_terms(&toks, &partner, &mut inserts);
    }
    let qualified = qualified_plugins(&toks, &partner);
    for call in &qualified {
        removed.push((call.start, call.end));
        inserts.push((call.start, 2, call.dispatcher));
        match call.open_paren {
            // The name goes before anything that opens the first argument there (a list
            // literal's `__tack_list(`, a `%`'s `__tack_mod(`).
            Some(after) => {
                inserts.push((after, 0, &call.quoted));
                if !call.empty_call {
                    inserts.push((after, 0, ", "));
                }
            }
            None => {
                inserts.push((call.end, 2, "("));
                inserts.push((call.end, 3, &call.quoted));
                match call.bare_argument_end {
                    // A test's one argument written without parentheses joins the call.
                    Some(end) => {
                        inserts.push((call.end, 4, ","));
                        inserts.push((end, 0, ")"));
                    }
                    None => inserts.push((call.end, 4, ")")),
                }
            }
        }
    }
    if inserts.is_empty() {
        return None;
    }
    Some(apply(source, inserts, &removed))
}

/// After each `{% set ns.attr = ... %}`, a statement of its own that checks the namespace did
/// not come to hold itself (`crate::python`'s `namespace_check`): where it goes and its text,
/// which closes as the assignment's tag does, so whitespace control is unchanged.
fn namespace_checks(toks: &[Tok]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, w) in toks.windows(6).enumerate() {
        let assigns_attribute = w[0].kind == Kind::BlockEdge
            && w[0].text.starts_with("{%")
            && w[1].kind == Kind::Keyword
            && w[1].text == "set"
            && w[2].kind == Kind::Operand
            && w[3].kind == Kind::Dot
            && w[4].kind == Kind::Operand
            && w[5].text == "=";
        if !assigns_attribute {
            continue;
        }
        let Some(close) = toks[i + 6..].iter().find(|t| t.kind == Kind::BlockEdge) else {
            continue;
        };
        let check = NAMESPACE_CHECK;
        out.push((
            close.end,
            format!(
                "{{% set {check}_done = {check}({}, '{}') {}",
                w[2].text, w[4].text, close.text
            ),
        ));
    }
    out
}

/// What a collection's filter or test is called through: minijinja knows filters and tests
/// only by the names registered before any template compiles, and a collection's plugins are
/// known only once its Python code is asked (`crate::python_plugins`).
pub(crate) const QUALIFIED_FILTER: &str = "__tack_qualified_filter";
pub(crate) const QUALIFIED_TEST: &str = "__tack_qualified_test";

/// A filter or test written by a collection's fully qualified name (`x | ns.col.f(1)`,
/// `x is ns.col.t`), to be called through [`QUALIFIED_FILTER`] or [`QUALIFIED_TEST`] with
/// the name as its first argument.
struct QualifiedCall {
    start: usize,
    end: usize,
    dispatcher: &'static str,
    quoted: String,
    /// Where the call's own arguments start, when it has parentheses.
    open_paren: Option<usize>,
    empty_call: bool,
    /// Where a test's one argument written without parentheses (`x is ns.col.t "a"`) ends.
    bare_argument_end: Option<usize>,
}

fn qualified_plugins(toks: &[Tok], partner: &[Option<usize>]) -> Vec<QualifiedCall> {
    let mut out = Vec::new();
    for (i, tok) in toks.iter().enumerate() {
        let (first, dispatcher) = match tok.kind {
            Kind::Pipe => (i + 1, QUALIFIED_FILTER),
            Kind::Keyword if tok.text == "is" => {
                let not =
                    toks.get(i + 1).is_some_and(|t| t.kind == Kind::Keyword && t.text == "not");
                (if not { i + 2 } else { i + 1 }, QUALIFIED_TEST)
            }
            _ => continue,
        };
        let mut parts = Vec::new();
        let mut j = first;
        // The chain's last name; a chain that ends on a dot is left to minijinja's syntax
        // error.
        let mut last_at = None;
        while let Some(t) = toks.get(j).filter(|t| t.kind == Kind::Operand) {
            parts.push(t.text);
            last_at = Some(j);
            if toks.get(j + 1).is_some_and(|t| t.kind == Kind::Dot) {
                j += 2;
            } else {
                break;
            }
        }
        let Some(j) = last_at.filter(|at| *at == j) else { continue };
        let core =
            parts.len() >= 2 && parts[0] == "ansible" && matches!(parts[1], "builtin" | "legacy");
        let identifiers = parts.iter().all(|p| {
            p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if parts.len() < 3 || core || !identifiers {
            continue;
        }
        if parts[0] == "ansible" && parts[1] == "_protomatter" {
            // Its filters and tests read data tags: from now on, strings are tagged as read.
            crate::vars::str_tags::want();
        }
        let last = &toks[j];
        let paren = toks.get(j + 1).filter(|t| t.kind == Kind::Open('('));
        let bare_argument_end = (dispatcher == QUALIFIED_TEST && paren.is_none())
            .then(|| bare_argument_end(toks, partner, j + 1))
            .flatten()
            .map(|end| toks[end].end);
        out.push(QualifiedCall {
            start: toks[first].start,
            end: last.end,
            dispatcher,
            quoted: format!("'{}'", parts.join(".")),
            open_paren: paren.map(|p| p.end),
            empty_call: toks.get(j + 2).is_some_and(|t| t.kind == Kind::Close(')')),
            bare_argument_end,
        });
    }
    out
}

/// The last token of a test's argument written without parentheses starting at `from`, as
/// Jinja reads one: a unary operand (a name that is not `and`, `or`, `else` or `is`, a
/// literal, a list or dict) with its attribute lookups, subscripts and calls; `None` when
/// nothing there starts one.
fn bare_argument_end(toks: &[Tok], partner: &[Option<usize>], from: usize) -> Option<usize> {
    let mut i = from;
    while toks.get(i)?.kind == Kind::Minus {
        i += 1;
    }
    let first = toks.get(i)?;
    let mut end = match first.kind {
        Kind::Open('[' | '{') => partner[i]?,
        Kind::Operand if !matches!(first.text, "and" | "or" | "else" | "is") => i,
        _ => return None,
    };
    loop {
        match toks.get(end + 1).map(|t| t.kind) {
            Some(Kind::Dot) if toks.get(end + 2).is_some_and(|t| t.kind == Kind::Operand) => {
                end += 2;
            }
            Some(Kind::Open('[' | '(')) => end = partner[end + 1]?,
            _ => return Some(end),
        }
    }
}

/// Puts a mark first in every lookup call and around every tag's template name, saying
/// whether what they read may include names the template bound itself (see `chosen`).
fn mark_choices(toks: &[Tok], partner: &[Option<usize>], inserts: &mut Vec<(usize, u8, &str)>) {
    let word = |j: usize| toks.get(j).map(|t| t.text).unwrap_or_default();
    let mut own: Vec<&str> = IMPLICIT_NAMES.to_vec();
    for (k, tok) in toks.iter().enumerate() {
        if tok.kind == Kind::BlockEdge
            && tok.text.starts_with("{%")
            && BINDING_TAGS.contains(&word(k + 1))
        {
            let end = toks[k + 1..].iter().position(|t| t.kind == Kind::BlockEdge);
            let names = toks[k + 1..end.map_or(toks.len(), |e| k + 1 + e)].iter();
            own.extend(names.filter(|t| t.kind == Kind::Operand).map(|t| t.text));
        }
    }
    // Whether tokens `from..to` read a name the template bound itself.
    let reads_own = |from: usize, to: usize| {
        (from..to).any(|j| {
            let t = &toks[j];
            let name = t.kind == Kind::Operand
                && t.text.starts_with(|c: char| c.is_alphabetic() || c == '_');
            let before = if j > 0 { toks[j - 1].text } else { "" };
            let attribute_or_filter = j > 0 && matches!(toks[j - 1].kind, Kind::Dot | Kind::Pipe);
            let test = before == "is" || before == "not" && j > 1 && toks[j - 2].text == "is";
            name && !attribute_or_filter && !test && word(j + 1) != "=" && own.contains(&t.text)
        })
    };
    for (i, tok) in toks.iter().enumerate() {
        if is_call(toks, i, MARKED_CALLS)
            && let Some(close) = partner[i + 1]
        {
            let own_names = reads_own(i + 2, close);
            let empty = close == i + 2;
            let text = match (own_names, empty) {
                (true, true) => MARK_OWN,
                (true, false) => MARK_OWN_ARGS,
                (false, true) => MARK,
                (false, false) => MARK_ARGS,
            };
            inserts.push((toks[i + 1].end, 0, text));
        }
        let named = tok.kind == Kind::BlockEdge
            && tok.text.starts_with("{%")
            && NAME_TAGS.contains(&word(i + 1));
        if named {
            let start = i + 2;
            let mut end = start;
            while let Some(t) = toks.get(end) {
                if t.kind == Kind::BlockEdge || (end > start && NAME_ENDS.contains(&t.text)) {
                    break;
                }
                end = match (t.kind, partner[end]) {
                    (Kind::Open(_), Some(close)) => close + 1,
                    _ => end + 1,
                };
            }
            if end > start {
                let text = if reads_own(start, end) { NAMED_OWN } else { NAMED };
                inserts.push((toks[start].start, 0, text));
                inserts.push((toks[end - 1].end, 0, ")"));
            }
        }
    }
}

/// Whether token `i` starts a use that must see a missing attribute chain as undefined rather
/// than fail: `is defined`, `is undefined`, `is not defined`, `| default`, `| d`,
/// `| mandatory`.
fn guards_undefined(toks: &[Tok], i: usize) -> bool {
    let word = |j: usize| toks.get(j).map(|t| t.text).unwrap_or_default();
    match toks[i].kind {
        Kind::Keyword if word(i) == "is" => {
            let test = if word(i + 1) == "not" { word(i + 2) } else { word(i + 1) };
            matches!(test, "defined" | "undefined")
        }
        Kind::Pipe => matches!(word(i + 1), "default" | "d" | "mandatory"),
        _ => false,
    }
}

/// The root name of the attribute chain (`a.b["c"][0]`, at least one step) that ends just
/// before token `end`, if that is what precedes it.
fn chain_start(toks: &[Tok], partner: &[Option<usize>], end: usize) -> Option<usize> {
    let mut i = end.checked_sub(1)?;
    let mut steps = 0;
    loop {
        match toks[i].kind {
            Kind::Close(']') => {
                i = partner[i]?.checked_sub(1)?;
                steps += 1;
            }
            Kind::Operand if i >= 1 && toks[i - 1].kind == Kind::Dot => {
                i = i.checked_sub(2)?;
                steps += 1;
            }
            Kind::Operand => {
                let is_name = toks[i].text.starts_with(|c: char| c.is_alphabetic() || c == '_');
                let rooted = i == 0 || !matches!(toks[i - 1].kind, Kind::Pipe | Kind::Dot);
                return (steps > 0 && is_name && rooted).then_some(i);
            }
            _ => return None,
        }
    }
}

/// Whether token `i` calls one of `names` as a function (not an attribute or a filter).
fn is_call(toks: &[Tok], i: usize, names: &[&str]) -> bool {
    toks[i].kind == Kind::Operand
        && names.contains(&toks[i].text)
        && !(i > 0 && matches!(toks[i - 1].kind, Kind::Dot | Kind::Pipe))
        && toks.get(i + 1).is_some_and(|t| t.kind == Kind::Open('('))
}

/// ansible renders a string constant holding a template where it is a lookup's term (one of
/// the positional arguments after the plugin's name, or inside a list or dict literal that
/// is one), with its deprecation warning: each such constant is wrapped in
/// [`EMBEDDED_TERM`]. Keyword arguments and constants inside other expressions stay text.
fn embedded_terms(toks: &[Tok], partner: &[Option<usize>], inserts: &mut Vec<(usize, u8, &str)>) {
    let holds_template = |t: &Tok| {
        t.kind == Kind::Operand
            && t.text.starts_with(['\'', '"'])
            && (t.text.contains("{{") || t.text.contains("{%") || t.text.contains("{#"))
    };
    for i in 0..toks.len() {
        let called = is_call(toks, i, &["lookup", "query", "q"]);
        let Some(close) = called.then(|| partner[i + 1]).flatten() else { continue };
        // The arguments, split at the commas of the call's own level.
        let mut args: Vec<(usize, usize)> = Vec::new();
        let mut start = i + 2;
        let mut j = start;
        while j < close {
            match (toks[j].kind, partner[j]) {
                (Kind::Open(_), Some(end)) => j = end + 1,
                (Kind::Other, _) if toks[j].text == "," => {
                    args.push((start, j));
                    start = j + 1;
                    j += 1;
                }
                _ => j += 1,
            }
        }
        args.push((start, close));
        for &(from, to) in args.iter().skip(1) {
            let keyword = toks.get(from + 1).is_some_and(|t| t.text == "=");
            if keyword || from >= to {
                continue;
            }
            let whole_constant = to == from + 1 && holds_template(&toks[from]);
            let literal = matches!(toks[from].kind, Kind::Open('[' | '{' | '('))
                && partner[from] == Some(to - 1);
            let mut wrap = |t: &Tok| {
                inserts.push((t.start, 0, EMBEDDED_TERM_OPEN));
                inserts.push((t.end, 0, ")"));
            };
            if whole_constant {
                wrap(&toks[from]);
            } else if literal {
                // Constants inside the literal (and literals nested in it), not inside a
                // call or subscript there.
                let mut k = from + 1;
                while k < to - 1 {
                    let t = &toks[k];
                    let nested_literal = matches!(t.kind, Kind::Open('[' | '{' | '('))
                        && !(k > 0 && matches!(toks[k - 1].kind, Kind::Operand | Kind::Close(_)));
                    match (t.kind, partner[k]) {
                        (Kind::Open(_), Some(end)) if !nested_literal => k = end + 1,
                        _ => {
                            if holds_template(t) {
                                wrap(t);
                            }
                            k += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Rewrites the chain from `root` to just before `end` as `__tack_probe(root, 'b', "c", 0)`,
/// which gives undefined for a missing step instead of failing on it.
fn probe(
    toks: &[Tok],
    partner: &[Option<usize>],
    root: usize,
    end: usize,
    inserts: &mut Vec<(usize, u8, &str)>,
    removed: &mut Vec<(usize, usize)>,
) {
    inserts.push((toks[root].start, 2, PROBE_OPEN));
    let mut i = root + 1;
    while i < end {
        match toks[i].kind {
            // `x.1` is Jinja's `x[1]`: an integer step stays an integer.
            Kind::Dot
                if toks.get(i + 1).is_some_and(|t| {
                    !t.text.is_empty() && t.text.bytes().all(|b| b.is_ascii_digit())
                }) =>
            {
                removed.push((toks[i].start, toks[i].end));
                inserts.push((toks[i].start, 3, ", "));
                i += 2;
            }
            Kind::Dot => {
                removed.push((toks[i].start, toks[i].end));
                inserts.push((toks[i].start, 3, ", '"));
                inserts.push((toks[i + 1].end, 0, "'"));
                i += 2;
            }
            Kind::Open('[') => {
                let Some(close) = partner[i] else { return };
                removed.push((toks[i].start, toks[i].end));
                inserts.push((toks[i].start, 3, ", ("));
                removed.push((toks[close].start, toks[close].end));
                inserts.push((toks[close].start, 3, ")"));
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    inserts.push((toks[end - 1].end, 0, ")"));
}

/// A string literal as written (`'a\nb'`) turned into one whose value is its text as written:
/// backslashes doubled, and the quote escaped where the text has it.
fn raw_literal(written: &str) -> String {
    let quote = written.chars().next().unwrap_or('\'');
    let inner = &written[1..written.len().saturating_sub(1).max(1)];
    let mut out = String::with_capacity(written.len() + 8);
    out.push(quote);
    for c in inner.chars() {
        if c == '\\' || c == quote {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(quote);
    out
}

/// For every bracket token, the index of its partner.
fn matching(toks: &[Tok]) -> Option<Vec<Option<usize>>> {
    let mut partner = vec![None; toks.len()];
    let mut stack = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Open(_) => stack.push(i),
            Kind::Close(_) => {
                let open = stack.pop()?;
                partner[open] = Some(i);
                partner[i] = Some(open);
            }
            Kind::BlockEdge => stack.clear(),
            _ => {}
        }
    }
    Some(partner)
}

/// The first token of the operand that ends just before token `op` (Jinja2's postfix
/// expression: a primary followed by attributes, subscripts, calls and filters).
fn operand_start(toks: &[Tok], partner: &[Option<usize>], op: usize) -> Option<usize> {
    let mut i = op.checked_sub(1)?;
    loop {
        let start = match toks[i].kind {
            Kind::Close(_) => partner[i]?,
            Kind::Operand => i,
            _ => return None,
        };
        // What precedes the primary or group decides whether the operand goes on.
        match start.checked_sub(1).map(|p| toks[p].kind) {
            Some(Kind::Dot | Kind::Pipe) => i = start.checked_sub(2)?,
            Some(Kind::Operand | Kind::Close(_)) if matches!(toks[start].kind, Kind::Open(_)) => {
                i = start - 1;
            }
            // A unary minus belongs to the operand (`-7 % 3` is `(-7) % 3`).
            Some(Kind::Minus)
                if start < 2 || !matches!(toks[start - 2].kind, Kind::Operand | Kind::Close(_)) =>
            {
                return Some(start - 1);
            }
            _ => return Some(start),
        }
    }
}

/// The last token of the operand that starts at token `from` (a power expression: unary
/// minus, a primary, its postfix chain, and `**` operands).
fn operand_end(toks: &[Tok], partner: &[Option<usize>], from: usize) -> Option<usize> {
    let mut i = from;
    while toks.get(i)?.kind == Kind::Minus {
        i += 1;
    }
    let mut end = match toks.get(i)?.kind {
        Kind::Open(_) => partner[i]?,
        Kind::Operand => i,
        _ => return None,
    };
    loop {
        match toks.get(end + 1).map(|t| t.kind) {
            Some(Kind::Dot | Kind::Pipe) => {
                let name = end + 2;
                if toks.get(name)?.kind != Kind::Operand {
                    return Some(end);
                }
                end = name;
            }
            Some(Kind::Open('[' | '(')) => end = partner[end + 1]?,
            Some(Kind::Pow) => end = operand_end(toks, partner, end + 2)?,
            _ => return Some(end),
        }
    }
}

/// Applies insertions (position, order among insertions at that position, text) and removes
/// the given byte ranges.
fn apply(source: &str, mut inserts: Vec<(usize, u8, &str)>, removed: &[(usize, usize)]) -> String {
    inserts.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out = String::with_capacity(source.len() + inserts.len() * 12);
    let mut pos = 0;
    let mut next = inserts.into_iter().peekable();
    loop {
        while let Some((_, _, text)) = next.next_if(|(p, _, _)| *p <= pos) {
            out.push_str(text);
        }
        if pos >= source.len() {
            break;
        }
        if let Some((_, end)) = removed.iter().find(|(s, _)| *s == pos) {
            pos = *end;
            continue;
        }
        let ch = source[pos..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&source[pos..pos + ch]);
        pos += ch;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite_default(source: &str) -> Option<String> {
        rewrite(source, Mode::File)
    }

    #[test]
    fn backslashes_stay_as_written_in_expressions() {
        assert_eq!(rewrite(r"{{ 'a\nb' }}", Mode::Template).as_deref(), Some(r"{{ 'a\\nb' }}"));
        assert_eq!(
            rewrite(r#"{{ "a\"b" }}"#, Mode::Template).as_deref(),
            Some(r#"{{ "a\\\"b" }}"#)
        );
        assert_eq!(rewrite(r"{% set y = 'a\nb' %}", Mode::Template), None);
        assert_eq!(rewrite(r"{{ 'a\nb' }}", Mode::File), None);
    }

    #[test]
    fn literals_become_mutable_containers() {
        assert_eq!(
            rewrite_default("{% set x = [] %}{{ x.append(1) }}").as_deref(),
            Some("{% set x = __tack_list([]) %}{{ x.append(1) }}")
        );
        assert_eq!(rewrite_default("{{ a[0] }}"), None);
        assert_eq!(
            rewrite_default("{{ 1 in [1] }}").as_deref(),
            Some("{{ 1 in __tack_list([1]) }}")
        );
        assert_eq!(
            rewrite_default("{{ {'a': [1]} }}").as_deref(),
            Some("{{ __tack_dict({'a': __tack_list([1])}) }}")
        );
    }

    #[test]
    fn guarded_chains_become_probes() {
        assert_eq!(
            rewrite_default("{{ x.y['k'] is defined }}").as_deref(),
            Some("{{ __tack_probe(x, 'y', ('k')) is defined }}")
        );
        assert_eq!(
            rewrite_default("{{ a.b | default(1) }}").as_deref(),
            Some("{{ __tack_probe(a, 'b') | default(1) }}")
        );
        // Jinja reads `x.1` as `x[1]`.
        assert_eq!(
            rewrite_default("{{ item.1.mp | default('d') }}").as_deref(),
            Some("{{ __tack_probe(item, 1, 'mp') | default('d') }}")
        );
        assert_eq!(rewrite_default("{{ a | default(1) }}"), None);
    }

    #[test]
    fn templates_in_lookup_terms_are_embedded() {
        let out = rewrite("{{ lookup('file', '{{ f }}', errors='{{ e }}') }}", Mode::Template);
        assert_eq!(
            out.as_deref(),
            Some(
                "{{ lookup(__tack_mark(false), 'file', __tack_embedded_term('{{ f }}'), \
                 errors='{{ e }}') }}"
            )
        );
        let out =
            rewrite("{{ query('x', ['{{ a }}', b('{{ c }}')], '{{ d }}' ~ e) }}", Mode::Template);
        assert_eq!(
            out.as_deref(),
            Some(
                "{{ query(__tack_mark(false), 'x', __tack_list([__tack_embedded_term('{{ a }}'), \
                 b('{{ c }}')]), '{{ d }}' ~ e) }}"
            )
        );
    }

    #[test]
    fn a_qualified_filter_takes_a_literal_first_argument() {
        assert_eq!(
            rewrite("{{ [1] | ns.col.f([4], '%s' % x) }}", Mode::Template).as_deref(),
            Some(
                "{{ __tack_list([1]) | __tack_qualified_filter('ns.col.f', __tack_list([4]), \
                 __tack_mod('%s' , x)) }}"
            )
        );
        assert_eq!(
            rewrite("{{ x | ns.col.f('%s' % y) }}", Mode::Template).as_deref(),
            Some("{{ x | __tack_qualified_filter('ns.col.f', __tack_mod('%s' , y)) }}")
        );
        assert_eq!(rewrite_default("{{ a.b | upper }}"), None);
    }

    #[test]
    fn assignments_to_a_namespace_are_checked() {
        assert_eq!(
            rewrite_default("{% set ns.n = ns %}x").as_deref(),
            Some("{% set ns.n = ns %}{% set __tack_ns_check_done = __tack_ns_check(ns, 'n') %}x")
        );
        assert_eq!(
            rewrite_default("{%- set ns.n = 1 -%}").as_deref(),
            Some("{%- set ns.n = 1 -%}{% set __tack_ns_check_done = __tack_ns_check(ns, 'n') -%}")
        );
        assert_eq!(rewrite_default("{% set n = ns.n %}"), None);
    }

    #[test]
    fn a_qualified_tests_bare_argument_joins_its_call() {
        let rewritten = |source| rewrite(source, Mode::Template);
        assert_eq!(
            rewritten("{{ x is ns.col.t 'a' }}").as_deref(),
            Some("{{ x is __tack_qualified_test('ns.col.t', 'a') }}")
        );
        assert_eq!(
            rewritten("{{ x is not ns.col.t y.z[0] and w }}").as_deref(),
            Some("{{ x is not __tack_qualified_test('ns.col.t', y.z[0]) and w }}")
        );
        assert_eq!(
            rewritten("{{ x is ns.col.t and w }}").as_deref(),
            Some("{{ x is __tack_qualified_test('ns.col.t') and w }}")
        );
    }

    #[test]
    fn a_qualified_chain_ending_on_a_dot_is_left_alone() {
        // Found by the fuzz run of seed 11: the chain's end was read past the tokens.
        assert_eq!(rewrite_default("{{ x | ns.col.f. }}"), None);
        assert_eq!(rewrite_default("{% set n = x | a.b. %}"), None);
        assert_eq!(rewrite_default("{{ x | a.b."), None);
    }

    #[test]
    fn percent_becomes_a_call() {
        assert_eq!(
            rewrite_default("{{ '%s-%d' % (a, b) }}").as_deref(),
            Some("{{ __tack_mod('%s-%d' , (a, b)) }}")
        );
        assert_eq!(
            rewrite_default("{{ x.y | int % 3 + 1 }}").as_deref(),
            Some("{{ __tack_mod(x.y | int , 3) + 1 }}")
        );
        assert_eq!(rewrite_default("text with % signs {{ a }} 100%"), None);
        assert_eq!(rewrite_default("{{ '[{}]' }}"), None);
    }
}
