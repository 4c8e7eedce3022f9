//! A call that names one keyword argument twice (`f(a=1, a=2)`). Jinja2 compiles a template
//! to Python, and Python refuses such a call when it compiles the generated code: the whole
//! template fails, a branch that never runs included, with Python's words and the line of
//! the generated code. minijinja would keep the last value. This module finds the first such
//! call in a template's tokens and words the failure as ansible shows it. A leaf: it reads
//! tokens and nothing of the engine.
//!
//! The line is the generated code's, counted as Jinja2 lays its `root` function out: nine
//! lines of preamble, one per variable the template reads (`l_0_x = resolve('x')`) or sets
//! (`l_0_x = missing`), six per filter and per test it uses (the lookup with its fallback),
//! then `pass`, then the body: one line per run of text and per `{{ }}`, three per `set`,
//! two per `if`, `elif` and `else` (the test and a `pass`), three per `for` and one per
//! `endfor`. An expression (a conditional) is compiled as an assignment: its line follows
//! the preamble, the variables, the filters and tests, the assignment's `missing` and
//! `pass`. Other tags (`macro`, `with`, ...), and variables read only inside a loop, lay
//! out lines this module does not count.

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

/// How the source was compiled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A template string (`{{ x }}` text).
    Template,
    /// A conditional's expression, given as `{{ expr }}`.
    Expression,
}

/// Jinja2's words that are never variables.
pub(super) const CONSTANTS: &[&str] = &[
    "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None",
];

struct Frame<'a> {
    /// A call's parentheses (not a group's, a list's or a dict's).
    call: bool,
    keywords: Vec<&'a str>,
}

/// `keyword argument repeated: NAME (<template>, line N)` for the first call in `source`
/// that names a keyword argument twice; `None` when there is none (or the source cannot be
/// tokenized: the compiler reports that).
pub(crate) fn repeated(source: &str, shape: Shape, syntax: SyntaxConfig) -> Option<String> {
    let mut tokens = Vec::new();
    for item in tokenize(source, false, syntax) {
        tokens.push(item.ok()?.0);
    }
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut variables: Vec<&str> = Vec::new();
    let mut plugins: Vec<(bool, String)> = Vec::new();
    // Lines of the body so far, and the line of the statement or output being read.
    let mut body = 0usize;
    let mut line_here = 0usize;
    let mut in_text = false;
    // Names a `for` binds, until its `in`: not variables the root reads.
    let mut binding = false;
    let mut bound: Vec<&str> = Vec::new();
    let mut found: Option<(&str, usize)> = None;
    let mut i = 0;
    while i < tokens.len() {
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        match &tokens[i] {
            Token::TemplateData(text) if !text.is_empty() && !in_text => {
                body += 1;
                in_text = true;
            }
            Token::VariableStart => {
                body += 1;
                line_here = body;
                in_text = false;
                frames.clear();
            }
            Token::BlockStart => {
                in_text = false;
                frames.clear();
                let tag = match tokens.get(i + 1) {
                    Some(Token::Ident(tag)) => *tag,
                    _ => "",
                };
                line_here = body + 1;
                body += match tag {
                    "set" => 3,
                    "if" | "elif" | "else" => 2,
                    "for" => 3,
                    "endfor" => 1,
                    _ => 0,
                };
                if tag == "set" {
                    let mut j = i + 2;
                    while let Some(Token::Ident(name)) = tokens.get(j) {
                        if !variables.contains(name) {
                            variables.push(name);
                        }
                        j += 1;
                        if !matches!(tokens.get(j), Some(Token::Comma)) {
                            break;
                        }
                        j += 1;
                    }
                    i = j;
                    continue;
                }
                binding = tag == "for";
                i += 2;
                continue;
            }
            Token::ParenOpen => {
                let call = matches!(
                    prev,
                    Some(Token::Ident(word)) if !CONSTANTS.contains(word)
                ) || matches!(
                    prev,
                    Some(
                        Token::ParenClose | Token::BracketClose | Token::Str(_) | Token::String(_)
                    )
                );
                // A macro's parameters are not a call's arguments.
                let defines = i >= 2 && matches!(&tokens[i - 2], Token::Ident("macro"));
                frames.push(Frame { call: call && !defines, keywords: Vec::new() });
            }
            Token::BracketOpen | Token::BraceOpen => {
                frames.push(Frame { call: false, keywords: Vec::new() })
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                frames.pop();
            }
            Token::Pipe => {
                let (name, next) = dotted(&tokens, i + 1);
                if !name.is_empty() && !plugins.contains(&(false, name.clone())) {
                    plugins.push((false, name));
                }
                i = next;
                continue;
            }
            Token::Ident("is") => {
                let start = match tokens.get(i + 1) {
                    Some(Token::Ident("not")) => i + 2,
                    _ => i + 1,
                };
                let (name, next) = dotted(&tokens, start);
                if !name.is_empty() && !plugins.contains(&(true, name.clone())) {
                    plugins.push((true, name));
                }
                i = next;
                continue;
            }
            Token::Ident("in") if binding => binding = false,
            Token::Ident(name) if binding => bound.push(name),
            Token::Ident(word) => {
                let keyword = matches!(tokens.get(i + 1), Some(Token::Assign))
                    && matches!(prev, Some(Token::ParenOpen | Token::Comma));
                match frames.last_mut() {
                    Some(frame) if keyword && frame.call => {
                        if frame.keywords.contains(word) {
                            found.get_or_insert((word, line_here));
                        }
                        frame.keywords.push(word);
                    }
                    _ if keyword => {}
                    _ => {
                        let attribute = matches!(prev, Some(Token::Dot));
                        let read = !attribute && !CONSTANTS.contains(word) && !bound.contains(word);
                        if read && !variables.contains(word) {
                            variables.push(word);
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let (name, at) = found?;
    let layout = 9 + variables.len() + 6 * plugins.len();
    let line = match shape {
        // `l_0_result = missing`, `pass`, then the assignment.
        Shape::Expression => layout + 3,
        // `pass`, then the body up to the line holding the call.
        Shape::Template => layout + 1 + at,
    };
    Some(format!("keyword argument repeated: {name} (<template>, line {line})"))
}

/// A plugin's name starting at `start` (`int`, `ansible.builtin.int`), and the index after it.
pub(super) fn dotted(tokens: &[Token<'_>], start: usize) -> (String, usize) {
    let mut name = String::new();
    let mut i = start;
    while let Some(Token::Ident(part)) = tokens.get(i) {
        name.push_str(part);
        i += 1;
        if matches!(tokens.get(i), Some(Token::Dot))
            && matches!(tokens.get(i + 1), Some(Token::Ident(_)))
        {
            name.push('.');
            i += 1;
        } else {
            break;
        }
    }
    (name, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(source: &str, shape: Shape) -> Option<String> {
        repeated(source, shape, SyntaxConfig::default())
    }

    /// The lines ansible-core 2.21.5 reports (its Jinja2's generated code), measured.
    #[test]
    fn the_line_is_jinja2_generated_codes() {
        let t = Shape::Template;
        let cases = [
            ("{{ lookup('vars', 'v1', default='', default='') }}", "default", 12),
            ("x{{ dict(a=1, a=2) }}", "a", 13),
            ("{{ x }}{{ dict(a=1, a=2) }}", "a", 14),
            ("{{ x ~ y }}{{ dict(a=1, a=2) }}", "a", 15),
            ("{{ x | int }}{{ dict(a=1, a=2) }}", "a", 20),
            ("{{ x | int | string }}{{ dict(a=1, a=2) }}", "a", 26),
            ("{{ x is number }}{{ dict(a=1, a=2) }}", "a", 20),
            ("{{ dict(a=1, a=2) }}{{ dict(b=1, b=2) }}", "a", 12),
            ("{{ dict(a=1, b=dict(c=1, c=2)) }}", "c", 12),
            ("a\nb\n{{ dict(a=1, a=2) }}", "a", 13),
            ("{{ x | default(a=1, a=2) }}", "a", 18),
            ("{{ range(1, a=2, a=3) }}", "a", 12),
            ("{{ 1 is divisibleby(a=2, a=3) }}", "a", 17),
            ("{% set x = range(1, a=2, a=3) %}", "a", 13),
            ("{% set z = 1 %}{{ dict(a=1, a=2) }}", "a", 16),
            ("{% if x %}a{% endif %}{{ dict(a=1, a=2) }}", "a", 16),
            ("{% if x %}{{ dict(a=1, a=2) }}{% endif %}", "a", 15),
            ("{% for i in y %}{{ i }}{% endfor %}{{ dict(a=1, a=2) }}", "a", 18),
        ];
        for (source, name, n) in cases {
            let wanted = format!("keyword argument repeated: {name} (<template>, line {n})");
            assert_eq!(line(source, t), Some(wanted), "{source}");
        }
        let expression = "{{ (lookup('vars', 'v1', default='', default='') or true) }}";
        assert_eq!(
            line(expression, Shape::Expression).as_deref(),
            Some("keyword argument repeated: default (<template>, line 13)")
        );
    }

    #[test]
    fn distinct_keywords_and_other_equals_signs_are_fine() {
        let t = Shape::Template;
        assert_eq!(line("{{ dict(a=1, b=2) }}{{ dict(a=3) }}", t), None);
        assert_eq!(line("{% set a = 1 %}{% set a = 2 %}{{ a == 1 }}", t), None);
        assert_eq!(line("{% macro m(a=1, b=2) %}{% endmacro %}", t), None);
        assert_eq!(line("{{ f(g(a=1), a=2) }}", t), None);
    }
}
