//! Playbook files (`Playbook._load_playbook_data`) and `import_playbook` (`PlaybookInclude`).

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{Loader, attrs, general_error, parser_error};
use crate::ast::{Play, Playbook};
use crate::tables::{Keyword, ObjectKind, actions};
use tack_py::ansible::unfrackpath;
use tack_py::path::normpath;

impl Loader<'_> {
    /// Loads a playbook file given as on the command line (relative to the working directory).
    pub fn load_playbook(&self, path: &Path) -> Result<Playbook, Diagnostic> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut plays = Vec::new();
        // A name that is no file may be a collection's playbook (`ns.col.pb`).
        let collection = self.collection_playbook(path);
        let file = collection.as_ref().map_or(path, |(file, _)| file.as_path());
        if let Some((_, name)) = &collection {
            *self.default_collection.borrow_mut() = Some(name.clone());
        }
        let basedir = self.expanding(file, None, || {
            self.load_playbook_data(file, &cwd, None, &mut plays, collection.is_none())
        })?;
        let imported = self.take_imported();
        let import_marks = std::mem::take(&mut *self.play_marks.borrow_mut());
        Ok(Playbook { path: path.to_path_buf(), basedir, plays, imported, import_marks })
    }

    /// A playbook of one play given as data rather than read from a file (ansible's ad-hoc
    /// command builds its play this way); `basedir` is where relative names are found.
    pub fn load_play_data(&self, ds: &Node, basedir: &Path) -> Result<Playbook, Diagnostic> {
        let play = self.load_play(ds, basedir, None)?;
        let imported = self.take_imported();
        Ok(Playbook {
            path: basedir.to_path_buf(),
            basedir: basedir.to_path_buf(),
            plays: vec![play],
            import_marks: vec![imported.len()],
            imported,
        })
    }

    /// A collection's playbook `name` names, when it is not a file: its file and collection.
    pub fn collection_playbook(&self, name: &Path) -> Option<(PathBuf, String)> {
        if name.exists() {
            return None;
        }
        let text = name.to_str()?;
        let fqcr = super::collections::Fqcr::parse(text)?;
        let file = self.collection_roots().playbook(&fqcr)?;
        Some((file, format!("{}.{}", fqcr.namespace, fqcr.name)))
    }

    /// Appends the plays of `file` (and of the playbooks it imports) to `out`; returns the
    /// playbook's base directory. `adjacent`: its directory joins the module and collection
    /// search (not for a collection's playbook).
    fn load_playbook_data(
        &self,
        file: &Path,
        cwd: &Path,
        vars: Option<&Mapping>,
        out: &mut Vec<Play>,
        adjacent: bool,
    ) -> Result<PathBuf, Diagnostic> {
        let basedir = if file.is_absolute() {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            normpath(&cwd.join(file.parent().unwrap_or(Path::new(""))))
        };
        if adjacent {
            self.add_playbook_dir(&basedir);
        }
        let full = basedir.join(file.file_name().unwrap_or_default());
        let shown = unfrackpath(file, true, Some(cwd)).display().to_string();
        let ds = self.files.load(&full)?;
        let entries = match &ds.value {
            Value::Null => {
                return Err(parser_error(format!("Empty playbook, nothing to do: {shown}"), None));
            }
            Value::Seq(items) if items.is_empty() => {
                return Err(parser_error(
                    format!("A playbook must contain at least one play: {shown}"),
                    None,
                ));
            }
            Value::Seq(items) => items.clone(),
            _ => {
                return Err(parser_error(
                    format!(
                        "A playbook must be a list of plays, got a {} instead: {shown}",
                        ds.value.loaded_type_repr()
                    ),
                    Some(&ds),
                ));
            }
        };
        for entry in &entries {
            let Some(map) = entry.as_map() else {
                return Err(parser_error(
                    "playbook entries must be either valid plays or 'import_playbook' statements",
                    Some(entry),
                ));
            };
            if map.keys().any(|k| {
                k.as_str().is_some_and(|k| {
                    actions::is(k, actions::IMPORT_PLAYBOOK) && k.ends_with("import_playbook")
                })
            }) {
                self.import_playbook(map, &basedir, cwd, out)?;
            } else {
                out.push(self.load_play(entry, &basedir, vars)?);
                let loaded = self.imported.borrow().len();
                self.play_marks.borrow_mut().push(loaded);
            }
        }
        Ok(basedir)
    }

    /// `PlaybookInclude.load`: loads the imported playbook and applies the import's vars,
    /// tags and `when` to each of its plays.
    fn import_playbook(
        &self,
        map: &Mapping,
        basedir: &Path,
        cwd: &Path,
        out: &mut Vec<Play>,
    ) -> Result<(), Diagnostic> {
        let keys: Vec<&str> = map
            .keys()
            .filter_map(|k| k.as_str())
            .filter(|k| {
                matches!(
                    *k,
                    "import_playbook"
                        | "ansible.builtin.import_playbook"
                        | "ansible.legacy.import_playbook"
                )
            })
            .collect();
        if keys.len() != 1 {
            let mut sorted = keys.clone();
            sorted.sort();
            return Err(general_error(
                format!("Found conflicting import_playbook actions: {}", sorted.join(", ")),
                None,
            ));
        }
        let mut ds = Mapping::new();
        for (k, v) in map.iter() {
            if k.as_str() == Some(keys[0]) {
                ds.insert(
                    Node::new(Value::Str("import_playbook".into()), k.origin.clone()),
                    v.clone(),
                );
            } else {
                ds.insert(k.clone(), v.clone());
            }
        }
        attrs::validate_keys(&ds, ObjectKind::PlaybookInclude)?;
        let mut import_vars = Mapping::new();
        if let Some(v) = ds.get("vars") {
            import_vars = attrs::load_vars(v, "PlaybookInclude")?;
        }
        let tags = match ds.get("tags") {
            Some(t) => attrs::load_tags(t)?.as_seq().map(<[Node]>::to_vec).unwrap_or_default(),
            None => Vec::new(),
        };

        // The import's own keywords are templated with its vars and the extra vars.
        let mut all_vars = import_vars.clone();
        for (k, v) in self.options.extra_vars.iter() {
            all_vars.insert(k.clone(), v.clone());
        }
        let name_node =
            ds.get("import_playbook").cloned().unwrap_or_else(|| Node::bare(Value::Null));
        let rendered = self.templar.render_with_vars(&name_node, &all_vars).map_err(|e| {
            Diagnostic::caused_by(
                "Error processing keyword 'import_playbook'.",
                name_node.origin.clone(),
                e.to_diagnostic(),
            )
        })?;
        let name = tack_yaml::pyrepr::str(&rendered.value);
        let when = ds.get("when").cloned();
        let when_key = ds.keys().find(|k| k.as_str() == Some("when")).cloned();

        // A collection's playbook by its fully qualified name first, as ansible looks there
        // first; it makes its collection the default one from then on.
        let collection = super::collections::Fqcr::parse(&name).and_then(|fqcr| {
            let file = self.collection_roots().playbook(&fqcr)?;
            Some((file, format!("{}.{}", fqcr.namespace, fqcr.name)))
        });
        let path = match &collection {
            Some((file, _)) => file.clone(),
            None if Path::new(&name).is_absolute() => PathBuf::from(&name),
            None => basedir.join(&name),
        };
        if let Some((_, name)) = &collection {
            *self.default_collection.borrow_mut() = Some(name.clone());
        }
        let mut plays = Vec::new();
        let at = ds
            .keys()
            .find(|k| k.as_str() == Some("import_playbook"))
            .and_then(|k| k.origin.clone());
        self.expanding(&path, at, || {
            self.load_playbook_data(
                &path,
                cwd,
                Some(&import_vars),
                &mut plays,
                collection.is_none(),
            )
        })?;
        let included_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for mut play in plays {
            if let Some(w) = &when {
                play.included_conditional = Some(w.clone());
                // ansible puts the import's `when` first in every block's and every role's
                // of the play (handlers keep theirs); gathering gets it from the play.
                let key = when_key.clone().unwrap_or_else(|| Node::bare(Value::Str("when".into())));
                let sections = play.pre_tasks.iter_mut().chain(&mut play.tasks);
                for block in sections.chain(&mut play.post_tasks) {
                    prepend_when(&mut block.attrs, &key, w);
                }
                for id in play.roles.clone() {
                    prepend_when(&mut play.role_arena[id.0].attrs, &key, w);
                }
            }
            for (k, v) in import_vars.iter() {
                play.vars.insert(k.clone(), v.clone());
            }
            // ansible pops a `tags` var of the import and extends a temporary copy of the
            // play's tags with it, so it has no effect beyond leaving the vars.
            play.vars.remove("tags");
            extend_tags(&mut play, tags.clone());
            if play.included_path.is_none() {
                play.included_path = Some(included_dir.clone());
            }
            out.push(play);
        }
        Ok(())
    }
}

/// `when` ahead of `attrs`' own conditions (each a list of conditions, a single one or none).
fn prepend_when(attrs: &mut crate::ast::Attrs, key: &Node, when: &Node) {
    let items = |node: &Node| match &node.value {
        Value::Seq(items) => items.clone(),
        Value::Null => Vec::new(),
        _ => vec![node.clone()],
    };
    let mut conditions = items(when);
    let key = match attrs.get(Keyword::When) {
        Some(own) => {
            conditions.extend(items(own));
            attrs.key(Keyword::When).cloned().unwrap_or_else(|| key.clone())
        }
        None => key.clone(),
    };
    attrs.set(Keyword::When, key, Node::new(Value::Seq(conditions), when.origin.clone()));
}

/// Adds tags to a play's own `tags`, keeping each once.
fn extend_tags(play: &mut Play, extra: Vec<Node>) {
    if extra.is_empty() {
        return;
    }
    let mut current: Vec<Node> = play
        .attrs
        .get(Keyword::Tags)
        .and_then(|t| t.as_seq())
        .map(<[Node]>::to_vec)
        .unwrap_or_default();
    for t in extra {
        if !current.iter().any(|c| c.value == t.value) {
            current.push(t);
        }
    }
    let key = play
        .attrs
        .key(Keyword::Tags)
        .cloned()
        .unwrap_or_else(|| Node::bare(Value::Str("tags".into())));
    play.attrs.set(Keyword::Tags, key, Node::bare(Value::Seq(current)));
}
