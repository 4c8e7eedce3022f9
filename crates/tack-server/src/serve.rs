//! `tack serve`: the store opened, the first admin token made on the first start (printed
//! once), the queue's runner started, and the API served on the address asked for
//! (127.0.0.1 unless told otherwise).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Notify;

use crate::api::AppState;
use crate::runner::{RunnerConfig, run_queue};
use crate::store::{Store, StoreError};
use crate::tokens::Role;

pub struct ServeOptions {
    pub db_url: String,
    pub listen: SocketAddr,
    pub max_runs: usize,
    /// The `tack` binary each run is a child of.
    pub tack_exe: PathBuf,
    pub host: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
}

/// Everything the server answers: the API and the page, each response hardened, and a JSON
/// 404 for any other path.
pub fn app(state: AppState) -> axum::Router {
    crate::api::routes()
        .merge(crate::web::routes())
        .fallback(|| async { crate::api::no_route() })
        .layer(axum::middleware::map_response(crate::headers::harden))
        .with_state(state)
}

/// Serves [`app`] on `listener` until the process ends (a test serves a store it drives
/// itself this way, its clock in its hands).
pub async fn serve_app(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    axum::serve(listener, app(state)).await
}

/// Serves until the process is stopped. `first_token` receives the first admin token when
/// this start made it.
pub fn serve(options: ServeOptions, first_token: impl FnOnce(&str)) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let store = Store::open(&options.db_url).await?;
        if !store.has_tokens().await? {
            let (_, secret) = store.create_token("admin", Role::Admin).await?;
            first_token(&secret);
        }
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|source| ServeError::Listen { addr: options.listen, source })?;
        let addr = listener.local_addr()?;
        eprintln!("tack serve: listening on http://{addr}");
        let pid = i64::from(std::process::id());
        let config = Arc::new(RunnerConfig {
            tack_exe: options.tack_exe,
            db_url: options.db_url,
            max_runs: options.max_runs,
            controller: format!("{}:{pid}:{}", options.host, crate::store::new_run_id()),
            host: options.host,
            pid,
        });
        let wake = Arc::new(Notify::new());
        tokio::spawn(run_queue(store.clone(), config, wake.clone()));
        let clock = Arc::new(crate::schedule::SystemClock);
        tokio::spawn(crate::schedule::run_schedules(store.clone(), clock, wake.clone()));
        serve_app(listener, AppState { store, wake }).await?;
        Ok(())
    })
}
