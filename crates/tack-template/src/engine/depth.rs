//! Expressions too deep to compile: a chain of thousands of operators (`1 + 1 + ... + 1`,
//! `x|f|f|...`, `not not ...`) nests the compiled expression that deep, and compiling or
//! evaluating it would overflow the stack and abort the run. ansible-core fails on such
//! chains long before (Python's parser stops at 200 nested parentheses, its interpreter at
//! its recursion limit: `Recursive loop detected in template: maximum recursion depth
//! exceeded`); a template whose chains pass [`MAX_CHAIN`] fails with that error before it is
//! compiled. Nesting of brackets is minijinja's parser's own limit.
//!
//! Owns the scan only; it never changes a template.

use minijinja::machinery::{Token, tokenize};

/// The longest operator chain a template may hold: far past where ansible-core fails, far
/// below where compiling it would exhaust a worker thread's stack.
pub(crate) const MAX_CHAIN: usize = 1000;

/// Shorter sources cannot hold a chain that long (each link is at least two characters).
const SCAN_FROM: usize = 2 * MAX_CHAIN;

/// Whether `source` holds an operator chain longer than [`MAX_CHAIN`].
pub(crate) fn too_deep(source: &str, syntax: minijinja::syntax::SyntaxConfig) -> bool {
    if source.len() < SCAN_FROM {
        return false;
    }
    // The chain at each open bracket; a bracketed part is one operand of the chain around it.
    let mut chains: Vec<usize> = vec![0];
    for item in tokenize(source, false, syntax) {
        // A template that does not lex fails when it is compiled, with its own error.
        let Ok((token, _)) = item else { return false };
        match token {
            Token::VariableStart | Token::BlockStart => chains = vec![0],
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => chains.push(0),
            Token::ParenClose | Token::BracketClose | Token::BraceClose if chains.len() > 1 => {
                chains.pop();
            }
            // A new item of a list, call or mapping starts a chain of its own.
            Token::Comma | Token::Colon => {
                if let Some(chain) = chains.last_mut() {
                    *chain = 0;
                }
            }
            Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::FloorDiv
            | Token::Pow
            | Token::Mod
            | Token::Dot
            | Token::Tilde
            | Token::Pipe
            | Token::Eq
            | Token::Ne
            | Token::Gt
            | Token::Gte
            | Token::Lt
            | Token::Lte
            | Token::Ident("not" | "and" | "or" | "is" | "in" | "if" | "else") => {
                if let Some(chain) = chains.last_mut() {
                    *chain += 1;
                    if *chain > MAX_CHAIN {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax() -> minijinja::syntax::SyntaxConfig {
        minijinja::syntax::SyntaxConfig::default()
    }

    #[test]
    fn long_chains_are_too_deep_and_long_lists_are_not() {
        let chain = |op: &str, n: usize| format!("{{{{ 1{} }}}}", format!(" {op} 1").repeat(n));
        assert!(too_deep(&chain("+", MAX_CHAIN + 1), syntax()));
        assert!(!too_deep(&chain("+", MAX_CHAIN), syntax()));
        let filters = format!("{{{{ x{} }}}}", "|string".repeat(MAX_CHAIN + 1));
        assert!(too_deep(&filters, syntax()));
        let nots = format!("{{{{ {}1 }}}}", "not ".repeat(MAX_CHAIN + 1));
        assert!(too_deep(&nots, syntax()));
        // Many short items, each its own chain.
        let list = format!("{{{{ [{}] }}}}", vec!["a.b + 1"; 5000].join(", "));
        assert!(!too_deep(&list, syntax()));
        // Chains in separate expressions do not add up.
        let many = "{{ 1 + 1 }}".repeat(5000);
        assert!(!too_deep(&many, syntax()));
    }
}
