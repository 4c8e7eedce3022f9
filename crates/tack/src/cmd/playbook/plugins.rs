//! The run's Python template plugins: where they are (the playbook and role directories the
//! loader saw, then the configured paths) and the worker that runs them, when there are any;
//! and what the run's Python action plugins' workers start with.

use std::path::PathBuf;
use std::sync::Arc;

use tack_actions::python_plugins::{PluginPaths, PluginWorker};
use tack_diag::Diagnostic;
use tack_playbook::Loader;

use crate::session::Session;

pub(super) fn worker(
    loader: &Loader<'_>,
    session: &Session,
    playbooks: &[PathBuf],
) -> Result<Arc<PluginWorker>, Diagnostic> {
    let mut jinja = session.config.filter_plugin_path();
    jinja.extend(session.config.test_plugin_path());
    let cwd = std::env::current_dir().unwrap_or_default();
    let basedir = playbooks
        .first()
        .and_then(|p| tack_py::path::normpath(&cwd.join(p)).parent().map(PathBuf::from))
        .unwrap_or(cwd);
    tack_actions::python_actions::configure(tack_actions::python_actions::Setup {
        config_file: session.config.config_file().map(PathBuf::from),
        basedir: basedir.clone(),
        collections: loader.collection_roots().named().to_vec(),
        dirs: loader.plugin_dirs(),
    });
    tack_actions::python_connection::configure(tack_actions::python_connection::Setup {
        config_file: session.config.config_file().map(PathBuf::from),
        dirs: loader.plugin_dirs(),
        collections: loader.collection_roots().named().to_vec(),
    });
    let paths = PluginPaths {
        dirs: loader.plugin_dirs(),
        jinja,
        lookup: session.config.lookup_plugin_path(),
        collections: loader.collection_roots().named().to_vec(),
        basedir,
        config_file: session.config.config_file().map(PathBuf::from),
    };
    PluginWorker::for_run(paths).map_err(|e| Diagnostic::new(e.to_string()))
}
