//! The constructor: a composed document becomes a [`Node`] tree, as PyYAML's `SafeConstructor`
//! under ansible's `AnsibleConstructor` builds Python objects from it.
//!
//! PyYAML's construction order is observable (which duplicate-key warning comes first, which
//! error is reported, whether an anchored string first met under `!unsafe` is unsafe
//! everywhere), so it is reproduced rather than approximated: containers are first created
//! empty and filled later, level by level (PyYAML's `state_generators`), except inside
//! `!unsafe`/`!vault`, which build their whole subtree at once (`deep=True`). Objects live in an
//! arena and aliases share them, as Python shares one object; the tree is materialised at the
//! end.
//!
//! PyYAML's merge-key flattening is reproduced too, including its 6.0.x de-duplication of merged
//! keys by the identity of the key's Python string: CPython shares one object for the empty
//! string and for every one-character Latin-1 string, so those keys de-duplicate by value while
//! longer keys de-duplicate only when they are the same node (an alias).
//!
//! This module knows nothing of libyaml or of how errors are shown; see `error` for that.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use libyaml_safer::Mark;
use tack_diag::{Diagnostic, Origin};

use crate::compose::{Document, Kind, NodeId};
use crate::key::PyKey;
use crate::pyrepr::py_key_repr;
use crate::resolve::{Tag, YAML_PREFIX, resolve_scalar};
use crate::scalar::{PyError, construct_bool, construct_float, construct_int, construct_timestamp};
use crate::value::{Mapping, Node, Value};
use crate::{DuplicateKeys, LoadOptions, YamlWarning, YamlWarningKind};

/// How many nodes alias expansion may add beyond the document's own, so that a small file of
/// nested aliases (a "billion laughs") cannot exhaust memory once copied into a tree.
const EXPANSION_ALLOWANCE: usize = 1_000_000;

/// Why construction stopped, in PyYAML's terms.
#[derive(Debug)]
pub(crate) enum ConstructError {
    /// A `MarkedYAMLError` (`ConstructorError`). `ansible` marks ansible's own
    /// `AnsibleConstructorError`, which skips ansible's guesses about the cause.
    Marked { context: Option<&'static str>, problem: String, mark: Mark, ansible: bool },
    /// Any other Python exception raised while building a value: only its text is shown.
    Python(String),
    /// Something PyYAML builds but tack's value model cannot hold.
    Unsupported { message: String, mark: Mark },
}

type Result<T> = std::result::Result<T, ConstructError>;

impl From<PyError> for ConstructError {
    fn from(err: PyError) -> ConstructError {
        ConstructError::Python(err.0)
    }
}

type ObjId = usize;

struct Obj {
    value: ObjValue,
    origin: Option<Origin>,
}

#[derive(Clone)]
enum ObjValue {
    Scalar(Value),
    List(Vec<ObjId>),
    Dict(Vec<(ObjId, ObjId)>),
}

/// Where nodes of this stream say they come from.
#[derive(Clone)]
pub(crate) struct OriginBase {
    pub path: Option<Arc<Path>>,
    pub description: Option<Arc<str>>,
}

impl OriginBase {
    pub(crate) fn at(&self, mark: Mark) -> Origin {
        Origin {
            path: self.path.clone(),
            description: self.description.clone(),
            line: mark.line as u32 + 1,
            col: mark.column as u32 + 1,
        }
    }
}

/// Which PyYAML "generator" fills a container created empty.
#[derive(Clone, Copy)]
enum Fill {
    Map,
    Seq,
}

pub(crate) struct Constructor<'a> {
    doc: &'a mut Document,
    base: &'a OriginBase,
    options: &'a LoadOptions,
    warnings: &'a mut Vec<YamlWarning>,
    objs: Vec<Obj>,
    constructed: Vec<Option<ObjId>>,
    pending: Vec<(ObjId, NodeId, Fill)>,
    deep: bool,
    unsafe_depth: u32,
}

impl<'a> Constructor<'a> {
    pub(crate) fn new(
        doc: &'a mut Document,
        base: &'a OriginBase,
        options: &'a LoadOptions,
        warnings: &'a mut Vec<YamlWarning>,
    ) -> Constructor<'a> {
        let count = doc.nodes.len();
        Constructor {
            doc,
            base,
            options,
            warnings,
            objs: Vec::with_capacity(count),
            constructed: vec![None; count],
            pending: Vec::new(),
            deep: false,
            unsafe_depth: 0,
        }
    }

    /// `construct_document`: the root, then every deferred container, level by level.
    pub(crate) fn construct_document(mut self) -> Result<Node> {
        let root = self.construct_object(self.doc.root, false)?;
        while !self.pending.is_empty() {
            let level = std::mem::take(&mut self.pending);
            for (obj, node, fill) in level {
                self.fill(obj, node, fill)?;
            }
        }
        let budget = self.doc.nodes.len() + EXPANSION_ALLOWANCE;
        let cyclic = self.doc.cyclic;
        Ok(Materializer::new(self.objs, root, budget, cyclic).node(root, 0)?.0)
    }

    fn origin(&self, node: NodeId) -> Origin {
        self.base.at(self.doc.nodes[node].start)
    }

    fn alloc(&mut self, value: ObjValue, node: NodeId) -> ObjId {
        let origin = Some(self.origin(node));
        self.objs.push(Obj { value, origin });
        self.objs.len() - 1
    }

    fn construct_object(&mut self, node: NodeId, deep: bool) -> Result<ObjId> {
        if let Some(obj) = self.constructed[node] {
            return Ok(obj);
        }
        let old_deep = self.deep;
        if deep {
            self.deep = true;
        }
        let tag = self.doc.nodes[node].tag.clone();
        let obj = self.construct_tagged(node, &tag)?;
        self.constructed[node] = Some(obj);
        self.deep = old_deep;
        Ok(obj)
    }

    fn construct_tagged(&mut self, node: NodeId, tag: &Tag) -> Result<ObjId> {
        match tag {
            Tag::Map => Ok(self.container(node, Fill::Map)?),
            Tag::Seq => Ok(self.container(node, Fill::Seq)?),
            Tag::Str => {
                let text = self.scalar(node)?.to_string();
                let value = if self.unsafe_depth > 0 || self.options.untrusted {
                    Value::Unsafe(text)
                } else {
                    Value::Str(text)
                };
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            Tag::Int => {
                let value = construct_int(self.scalar(node)?)?;
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            Tag::Float => {
                let value = Value::Float(construct_float(self.scalar(node)?)?);
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            Tag::Bool => {
                let value = Value::Bool(construct_bool(self.scalar(node)?)?);
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            Tag::Null => {
                self.scalar(node)?;
                Ok(self.alloc(ObjValue::Scalar(Value::Null), node))
            }
            Tag::Timestamp => {
                let value = Value::Timestamp(construct_timestamp(self.scalar(node)?)?);
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            Tag::Omap => self.pairs(node, "!!omap", "an ordered map"),
            Tag::Pairs => self.pairs(node, "!!pairs", "pairs"),
            Tag::Unsafe => {
                self.unsafe_depth += 1;
                let result = self.resolve_and_construct(node);
                self.unsafe_depth -= 1;
                result
            }
            Tag::Vault => self.vault(node, tag),
            Tag::VaultEncrypted => {
                self.deprecate(
                    node,
                    "Use of the YAML `!vault-encrypted` tag is deprecated.",
                    "Use the `!vault` tag instead.",
                );
                self.vault(node, tag)
            }
            Tag::Binary => {
                let data = crate::binary::decode(self.scalar(node)?).map_err(|problem| {
                    ConstructError::Marked {
                        context: None,
                        problem,
                        mark: self.doc.nodes[node].start,
                        ansible: false,
                    }
                })?;
                Ok(self.alloc(ObjValue::Scalar(Value::Bytes(data)), node))
            }
            Tag::Set => Err(self.unsupported(
                node,
                "tack does not support the YAML `!!set` tag: use a list instead.",
            )),
            Tag::Merge | Tag::Other(_) => Err(ConstructError::Marked {
                context: None,
                problem: format!(
                    "could not determine a constructor for the tag {}",
                    crate::pyrepr::str_repr(&tag.name())
                ),
                mark: self.doc.nodes[node].start,
                ansible: false,
            }),
        }
    }

    fn unsupported(&self, node: NodeId, message: &str) -> ConstructError {
        ConstructError::Unsupported { message: message.into(), mark: self.doc.nodes[node].start }
    }

    /// `construct_yaml_map`/`construct_yaml_seq`: an empty container now, filled at once when
    /// building deeply, later otherwise.
    fn container(&mut self, node: NodeId, fill: Fill) -> Result<ObjId> {
        let empty = match fill {
            Fill::Map => ObjValue::Dict(Vec::new()),
            Fill::Seq => ObjValue::List(Vec::new()),
        };
        let obj = self.alloc(empty, node);
        if self.deep {
            self.fill(obj, node, fill)?;
        } else {
            self.pending.push((obj, node, fill));
        }
        Ok(obj)
    }

    fn fill(&mut self, obj: ObjId, node: NodeId, fill: Fill) -> Result<()> {
        match fill {
            Fill::Seq => {
                let items = self.construct_sequence(node)?;
                self.objs[obj].value = ObjValue::List(items);
            }
            Fill::Map => {
                let entries = self.construct_mapping(node)?;
                self.objs[obj].value = ObjValue::Dict(entries);
            }
        }
        Ok(())
    }

    fn scalar(&self, node: NodeId) -> Result<&str> {
        match &self.doc.nodes[node].kind {
            Kind::Scalar(value) => Ok(value),
            other => Err(self.expected(node, "a scalar node", other.id())),
        }
    }

    fn expected(&self, node: NodeId, what: &str, found: &str) -> ConstructError {
        ConstructError::Marked {
            context: None,
            problem: format!("expected {what}, but found {found}"),
            mark: self.doc.nodes[node].start,
            ansible: false,
        }
    }

    fn construct_sequence(&mut self, node: NodeId) -> Result<Vec<ObjId>> {
        let items = match &self.doc.nodes[node].kind {
            Kind::Seq(items) => items.clone(),
            other => return Err(self.expected(node, "a sequence node", other.id())),
        };
        items.into_iter().map(|item| self.construct_object(item, false)).collect()
    }

    /// `SafeConstructor.construct_mapping` then ansible's duplicate-key pass.
    fn construct_mapping(&mut self, node: NodeId) -> Result<Vec<(ObjId, ObjId)>> {
        if matches!(self.doc.nodes[node].kind, Kind::Map(_)) {
            self.flatten_mapping(node)?;
        }
        let pairs = match &self.doc.nodes[node].kind {
            Kind::Map(pairs) => pairs.clone(),
            other => return Err(self.expected(node, "a mapping node", other.id())),
        };
        let mut entries: Vec<(ObjId, ObjId)> = Vec::with_capacity(pairs.len());
        let mut index = KeyIndex::default();
        // ansible looks for duplicates in a second pass over the same keys, after the dict is
        // built; the same keys compare equal in the same order, so they are noted here and
        // reported once the first pass has succeeded.
        let mut duplicates = Vec::new();
        for &(key_node, value_node) in &pairs {
            let key = self.construct_object(key_node, false)?;
            let Some(py_key) = self.hashable(key) else {
                return Err(ConstructError::Marked {
                    context: Some("while constructing a mapping"),
                    problem: "found unhashable key".into(),
                    mark: self.doc.nodes[key_node].start,
                    ansible: false,
                });
            };
            let value = self.construct_object(value_node, false)?;
            match index.find_or_insert(py_key, entries.len()) {
                Some(pos) => {
                    entries[pos].1 = value;
                    duplicates.push((key, key_node));
                }
                None => entries.push((key, value)),
            }
        }
        for (key, key_node) in duplicates {
            self.duplicate_key(key, key_node)?;
        }
        Ok(entries)
    }

    fn hashable(&self, obj: ObjId) -> Option<PyKey> {
        match &self.objs[obj].value {
            ObjValue::Scalar(value) => PyKey::of(value),
            ObjValue::List(_) | ObjValue::Dict(_) => None,
        }
    }

    fn duplicate_key(&mut self, key: ObjId, key_node: NodeId) -> Result<()> {
        let ObjValue::Scalar(value) = &self.objs[key].value else { return Ok(()) };
        let message = format!("Found duplicate mapping key {}.", py_key_repr(value));
        match self.options.duplicate_keys {
            DuplicateKeys::Ignore => Ok(()),
            DuplicateKeys::Error => Err(ConstructError::Marked {
                context: None,
                problem: message,
                mark: self.doc.nodes[key_node].start,
                ansible: true,
            }),
            DuplicateKeys::Warn => {
                let diag = duplicate_warning(&message, value, self.objs[key].origin.as_ref());
                tack_diag::warn(&diag);
                self.warnings.push(YamlWarning {
                    message,
                    origin: self.objs[key].origin.clone(),
                    help: diag.help.clone(),
                    kind: YamlWarningKind::DuplicateKey,
                });
                Ok(())
            }
        }
    }

    /// `SafeConstructor.flatten_mapping`: merge keys replaced in place by the merged pairs.
    fn flatten_mapping(&mut self, node: NodeId) -> Result<()> {
        let mut merge: Vec<(NodeId, NodeId)> = Vec::new();
        let mut merged_keys: HashSet<KeyIdentity> = HashSet::new();
        let mut index = 0;
        loop {
            let Kind::Map(pairs) = &self.doc.nodes[node].kind else { return Ok(()) };
            let Some(&(key_node, value_node)) = pairs.get(index) else { break };
            match &self.doc.nodes[key_node].tag {
                Tag::Merge => {
                    if let Kind::Map(pairs) = &mut self.doc.nodes[node].kind {
                        pairs.remove(index);
                    }
                    let sources = match &self.doc.nodes[value_node].kind {
                        Kind::Map(_) => vec![value_node],
                        Kind::Seq(items) => items.clone(),
                        other => {
                            return Err(self.merge_error(
                                value_node,
                                format!(
                                    "expected a mapping or list of mappings for merging, but \
                                     found {}",
                                    other.id()
                                ),
                            ));
                        }
                    };
                    for source in sources {
                        let Kind::Map(_) = &self.doc.nodes[source].kind else {
                            let found = self.doc.nodes[source].kind.id();
                            return Err(self.merge_error(
                                source,
                                format!("expected a mapping for merging, but found {found}"),
                            ));
                        };
                        self.flatten_mapping(source)?;
                        if let Kind::Map(pairs) = &self.doc.nodes[source].kind {
                            for &pair in pairs {
                                if merged_keys.insert(self.key_identity(pair.0)) {
                                    merge.push(pair);
                                }
                            }
                        }
                    }
                }
                Tag::Other(name) if name.strip_prefix(YAML_PREFIX) == Some("value") => {
                    self.doc.nodes[key_node].tag = Tag::Str;
                    index += 1;
                }
                _ => index += 1,
            }
        }
        if !merge.is_empty()
            && let Kind::Map(pairs) = &mut self.doc.nodes[node].kind
        {
            merge.append(pairs);
            *pairs = merge;
        }
        Ok(())
    }

    /// PyYAML names the mapping as context but reports the offending node's mark.
    fn merge_error(&self, at: NodeId, problem: String) -> ConstructError {
        ConstructError::Marked {
            context: Some("while constructing a mapping"),
            problem,
            mark: self.doc.nodes[at].start,
            ansible: false,
        }
    }

    /// `id(key_node.value)` in PyYAML's merge de-duplication (see the module docs).
    fn key_identity(&self, key_node: NodeId) -> KeyIdentity {
        match &self.doc.nodes[key_node].kind {
            Kind::Scalar(value)
                if value.chars().count() <= 1 && value.chars().all(|c| (c as u32) < 256) =>
            {
                KeyIdentity::Shared(value.clone())
            }
            _ => KeyIdentity::Node(key_node),
        }
    }

    /// ansible's `!!omap`/`!!pairs`: a deprecated list of `(key, value)` tuples, kept here as
    /// two-item lists (what a tuple is to Jinja and to JSON).
    fn pairs(&mut self, node: NodeId, tag: &str, what: &'static str) -> Result<ObjId> {
        let help = match tag {
            "!!omap" => "Use a standard mapping instead, as key order is always preserved.",
            _ => "Use a standard mapping instead.",
        };
        self.deprecate(node, &format!("Use of the YAML `{tag}` tag is deprecated."), help);
        let context = if what == "pairs" {
            "while constructing pairs"
        } else {
            "while constructing an ordered map"
        };
        let marked = |problem: String, mark: Mark| ConstructError::Marked {
            context: Some(context),
            problem,
            mark,
            ansible: false,
        };
        let items = match &self.doc.nodes[node].kind {
            Kind::Seq(items) => items.clone(),
            other => {
                let start = self.doc.nodes[node].start;
                return Err(marked(
                    format!("expected a sequence, but found {}", other.id()),
                    start,
                ));
            }
        };
        let mut tuples = Vec::with_capacity(items.len());
        for sub in items {
            let sub_start = self.doc.nodes[sub].start;
            let (key_node, value_node) = match &self.doc.nodes[sub].kind {
                Kind::Map(pairs) if pairs.len() == 1 => pairs[0],
                Kind::Map(pairs) => {
                    let n = pairs.len();
                    return Err(marked(
                        format!("expected a single mapping item, but found {n} items"),
                        sub_start,
                    ));
                }
                other => {
                    return Err(marked(
                        format!("expected a mapping of length 1, but found {}", other.id()),
                        sub_start,
                    ));
                }
            };
            let key = self.construct_object(key_node, false)?;
            let value = self.construct_object(value_node, false)?;
            tuples.push(self.alloc(ObjValue::List(vec![key, value]), node));
        }
        Ok(self.alloc(ObjValue::List(tuples), node))
    }

    /// ansible's `_resolve_and_construct_object`: the node re-typed as if it were plain and
    /// untagged, built deeply.
    fn resolve_and_construct(&mut self, node: NodeId) -> Result<ObjId> {
        let tag = match &self.doc.nodes[node].kind {
            Kind::Scalar(value) => resolve_scalar(value),
            Kind::Seq(_) => Tag::Seq,
            Kind::Map(_) => Tag::Map,
        };
        let old_deep = self.deep;
        self.deep = true;
        let result = self.construct_tagged(node, &tag);
        self.deep = old_deep;
        result
    }

    fn vault(&mut self, node: NodeId, tag: &Tag) -> Result<ObjId> {
        let obj = self.resolve_and_construct(node)?;
        match &self.objs[obj].value {
            ObjValue::Scalar(Value::Str(text) | Value::Unsafe(text)) => {
                let value = Value::Vault(text.clone());
                Ok(self.alloc(ObjValue::Scalar(value), node))
            }
            _ => Err(ConstructError::Marked {
                context: None,
                problem: format!(
                    "the {} tag requires a string value",
                    crate::pyrepr::str_repr(&tag.name())
                ),
                mark: self.doc.nodes[node].start,
                ansible: true,
            }),
        }
    }

    fn deprecate(&mut self, node: NodeId, message: &str, help: &str) {
        let origin = self.origin(node);
        let diag = Diagnostic::at(message, Some(origin.clone())).with_help(help);
        tack_diag::deprecate(&diag, "2.23");
        self.warnings.push(YamlWarning {
            message: message.into(),
            origin: Some(origin),
            help: Some(help.into()),
            kind: YamlWarningKind::Deprecated { removed_in: "2.23" },
        });
    }
}

/// The duplicate-key warning as ansible's `Display.warning(obj=key)` shows it: an excerpt when
/// the key knows its file, the key's text under `Origin:` when it knows no file, and nothing for
/// `None` (which cannot carry a position in Python, like `True`/`False`, shown as
/// `Origin: <unknown>`).
fn duplicate_warning(message: &str, key: &Value, origin: Option<&Origin>) -> Diagnostic {
    const HELP: &str = "Using last defined value only.";
    match key {
        Value::Null => return Diagnostic::new(message).with_help(HELP),
        Value::Bool(_) => {}
        _ => {
            if let Some(origin) = origin.filter(|o| o.path.is_some()) {
                return Diagnostic::at(message, Some(origin.clone())).with_help(HELP);
            }
        }
    }
    let shown_origin = match (key, origin) {
        (Value::Bool(_), _) | (_, None) => "<unknown>".to_string(),
        (_, Some(origin)) => origin.to_string(),
    };
    // Without a file the context is text, not an excerpt; it is carried in the message so the
    // block renders exactly as ansible lays it out.
    let shown = tack_py::textwrap::shorten(&crate::pyrepr::str(key), 120);
    Diagnostic::new(format!("{message}\nOrigin: {shown_origin}\n\n{shown}")).with_help(HELP)
}

#[derive(Hash, PartialEq, Eq)]
enum KeyIdentity {
    Shared(String),
    Node(NodeId),
}

/// A Python dict's key lookup over constructed keys.
#[derive(Default)]
struct KeyIndex {
    positions: std::collections::HashMap<PyKey, usize, foldhash::fast::RandomState>,
}

impl KeyIndex {
    fn find_or_insert(&mut self, key: PyKey, pos: usize) -> Option<usize> {
        match self.positions.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(pos);
                None
            }
        }
    }
}

/// How deep a cycle (an alias inside the node it names: PyYAML builds an object that holds
/// itself) is unrolled into the tree: past the 400 levels of nesting a template reads of a
/// value, so a walk of the whole value (printing it, passing it to a module) fails with the
/// recursion error ansible's walk of the self-holding object gives, while a bounded read
/// (its length, an item a few levels down) gives what ansible's does; and within the depth
/// the loader takes of any document, which every thread's stack holds. Below that depth the
/// tree ends in `null`. (Python's JSON encoder reaches deeper than templates do: `to_json`
/// of such a value gives the unrolled text where ansible's runs out of recursion.)
const CYCLE_DEPTH: usize = 420;

/// Moves the object graph into an owned tree. An object used once is moved; one shared by
/// aliases is built once and copied at each further use, every copied node charged to the
/// expansion budget. A graph with a cycle is unrolled instead, each object copied wherever it
/// is reached, down to [`CYCLE_DEPTH`] (a cycle that doubles at each turn runs into the
/// budget, and is refused).
struct Materializer {
    objs: Vec<Obj>,
    /// How many containers (or the document) refer to each object.
    refs: Vec<u32>,
    shared: Vec<Option<(Node, usize)>>,
    budget: usize,
    cyclic: bool,
}

impl Materializer {
    fn new(objs: Vec<Obj>, root: ObjId, budget: usize, cyclic: bool) -> Materializer {
        let mut refs = vec![0u32; objs.len()];
        refs[root] += 1;
        for obj in &objs {
            match &obj.value {
                ObjValue::Scalar(_) => {}
                ObjValue::List(items) => items.iter().for_each(|&i| refs[i] += 1),
                ObjValue::Dict(entries) => entries.iter().for_each(|&(k, v)| {
                    refs[k] += 1;
                    refs[v] += 1;
                }),
            }
        }
        let shared = (0..objs.len()).map(|_| None).collect();
        Materializer { objs, refs, shared, budget, cyclic }
    }

    fn charge(&mut self, nodes: usize, obj: ObjId) -> Result<()> {
        let message = if self.cyclic {
            "tack refuses this YAML: it holds a node more than once inside itself (aliases inside \
             the node they name), which unrolled is more than a million nodes."
        } else {
            "tack refuses this YAML: its aliases expand to more than a million nodes."
        };
        self.budget =
            self.budget.checked_sub(nodes).ok_or_else(|| ConstructError::Unsupported {
                message: message.into(),
                mark: mark_of(self.objs[obj].origin.as_ref()),
            })?;
        Ok(())
    }

    /// The tree for `obj`, `depth` containers down, and its size in nodes.
    fn node(&mut self, obj: ObjId, depth: usize) -> Result<(Node, usize)> {
        if self.cyclic {
            return self.build(obj, depth);
        }
        if let Some((node, size)) = &self.shared[obj] {
            let (copy, size) = (node.clone(), *size);
            self.charge(size, obj)?;
            return Ok((copy, size));
        }
        let (node, size) = self.build(obj, depth)?;
        if self.refs[obj] > 1 {
            self.shared[obj] = Some((node.clone(), size));
        }
        Ok((node, size))
    }

    /// Builds `obj` once, moving its contents out (copying them, in a graph with a cycle);
    /// returns the node and its size in nodes.
    fn build(&mut self, obj: ObjId, depth: usize) -> Result<(Node, usize)> {
        self.charge(1, obj)?;
        let origin = self.objs[obj].origin.clone();
        let taken = if self.cyclic {
            self.objs[obj].value.clone()
        } else {
            std::mem::replace(&mut self.objs[obj].value, ObjValue::Scalar(Value::Null))
        };
        if depth > CYCLE_DEPTH && !matches!(taken, ObjValue::Scalar(_)) {
            return Ok((Node::new(Value::Null, origin), 1));
        }
        let mut size = 1;
        let value = match taken {
            ObjValue::Scalar(v) => v,
            ObjValue::List(items) => {
                let mut nodes = Vec::with_capacity(items.len());
                for i in items {
                    let (node, n) = self.node(i, depth + 1)?;
                    size += n;
                    nodes.push(node);
                }
                Value::Seq(nodes)
            }
            ObjValue::Dict(entries) => {
                let mut map = Mapping::new();
                for (k, v) in entries {
                    let (key, nk) = self.node(k, depth + 1)?;
                    let (value, nv) = self.node(v, depth + 1)?;
                    size += nk + nv;
                    map.push_new(key, value);
                }
                Value::Map(map)
            }
        };
        Ok((Node::new(value, origin), size))
    }
}

fn mark_of(origin: Option<&Origin>) -> Mark {
    let mut mark = Mark::default();
    if let Some(origin) = origin {
        mark.line = u64::from(origin.line.saturating_sub(1));
        mark.column = u64::from(origin.col.saturating_sub(1));
    }
    mark
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loads `text` on a thread with a host thread's stack in a release build (a debug
    /// build's frames are larger).
    fn load(text: &str) -> std::result::Result<Node, String> {
        let text = text.to_string();
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || {
                crate::load_single_with(&text, None, &crate::LoadOptions::default())
                    .map(|loaded| {
                        loaded.documents.into_iter().next().unwrap_or(Node::bare(Value::Null))
                    })
                    .map_err(|e| e.message)
            })
            .unwrap()
            .join()
            .unwrap()
    }

    /// The items of a sequence node (test helper).
    fn items(node: &Node) -> &[Node] {
        match &node.value {
            Value::Seq(items) => items,
            other => panic!("not a sequence: {other:?}"),
        }
    }

    #[test]
    fn an_alias_inside_the_node_it_names_is_unrolled_to_the_cycle_depth() {
        // A thread of the loader's own size: the tree is as deep as the cycle depth.
        let loaded = std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(|| {
                let doc = load("a: &a [1, *a]\nb: after\n").unwrap();
                let Value::Map(map) = &doc.value else { panic!("not a mapping") };
                let a = map.iter().next().unwrap().1.clone();
                let mut depth = 0;
                let mut node = &a;
                while let Value::Seq(_) = node.value {
                    assert_eq!(items(node)[0].value, Value::Int(1), "at depth {depth}");
                    node = &items(node)[1];
                    depth += 1;
                }
                assert_eq!(node.value, Value::Null);
                let b = map.iter().nth(1).unwrap().1.value.clone();
                (depth, b)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(loaded, (CYCLE_DEPTH, Value::Str("after".into())));
    }

    #[test]
    fn a_cycle_that_doubles_at_each_turn_is_refused_by_its_size() {
        let refused = load("n: &n {self: *n, again: *n}\n").unwrap_err();
        assert!(refused.contains("holds a node more than once inside itself"), "{refused}");
    }
    use crate::value::{TimeOfDay, Timestamp};

    #[test]
    fn a_key_without_a_file_is_shown_as_str() {
        // Measured: `ansible-playbook -e '{2001-12-14 21:59:43.10 -5: z, 2001-12-14 21:59:43.10
        // -5: w}'` shows the key's `str()` under its origin, not its `repr()`.
        let key = Value::Timestamp(Timestamp {
            year: 2001,
            month: 12,
            day: 14,
            time: Some(TimeOfDay {
                hour: 21,
                minute: 59,
                second: 43,
                microsecond: 100_000,
                utc_offset_minutes: Some(-300),
            }),
        });
        let origin = Origin { path: None, description: None, line: 1, col: 78 };
        let diag = duplicate_warning("Found duplicate mapping key X.", &key, Some(&origin));
        assert!(diag.message.ends_with("\n\n2001-12-14 21:59:43.100000-05:00"), "{}", diag.message);
    }
}
