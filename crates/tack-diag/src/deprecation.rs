//! What a deprecation says: its message, who deprecates the feature and when it goes (ansible's
//! `DeprecationSummary` and the `Deprecated` tag a value can carry), and the sentence ansible
//! appends to say so. Showing and recording deprecations is `warnings`'s.

/// Who deprecates a feature (ansible's `PluginInfo`): ansible-core, a collection (a name, no
/// kind), or a plugin of one (its full name and its kind: `module`, `lookup`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Deprecator {
    pub resolved_name: Option<String>,
    pub kind: Option<String>,
}

impl Deprecator {
    /// ansible-core itself (`ansible.builtin`, no plugin kind).
    pub fn core() -> Deprecator {
        Deprecator { resolved_name: Some("ansible.builtin".into()), kind: None }
    }

    /// The collection a deprecation is filed under (`deprecation_as_dict`): the first two
    /// parts of the resolved name.
    pub fn collection_name(&self) -> Option<String> {
        let resolved = self.resolved_name.as_deref()?;
        let parts: Vec<&str> = resolved.split('.').collect();
        Some(if parts.len() > 2 { parts[..2].join(".") } else { resolved.to_string() })
    }
}

/// One deprecation: what is going, when, and who says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecated {
    pub msg: String,
    /// Text ansible shows after the message (what to use instead).
    pub help: Option<String>,
    pub version: Option<String>,
    pub date: Option<String>,
    pub deprecator: Deprecator,
}

impl Deprecated {
    /// An ansible-core deprecation of a feature that goes in ansible-core `removed_in`.
    pub fn core(msg: impl Into<String>, removed_in: impl Into<String>) -> Deprecated {
        Deprecated {
            msg: msg.into(),
            help: None,
            version: Some(removed_in.into()),
            date: None,
            deprecator: Deprecator::core(),
        }
    }

    /// The message with the sentence on when and from what the feature goes, as ansible
    /// displays it (`get_deprecation_message_with_plugin_info`).
    pub fn text(&self) -> String {
        let removal = removal_sentence(
            &self.deprecator,
            self.version.as_deref().filter(|v| !v.is_empty()),
            self.date.as_deref().filter(|d| !d.is_empty()),
        );
        let mut first = self.msg.trim().to_string();
        if !first.is_empty() && !first.ends_with(['!', '?', '.']) {
            first.push('.');
        }
        if first.is_empty() { removal } else { format!("{first} {removal}") }
    }
}

/// "This feature will be removed from <plugin> in <collection> <when>." as ansible words it.
fn removal_sentence(deprecator: &Deprecator, version: Option<&str>, date: Option<&str>) -> String {
    let kind_name = |k: &str| if k == "module" { k.to_string() } else { format!("{k} plugin") };
    let (collection, mut plugin) = match (&deprecator.resolved_name, &deprecator.kind) {
        // A collection names no plugin; without a name nothing is known.
        (None, _) | (_, None) => (deprecator.resolved_name.clone(), String::new()),
        (Some(r), Some(k)) if r == "ansible.builtin" => {
            (Some(r.clone()), format!("the {} API", kind_name(k)))
        }
        (Some(r), Some(k)) => {
            let parts: Vec<&str> = r.split('.').collect();
            let collection = (parts.len() > 2).then(|| parts[..2].join("."));
            let name = parts.last().copied().unwrap_or_default();
            (collection, format!("{} {}", kind_name(k), tack_py::repr::str_repr(name)))
        }
    };
    if collection.is_some() && !plugin.is_empty() {
        plugin.push_str(" in");
    }
    let collection_part = match collection.as_deref() {
        Some("ansible.builtin") => "ansible-core".to_string(),
        Some(c) => format!("collection {}", tack_py::repr::str_repr(c)),
        None => String::new(),
    };
    let when = match (collection.is_some(), date, version) {
        (false, _, _) => "in the future".to_string(),
        (true, Some(date), _) => format!("in a release after {date}"),
        (true, None, Some(version)) => format!("version {version}"),
        (true, None, None) => "in a future release".to_string(),
    };
    let from = if plugin.is_empty() && collection_part.is_empty() { "" } else { "from" };
    let parts = ["This feature will be removed", from, &plugin, &collection_part, &when];
    parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join(" ") + "."
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(resolved: Option<&str>, kind: Option<&str>) -> Deprecator {
        Deprecator { resolved_name: resolved.map(Into::into), kind: kind.map(Into::into) }
    }

    fn text(deprecator: Deprecator, version: Option<&str>, date: Option<&str>) -> String {
        Deprecated {
            msg: "Old".into(),
            help: None,
            version: version.map(Into::into),
            date: date.map(Into::into),
            deprecator,
        }
        .text()
    }

    #[test]
    fn the_removal_sentence_names_what_ansible_names() {
        assert_eq!(
            text(Deprecator::core(), Some("2.24"), None),
            "Old. This feature will be removed from ansible-core version 2.24."
        );
        assert_eq!(
            text(of(Some("foo.bar"), None), Some("9.9"), None),
            "Old. This feature will be removed from collection 'foo.bar' version 9.9."
        );
        assert_eq!(
            text(of(Some("foo.bar.noisy"), Some("module")), None, None),
            "Old. This feature will be removed from module 'noisy' in collection 'foo.bar' in a \
             future release."
        );
        assert_eq!(
            text(of(Some("bla.bla"), None), Some("1.0"), Some("2034-01-02")),
            "Old. This feature will be removed from collection 'bla.bla' in a release after \
             2034-01-02."
        );
        assert_eq!(
            text(of(None, None), None, None),
            "Old. This feature will be removed in the future."
        );
        assert_eq!(
            text(of(Some("ansible.builtin"), Some("lookup")), Some("2.23"), None),
            "Old. This feature will be removed from the lookup plugin API in ansible-core version \
             2.23."
        );
    }

    #[test]
    fn the_collection_is_the_first_two_parts() {
        assert_eq!(of(Some("a.b.c"), None).collection_name().as_deref(), Some("a.b"));
        assert_eq!(of(Some("a.b"), None).collection_name().as_deref(), Some("a.b"));
        assert_eq!(of(None, None).collection_name(), None);
    }
}
