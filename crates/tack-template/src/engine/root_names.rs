//! The variables Jinja2 reads when a template starts. Its generated code resolves every
//! name the template's top level uses before the first line of output (`l_0_x =
//! resolve('x')`), a branch that never runs included, and ansible's variables warn when
//! they are read that way (a fact read as a top-level variable is deprecated). Names used
//! only inside a `for` loop's body, a macro or a `call` block are read when those run, not
//! at the start. It reads tokens with `kwargs`' helpers and nothing else of the engine.

use minijinja::machinery::{Token, tokenize};
use minijinja::syntax::SyntaxConfig;

use super::kwargs::{CONSTANTS, dotted};

/// The blocks whose bodies are their own scopes, read when they run.
const SCOPES: &[&str] = &["for", "macro", "call", "filter"];

/// The names `source` reads at its top level, each once, in order; `None` when it cannot be
/// tokenized (the compiler reports that).
pub(crate) fn root_names(source: &str, syntax: SyntaxConfig) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    for item in tokenize(source, false, syntax) {
        tokens.push(item.ok()?.0);
    }
    let mut names: Vec<String> = Vec::new();
    let mut stored: Vec<&str> = Vec::new();
    // Open blocks whose bodies are scopes of their own.
    let mut scopes: Vec<&str> = Vec::new();
    // In a `for` header, before its `in`: the loop's own names.
    let mut binding = false;
    let mut in_block_header = false;
    let mut i = 0;
    while i < tokens.len() {
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        match &tokens[i] {
            Token::BlockStart => {
                in_block_header = true;
                let tag = match tokens.get(i + 1) {
                    Some(Token::Ident(tag)) => *tag,
                    _ => "",
                };
                if let Some(closed) = tag.strip_prefix("end") {
                    if SCOPES.contains(&closed) && scopes.last() == Some(&closed) {
                        scopes.pop();
                    }
                } else if SCOPES.contains(&tag) {
                    scopes.push(tag);
                }
                match tag {
                    // A `for` header's iterable is read where the loop starts, outside it.
                    "for" => binding = true,
                    "set" => {
                        if let Some(Token::Ident(name)) = tokens.get(i + 2) {
                            stored.push(name);
                        }
                        i += 3;
                        continue;
                    }
                    // A macro's name and parameters are its own.
                    "macro" => {
                        i += 2;
                        while i < tokens.len() && !matches!(tokens[i], Token::BlockEnd) {
                            i += 1;
                        }
                        continue;
                    }
                    _ => {}
                }
                i += 2;
                continue;
            }
            Token::BlockEnd => in_block_header = false,
            Token::Pipe => {
                i = dotted(&tokens, i + 1).1;
                continue;
            }
            Token::Ident("is") => {
                let start = match tokens.get(i + 1) {
                    Some(Token::Ident("not")) => i + 2,
                    _ => i + 1,
                };
                i = dotted(&tokens, start).1;
                continue;
            }
            Token::Ident("in") if binding => binding = false,
            Token::Ident(_) if binding => {}
            Token::Ident(word) => {
                let attribute = matches!(prev, Some(Token::Dot));
                let keyword = matches!(tokens.get(i + 1), Some(Token::Assign))
                    && matches!(prev, Some(Token::ParenOpen | Token::Comma));
                // The `for` header itself (the iterable) belongs to the scope around it.
                let depth = if in_block_header && scopes.last() == Some(&"for") {
                    scopes.len() - 1
                } else {
                    scopes.len()
                };
                let read = !attribute
                    && !keyword
                    && depth == 0
                    && !CONSTANTS.contains(word)
                    && !stored.contains(word);
                if read && !names.iter().any(|n| n == word) {
                    names.push((*word).to_string());
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(source: &str) -> Vec<String> {
        root_names(source, SyntaxConfig::default()).unwrap_or_default()
    }

    /// What ansible-core 2.21.5 warns about (a fact read as a top-level variable), measured:
    /// a branch that never runs counts, a loop's body and a macro's do not.
    #[test]
    fn the_top_level_names_are_read_at_the_start() {
        assert_eq!(names("{{ 1 if true else ansible_hostname }}"), ["ansible_hostname"]);
        assert_eq!(
            names("a\n{% if false %}{{ ansible_hostname }}{% endif %}"),
            ["ansible_hostname"]
        );
        assert!(names("{% for i in [] %}{{ ansible_domain }}{% endfor %}").is_empty());
        assert!(names("{% macro m() %}{{ ansible_fqdn }}{% endmacro %}x").is_empty());
        assert_eq!(names("{% for i in items %}{{ i.x }}{% endfor %}"), ["items"]);
    }

    #[test]
    fn plugins_attributes_keywords_and_stored_names_are_not_variables() {
        assert_eq!(names("{{ x.y | default(a=1) is defined }}"), ["x"]);
        assert_eq!(names("{% set z = w %}{{ z }}"), ["w"]);
        assert_eq!(names("{{ x | ansible.builtin.to_json }}{{ true and none }}"), ["x"]);
    }
}
