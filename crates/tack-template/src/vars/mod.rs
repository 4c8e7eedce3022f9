//! The variables a render sees: layered [`Scope`]s of [`Binding`]s, each tagged with the
//! [`Provenance`] of its value, and the set of provenances a render read ([`ProvenanceSet`]).
//!
//! A scope is a stack of shared layers (`Arc<Layer>`), looked up from the top; building a
//! task's scope pushes layers, it never copies variables. A binding's value is converted to
//! template data once, the first time any render reads it, and shared by every later render
//! (see [`crate::vars::data`]). Precedence (which layer wins) is the executor's business: this
//! module only keeps the order it is given.
//!
//! This module must not render anything itself: rendering a template-valued variable belongs
//! to the engine (`crate::engine`), which this module's objects call back into.

pub(crate) mod data;
pub(crate) mod objects;
pub(crate) mod str_tags;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use tack_yaml::{Mapping, Node, Value};

/// Where a variable's value came from, as far as trusting it is concerned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// Written by the user: playbook, role, inventory, vars files, extra vars.
    Trusted,
    /// Said by a managed host, or computed from something it said: facts, registered
    /// results, `set_fact` values derived from either.
    ManagedHost,
    /// Plan mode: the output of a task that did not run, so its value is not known.
    Unavailable { producer: Arc<str> },
}

/// The union of the provenances a render read. Trusted reads add nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProvenanceSet {
    managed_host: bool,
    unavailable: BTreeSet<Arc<str>>,
    /// The render decrypted a `!vault` value: what it made may hold a secret.
    sealed: bool,
}

impl ProvenanceSet {
    pub fn new() -> ProvenanceSet {
        ProvenanceSet::default()
    }

    pub fn add(&mut self, provenance: &Provenance) {
        match provenance {
            Provenance::Trusted => {}
            Provenance::ManagedHost => self.managed_host = true,
            Provenance::Unavailable { producer } => {
                self.unavailable.insert(producer.clone());
            }
        }
    }

    pub fn extend(&mut self, other: &ProvenanceSet) {
        self.managed_host |= other.managed_host;
        self.sealed |= other.sealed;
        self.unavailable.extend(other.unavailable.iter().cloned());
    }

    /// Whether the render read a `!vault` value (its result may hold, or be made from, a
    /// secret; whoever shows it masks it).
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    pub(crate) fn mark_sealed(&mut self) {
        self.sealed = true;
    }

    /// Whether anything read came from (or was computed from) a managed host.
    pub fn is_managed_host(&self) -> bool {
        self.managed_host
    }

    /// Whether everything read was written by the user.
    pub fn is_trusted(&self) -> bool {
        !self.managed_host && self.unavailable.is_empty()
    }

    /// The producers (task names or ids, as the executor named them) of unavailable values
    /// read, in sorted order.
    pub fn unavailable(&self) -> impl Iterator<Item = &str> {
        self.unavailable.iter().map(|s| &**s)
    }

    pub fn has_unavailable(&self) -> bool {
        !self.unavailable.is_empty()
    }

    /// The provenance a value computed from everything in this set gets: unavailable wins
    /// (its value is not known), then managed host, else trusted.
    pub fn derived(&self) -> Provenance {
        if let Some(first) = self.unavailable.iter().next() {
            return Provenance::Unavailable { producer: first.clone() };
        }
        if self.managed_host { Provenance::ManagedHost } else { Provenance::Trusted }
    }
}

/// A variable whose use ansible deprecates (top-level facts, say): reading it prints
/// ansible's deprecation warning, pointing at the template that read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Deprecation {
    pub message: String,
    /// The ansible-core version the feature goes away in (`2.24`).
    pub removed_in: String,
    pub help: Option<String>,
}

impl Deprecation {
    /// ansible's deprecation of the `vars` dictionary, printed whenever a template reads it.
    pub fn vars_dictionary() -> Deprecation {
        Deprecation {
            message: "The internal \"vars\" dictionary is deprecated.".into(),
            removed_in: "2.24".into(),
            help: Some("Use the `vars` and `varnames` lookups instead.".into()),
        }
    }

    /// ansible's deprecation of facts injected as top-level variables (`ansible_os_family`
    /// beside `ansible_facts.os_family`), while `INJECT_FACTS_AS_VARS` is left at its default.
    pub fn top_level_fact() -> Deprecation {
        Deprecation {
            message: "INJECT_FACTS_AS_VARS default to `True` is deprecated, top-level facts will \
                      not be auto injected after the change."
                .into(),
            removed_in: "2.24".into(),
            help: Some("Use `ansible_facts[\"fact_name\"]` (no `ansible_` prefix) instead.".into()),
        }
    }

    pub(crate) fn emit(&self) {
        if !crate::engine::active::first_deprecation(&self.message) {
            return;
        }
        let mut diag = tack_diag::Diagnostic::at(
            self.message.clone(),
            crate::engine::active::current_origin(),
        );
        diag.help = self.help.clone();
        tack_diag::deprecate(&diag, &self.removed_in);
    }
}

/// One variable: its loaded value and where that value came from.
pub struct Binding {
    node: Node,
    provenance: Provenance,
    deprecation: Option<Deprecation>,
    /// Values inside this one a module tagged `Deprecated` (a registered result's): reading
    /// one warns.
    deprecated_values: Option<Arc<[tack_yaml::tagged::DeprecatedAt]>>,
    /// Values inside this one that are the user's though the whole is not (see
    /// [`Binding::with_trusted_at`]).
    trusted_at: Option<Arc<[Vec<tack_yaml::tagged::PathStep>]>>,
    /// Where the variable's name was written, when it came from a file or the command line
    /// (ansible's warnings about a variable point there).
    key_origin: Option<tack_diag::Origin>,
    /// The value as template data, made on first read and shared by every render after.
    data: OnceLock<data::Data>,
    /// Whether the value holds a secret (see [`Binding::holds_secret`]), as last asked: the
    /// secrets' generation it was asked at, shifted left, with the answer in the low bit; 0
    /// before it is first asked.
    sealed: std::sync::atomic::AtomicU64,
}

impl Binding {
    pub fn new(node: Node, provenance: Provenance) -> Binding {
        Binding {
            node,
            provenance,
            deprecation: None,
            deprecated_values: None,
            trusted_at: None,
            key_origin: None,
            data: OnceLock::new(),
            sealed: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether the value holds a secret the run has seen in clear (a whole-file vault's
    /// value, a value derived from a secret: `tack_vault::sealed`), so that the render
    /// reading it is sealed as one decrypting an inline `!vault` value is. Asked again only
    /// when a secret was learned since.
    pub(crate) fn holds_secret(&self) -> bool {
        use std::sync::atomic::Ordering;
        let generation = tack_vault::sealed::generation();
        if generation == 0 {
            return false;
        }
        let cached = self.sealed.load(Ordering::Relaxed);
        if cached >> 1 == generation {
            return cached & 1 == 1;
        }
        let answer = node_holds_secret(&self.node);
        self.sealed.store((generation << 1) | u64::from(answer), Ordering::Relaxed);
        answer
    }

    /// This binding, its name written at `origin`.
    pub fn with_key_origin(mut self, origin: Option<tack_diag::Origin>) -> Binding {
        self.key_origin = origin;
        self
    }

    pub fn key_origin(&self) -> Option<&tack_diag::Origin> {
        self.key_origin.as_ref()
    }

    /// This binding, printing `deprecation` whenever a template reads it.
    pub fn with_deprecation(mut self, deprecation: Deprecation) -> Binding {
        self.deprecation = Some(deprecation);
        self
    }

    /// This binding, the values at the given places inside it tagged `Deprecated`.
    pub fn with_deprecated_values(
        mut self,
        tagged: Vec<tack_yaml::tagged::DeprecatedAt>,
    ) -> Binding {
        self.deprecated_values = (!tagged.is_empty()).then(|| tagged.into());
        self
    }

    /// This binding, the values at the given places inside it trusted as the user's though
    /// the whole is not: what a registered result carries of the playbook (a loop's item),
    /// or a value whose strings say themselves whether they are trusted (`!unsafe` where
    /// not; the empty path names the whole value). Ansible tags each string; this names the
    /// places of the ones that stay trusted inside a value a host's data is part of. Its
    /// provenance is unchanged, so what it read is still said of what is made from it.
    pub fn with_trusted_at(mut self, paths: Vec<Vec<tack_yaml::tagged::PathStep>>) -> Binding {
        self.trusted_at = (!paths.is_empty()).then(|| paths.into());
        self
    }

    pub fn deprecation(&self) -> Option<&Deprecation> {
        self.deprecation.as_ref()
    }

    pub fn node(&self) -> &Node {
        &self.node
    }

    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    pub(crate) fn data(&self) -> &data::Data {
        self.data.get_or_init(|| {
            let mut data = data::Data::from_node(&self.node, self.trusts_templates());
            for path in self.trusted_at.iter().flat_map(|t| t.iter()) {
                data.trust_at(path, &self.node);
            }
            for tagged in self.deprecated_values.iter().flat_map(|t| t.iter()) {
                data.tag_deprecated(&tagged.path, &tagged.deprecated);
            }
            data
        })
    }

    /// Strings from a managed host are never templates, whatever they contain (ansible does
    /// not trust them); user-written strings are, unless written `!unsafe`.
    fn trusts_templates(&self) -> bool {
        self.provenance == Provenance::Trusted
    }
}

/// Whether any value in `node` came from a whole-file vault or holds a known secret.
fn node_holds_secret(node: &Node) -> bool {
    if let Some(path) = node.origin.as_ref().and_then(|o| o.path.as_deref())
        && tack_vault::sealed::is_vaulted_file(path)
    {
        return true;
    }
    match &node.value {
        Value::Str(text) => tack_vault::sealed::holds_secret(text),
        Value::Seq(items) => items.iter().any(node_holds_secret),
        Value::Map(map) => map.iter().any(|(_, v)| node_holds_secret(v)),
        _ => false,
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("node", &self.node)
            .field("provenance", &self.provenance)
            .finish()
    }
}

/// A set of variables at one precedence level (play vars, a host's facts, ...).
#[derive(Debug, Default)]
pub struct Layer {
    vars: IndexMap<String, Arc<Binding>>,
    /// Whether a binding here warns when read (see [`Scope::has_deprecated`]).
    deprecated: bool,
}

impl Layer {
    pub fn new() -> Layer {
        Layer::default()
    }

    /// Every string key of `vars` as a binding with `provenance`. Non-string keys cannot be
    /// variable names and are skipped, as ansible's variable manager skips them.
    pub fn from_mapping(vars: &Mapping, provenance: Provenance) -> Layer {
        let mut layer = Layer::new();
        for (k, v) in vars.iter() {
            if let Some(name) = k.as_str() {
                let binding = Binding::new(v.clone(), provenance.clone());
                layer.insert_binding(name, Arc::new(binding.with_key_origin(k.origin.clone())));
            }
        }
        layer
    }

    /// Adds a variable whose use is deprecated (see [`Deprecation`]).
    pub fn insert_deprecated(
        &mut self,
        name: impl Into<String>,
        value: Node,
        provenance: Provenance,
        deprecation: Deprecation,
    ) {
        let binding = Binding::new(value, provenance).with_deprecation(deprecation);
        self.deprecated = true;
        self.vars.insert(name.into(), Arc::new(binding));
    }

    pub fn insert(&mut self, name: impl Into<String>, value: Node, provenance: Provenance) {
        self.vars.insert(name.into(), Arc::new(Binding::new(value, provenance)));
    }

    /// Adds an existing binding (for instance one read from another scope).
    pub fn insert_binding(&mut self, name: impl Into<String>, binding: Arc<Binding>) {
        self.deprecated |= binding.deprecation().is_some();
        self.vars.insert(name.into(), binding);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Binding>> {
        self.vars.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// Every variable with its binding, in the layer's order.
    pub fn bindings(&self) -> impl Iterator<Item = (&str, &Arc<Binding>)> {
        self.vars.iter().map(|(k, b)| (k.as_str(), b))
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

/// Other hosts' variables, computed on demand by whoever owns the inventory and the facts
/// (the executor). `hostvars` in a template is built on this.
pub trait HostVars: Send + Sync {
    /// Every inventory host name, in inventory order.
    fn hosts(&self) -> Vec<String>;
    /// The variables `hostvars[host]` shows, or `None` for a host not in the inventory.
    fn host_scope(&self, host: &str) -> Option<Scope>;
}

/// The variables visible to one render: layers looked up from the top (the last pushed wins).
/// Cloning is one reference-count increment.
#[derive(Clone, Default)]
pub struct Scope {
    inner: Arc<ScopeInner>,
}

#[derive(Clone, Default)]
struct ScopeInner {
    layers: Vec<Arc<Layer>>,
    /// Below every layer: names only read where no layer has them (a play context's
    /// connection names), replaced rather than stacked (`with_fallback`).
    fallback: Option<Arc<Layer>>,
    hostvars: Option<Arc<dyn HostVars>>,
}

impl Scope {
    pub fn new() -> Scope {
        Scope::default()
    }

    /// A scope of one trusted layer: the variables a loader-time render sees.
    pub fn from_mapping(vars: &Mapping) -> Scope {
        Scope::new().with_layer(Arc::new(Layer::from_mapping(vars, Provenance::Trusted)))
    }

    /// This scope with `layer` on top.
    pub fn with_layer(&self, layer: Arc<Layer>) -> Scope {
        let mut inner = (*self.inner).clone();
        inner.layers.push(layer);
        Scope { inner: Arc::new(inner) }
    }

    /// This scope with one more variable on top (a loop variable, say).
    /// This scope with `name` bound as `binding` says.
    pub fn with_binding(&self, name: &str, binding: Binding) -> Scope {
        let mut layer = Layer::new();
        layer.insert_binding(name, Arc::new(binding));
        self.with_layer(Arc::new(layer))
    }

    pub fn with_var(&self, name: &str, value: Node, provenance: Provenance) -> Scope {
        let mut layer = Layer::new();
        layer.insert(name, value, provenance);
        self.with_layer(Arc::new(layer))
    }

    /// This scope with `hostvars` answered by `hostvars`.
    pub fn with_hostvars(&self, hostvars: Arc<dyn HostVars>) -> Scope {
        let mut inner = (*self.inner).clone();
        inner.hostvars = Some(hostvars);
        Scope { inner: Arc::new(inner) }
    }

    /// This scope with `layer` under every layer, in place of any it had there.
    pub fn with_fallback(&self, layer: Arc<Layer>) -> Scope {
        let mut inner = (*self.inner).clone();
        inner.fallback = Some(layer);
        Scope { inner: Arc::new(inner) }
    }

    pub fn hostvars(&self) -> Option<&Arc<dyn HostVars>> {
        self.inner.hostvars.as_ref()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Binding>> {
        self.layers().rev().find_map(|layer| layer.get(name))
    }

    /// Whether any variable here warns when read (a fact read as a top-level variable): a
    /// render of a scope without one has no deprecation to raise for the names it reads.
    pub fn has_deprecated(&self) -> bool {
        self.layers().any(|layer| layer.deprecated)
    }

    /// [`Scope::get`] without the fallback layer: what the variables themselves say (the
    /// fallback holds what ansible's play context fills in only after it has read them).
    pub fn get_own(&self, name: &str) -> Option<&Arc<Binding>> {
        self.inner.layers.iter().rev().find_map(|layer| layer.get(name))
    }

    /// The layers, bottom (lowest precedence, the fallback) first.
    pub fn layers(&self) -> impl DoubleEndedIterator<Item = &Arc<Layer>> {
        self.inner.fallback.iter().chain(self.inner.layers.iter())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every visible name once, bottom layer first, in each layer's order.
    pub fn names(&self) -> Vec<&str> {
        let mut seen = indexmap::IndexSet::new();
        for layer in self.layers() {
            for name in layer.names() {
                seen.insert(name);
            }
        }
        seen.into_iter().collect()
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("layers", &self.inner.layers.len())
            .field("names", &self.names())
            .finish()
    }
}

impl From<&Mapping> for Scope {
    fn from(vars: &Mapping) -> Scope {
        Scope::from_mapping(vars)
    }
}
