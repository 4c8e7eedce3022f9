//! Values inside a loaded value that carry ansible's `Deprecated` tag, named by where they
//! sit: a module can tag any value of its result, and reading that value from a template is
//! what ansible warns about. The value itself stays plain in the [`crate::Node`] tree (what
//! every consumer of a result reads); the tags travel beside it, to the variable that keeps it.

use std::sync::Arc;

/// One step from a value to a value inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    Key(String),
    Index(usize),
}

/// A tagged value: where it sits, and its deprecation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeprecatedAt {
    pub path: Vec<PathStep>,
    pub deprecated: Arc<tack_diag::Deprecated>,
}

impl DeprecatedAt {
    /// The same value, seen from a container that holds this one's root at `step`.
    pub fn under(&self, step: PathStep) -> DeprecatedAt {
        let mut path = Vec::with_capacity(self.path.len() + 1);
        path.push(step);
        path.extend(self.path.iter().cloned());
        DeprecatedAt { path, deprecated: self.deprecated.clone() }
    }
}
