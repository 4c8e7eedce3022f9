//! The `ini` inventory plugin: `[group]` sections of hosts with inline `key=value` variables,
//! `[group:vars]` and `[group:children]` sections, host ranges and ports.
//!
//! Values are typed with Python's `literal_eval` (`port=22` is an int, `x=yes` a string), in
//! `:vars` sections too. A group may be named in `:children` or `:vars` before its own section;
//! a name still undefined at the end of the file is an error. Errors carry the file (ansible
//! drops the line number from them) and read as ansible's.

use std::path::Path;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use tack_diag::{Diagnostic, Origin};
use tack_yaml::{Mapping, Node, Value};

use crate::address::expand_hostpattern;
use crate::data::{InventoryData, line_origin};
use crate::literal::{Literal, literal_eval};
use crate::shlex;

static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:\#.*)?$").expect("static regex")
});
static GROUP_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^:\]\s]+)\s*(?:\#.*)?$").expect("static regex"));

/// What the plugin makes of a file's text, line by line.
struct IniParser<'a> {
    data: &'a mut InventoryData,
    path: Arc<Path>,
    line: u32,
}

/// A failure inside `_parse`: the message, raised with no position of its own.
struct Failure(String);

impl From<crate::data::DataError> for Failure {
    fn from(e: crate::data::DataError) -> Self {
        Failure(e.0)
    }
}

struct Pending {
    line: u32,
    state: &'static str,
    parents: Vec<String>,
}

/// Python's `str.splitlines()`.
fn python_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&text[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.peek().map(|(_, n)| *n) == Some('\n') {
            chars.next();
            end += 1;
        }
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Parses an INI inventory file into `data`. The error is ansible's
/// `Failed to parse inventory.` with the file as origin, caused by what went wrong.
pub(crate) fn parse(
    data: &mut InventoryData,
    loader: &tack_loader::DataLoader,
    path: &Path,
) -> Result<(), Diagnostic> {
    let file = loader.file_text(path).map_err(|e| {
        Diagnostic::caused_by("Failed to parse inventory.", None, e.to_diagnostic()).parser()
    })?;
    let origin = Origin::file(file.path.clone());
    let mut parser = IniParser { data, path: file.path.clone(), line: 0 };
    parser.parse(&file.text).map_err(|Failure(msg)| {
        Diagnostic::caused_by("Failed to parse inventory.", Some(origin), Diagnostic::new(msg))
            .parser()
    })
}

impl IniParser<'_> {
    fn origin(&self) -> Option<Origin> {
        line_origin(Some(&self.path), self.line)
    }

    fn parse(&mut self, text: &str) -> Result<(), Failure> {
        let mut pending: Vec<(String, Pending)> = Vec::new();
        let mut groupname = "ungrouped".to_string();
        let mut state = "hosts".to_string();
        for raw in python_lines(text) {
            self.line += 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(caps) = SECTION.captures(line) {
                let name = self.data.safe_group_name(&caps[1]);
                let kind = caps.get(2).map(|m| m.as_str().to_string());
                state = kind.clone().unwrap_or_else(|| "hosts".into());
                if !matches!(state.as_str(), "hosts" | "children" | "vars") {
                    let title = match &kind {
                        Some(k) => format!("{}:{k}", &caps[1]),
                        None => caps[1].to_string(),
                    };
                    return Err(Failure(format!("Section [{title}] has unknown type: {state}")));
                }
                if self.data.find_group(&name).is_none() {
                    let is_pending = pending.iter().any(|(n, _)| *n == name);
                    if state == "vars" && !is_pending {
                        pending.push((
                            name.clone(),
                            Pending { line: self.line, state: "vars", parents: Vec::new() },
                        ));
                    }
                    self.data.add_group(&name)?;
                }
                groupname = name;
                if state != "vars"
                    && let Some(idx) = pending.iter().position(|(n, _)| *n == groupname)
                {
                    if pending[idx].1.state == "children" {
                        self.add_pending_children(&groupname, &mut pending)?;
                    } else {
                        pending.remove(idx);
                    }
                }
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                return Err(Failure(format!(
                    "Invalid section entry: '{line}'. Please make sure that there are no spaces in \
                     the section entry, and that there are no other invalid characters"
                )));
            }
            match state.as_str() {
                "hosts" => self.host_line(line, &groupname)?,
                "vars" => {
                    let Some((k, v)) = line.split_once('=') else {
                        return Err(Failure(format!("Expected key=value, got: {line}")));
                    };
                    let key = Node::new(Value::Str(k.trim().to_string()), self.origin());
                    let value = self.value(v.trim())?;
                    self.data.set_variable(&groupname, key, value)?;
                }
                _ => {
                    let Some(caps) = GROUP_NAME.captures(line) else {
                        return Err(Failure(format!("Expected group name, got: {line}")));
                    };
                    let child = caps[1].to_string();
                    if self.data.find_group(&child).is_some() {
                        self.data.add_child(&groupname, &child)?;
                    } else if let Some((_, p)) = pending.iter_mut().find(|(n, _)| *n == child) {
                        p.parents.push(groupname.clone());
                    } else {
                        pending.push((
                            child,
                            Pending {
                                line: self.line,
                                state: "children",
                                parents: vec![groupname.clone()],
                            },
                        ));
                    }
                }
            }
        }
        if let Some((name, decl)) = pending.first() {
            self.line = decl.line;
            return Err(Failure(match decl.state {
                "vars" => format!("Section [{name}:vars] not valid for undefined group '{name}'."),
                _ => format!(
                    "Section [{}:children] includes undefined group '{name}'.",
                    decl.parents.last().map(String::as_str).unwrap_or_default()
                ),
            }));
        }
        Ok(())
    }

    fn add_pending_children(
        &mut self,
        group: &str,
        pending: &mut Vec<(String, Pending)>,
    ) -> Result<(), Failure> {
        let Some(idx) = pending.iter().position(|(n, _)| n == group) else { return Ok(()) };
        let parents = pending[idx].1.parents.clone();
        for parent in parents {
            self.data.add_child(&parent, group)?;
            let parent_pending = pending.iter().any(|(n, p)| *n == parent && p.state == "children");
            if parent_pending {
                self.add_pending_children(&parent, pending)?;
            }
        }
        if let Some(idx) = pending.iter().position(|(n, _)| n == group) {
            pending.remove(idx);
        }
        Ok(())
    }

    fn host_line(&mut self, line: &str, group: &str) -> Result<(), Failure> {
        let tokens = shlex::split(line)
            .map_err(|e| Failure(format!("Error parsing host definition '{line}': {e}")))?;
        let Some(first) = tokens.first() else { return Ok(()) };
        let (hostnames, port) = expand_hostpattern(first).map_err(|e| Failure(e.0))?;
        if first.trim().ends_with(':') && port.is_none() {
            return Err(Failure(format!(
                "Invalid host pattern '{first}' supplied, ending in ':' is not allowed, this \
                 character is reserved to provide a port."
            )));
        }
        if hostnames.iter().any(|h| h.trim() == "---") {
            return Err(Failure(format!(
                "Invalid host pattern '{first}' supplied, '---' is normally a sign this is a YAML \
                 file."
            )));
        }
        let mut variables = Mapping::new();
        for token in &tokens[1..] {
            let Some((k, v)) = token.split_once('=') else {
                return Err(Failure(format!(
                    "Expected key=value host variable assignment, got: {token}"
                )));
            };
            let key = Node::new(Value::Str(k.to_string()), self.origin());
            variables.insert(key, self.value(v)?);
        }
        let group_id = self.data.find_group(group);
        for host in hostnames {
            self.data.add_host(&host, group_id, port)?;
            for (k, v) in variables.iter() {
                self.data.set_variable(&host, k.clone(), v.clone())?;
            }
        }
        Ok(())
    }

    fn value(&self, text: &str) -> Result<Node, Failure> {
        match literal_eval(text, self.origin().as_ref()) {
            Literal::Value(node) => Ok(node),
            Literal::Text => Ok(Node::new(Value::Str(text.to_string()), self.origin())),
            Literal::Fails(msg) => Err(Failure(msg)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::TransformGroupChars;
    use tack_loader::{DataLoader, HashBehaviour};

    fn parse_text(text: &str) -> (InventoryData, Result<(), Diagnostic>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, text).unwrap();
        let mut data = InventoryData::new(HashBehaviour::Replace, TransformGroupChars::Ignore);
        let loader = DataLoader::new(Default::default());
        let result = parse(&mut data, &loader, &path);
        (data, result)
    }

    #[test]
    fn sections_hosts_and_vars() {
        let (mut d, r) = parse_text(
            "alpha ansible_port=2222 x=1 s=\"a b\"\nbeta:2200\n[web]\nweb[1:2]\n[web:vars]\nflag=False\n[all:children]\nweb\n",
        );
        r.unwrap();
        d.reconcile().unwrap();
        let alpha = d.find_host("alpha").unwrap();
        assert_eq!(d.host(alpha).vars.get("x").unwrap().value, Value::Int(1));
        assert_eq!(d.host(alpha).vars.get("s").unwrap().value, Value::Str("a b".into()));
        let beta = d.find_host("beta").unwrap();
        assert_eq!(d.host(beta).vars.get("ansible_port").unwrap().value, Value::Int(2200));
        let web = d.find_group("web").unwrap();
        assert_eq!(d.group(web).hosts.len(), 2);
        assert_eq!(d.group(web).vars.get("flag").unwrap().value, Value::Bool(false));
    }

    #[test]
    fn errors_read_as_ansibles() {
        let (_, r) = parse_text("[web]\nhost1\n[web:vars]\nnovalue\n");
        assert_eq!(
            r.unwrap_err().brief(),
            "Failed to parse inventory: Expected key=value, got: novalue"
        );
        let (_, r) = parse_text("[web]\nhost1\n[db:children]\nmissing\n");
        assert_eq!(
            r.unwrap_err().brief(),
            "Failed to parse inventory: Section [db:children] includes undefined group 'missing'."
        );
        let (_, r) = parse_text("[g:vars]\na=1\n");
        assert_eq!(
            r.unwrap_err().brief(),
            "Failed to parse inventory: Section [g:vars] not valid for undefined group 'g'."
        );
        let (_, r) = parse_text("[g:bogus]\n");
        assert_eq!(
            r.unwrap_err().brief(),
            "Failed to parse inventory: Section [g:bogus] has unknown type: bogus"
        );
        let (_, r) = parse_text("all:\n  hosts:\n");
        assert!(r.unwrap_err().brief().contains("Invalid host pattern 'all:' supplied"));
    }

    #[test]
    fn children_may_come_before_their_group() {
        let (d, r) = parse_text("[parent:children]\nkid\n[kid]\nh\n");
        r.unwrap();
        let kid = d.find_group("kid").unwrap();
        let parent = d.find_group("parent").unwrap();
        assert_eq!(d.group(parent).children, vec![kid]);
    }

    #[test]
    fn python_splitlines() {
        assert_eq!(python_lines("a\r\nb\rc\n"), ["a", "b", "c"]);
        assert_eq!(python_lines("a\n\nb"), ["a", "", "b"]);
    }
}
