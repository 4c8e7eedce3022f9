//! Jinja2's `urlize`: the words of a text that look like URLs or e-mail addresses become links,
//! after the text is HTML-escaped, with Jinja2's rules for leading and trailing punctuation and
//! balanced brackets.

use fancy_regex::Regex;

use super::FilterError;
use super::strings::escape_str;

const HTTP: &str = r"(?i)^((https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59})|([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)|(https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}])))(?::[\d]{1,5})?(?:[/?#]\S*)?$";
const EMAIL: &str = r"^\S+@\w[\w.-]*\.\w+$";
const LEAD: &str = r"^([(<]|&lt;)+";
const TRAIL: &str = r"([)>.,\n]|&gt;)+$";

fn compile(pattern: &str) -> Result<Regex, FilterError> {
    Regex::new(pattern).map_err(|e| FilterError::failed(format!("urlize pattern: {e}")))
}

fn matches(re: &Regex, text: &str) -> bool {
    re.is_match(text).unwrap_or(false)
}

/// Splits `text` into alternating words and whitespace runs (Python's `re.split(r"(\s+)")`).
fn split_words(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut in_space = false;
    for c in text.chars() {
        let space = super::strings::is_py_space(c);
        if space != in_space {
            out.push(String::new());
            in_space = space;
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

pub(super) fn urlize(
    text: &str,
    trim_limit: Option<usize>,
    rel: &str,
    target: Option<&str>,
) -> Result<String, FilterError> {
    let (http, email, lead, trail) =
        (compile(HTTP)?, compile(EMAIL)?, compile(LEAD)?, compile(TRAIL)?);
    let trim = |x: &str| match trim_limit {
        Some(limit) if x.chars().count() > limit => {
            format!("{}...", x.chars().take(limit).collect::<String>())
        }
        _ => x.to_string(),
    };
    let rel_attr =
        if rel.is_empty() { String::new() } else { format!(" rel=\"{}\"", escape_str(rel)) };
    let target_attr = target
        .filter(|t| !t.is_empty())
        .map(|t| format!(" target=\"{}\"", escape_str(t)))
        .unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for word in split_words(&escape_str(text)) {
        let mut middle = word.clone();
        let mut head = String::new();
        let mut tail = String::new();
        if let Ok(Some(m)) = lead.find(&middle) {
            head = m.as_str().to_string();
            middle = middle[m.end()..].to_string();
        }
        if [")", ">", ".", ",", "\n", "&gt;"].iter().any(|e| middle.ends_with(e))
            && let Ok(Some(m)) = trail.find(&middle)
        {
            tail = m.as_str().to_string();
            middle.truncate(m.start());
        }
        for (open, close) in [("(", ")"), ("<", ">"), ("&lt;", "&gt;")] {
            let opens = middle.matches(open).count();
            if opens <= middle.matches(close).count() {
                continue;
            }
            for _ in 0..opens.min(tail.matches(close).count()) {
                let Some(i) = tail.find(close) else { break };
                let end = i + close.len();
                middle.push_str(&tail[..end]);
                tail = tail[end..].to_string();
            }
        }
        let linked = if matches(&http, &middle) {
            let href = if middle.starts_with("https://") || middle.starts_with("http://") {
                middle.clone()
            } else {
                format!("https://{middle}")
            };
            format!("<a href=\"{href}\"{rel_attr}{target_attr}>{}</a>", trim(&middle))
        } else if let Some(address) = middle.strip_prefix("mailto:").filter(|a| matches(&email, a))
        {
            format!("<a href=\"{middle}\">{address}</a>")
        } else if middle.contains('@')
            && !middle.starts_with("www.")
            && !middle.contains(':')
            && matches(&email, &middle)
        {
            format!("<a href=\"mailto:{middle}\">{middle}</a>")
        } else {
            middle
        };
        out.push_str(&head);
        out.push_str(&linked);
        out.push_str(&tail);
    }
    Ok(out)
}
