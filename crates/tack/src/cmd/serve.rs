//! `tack serve` and `tack token`: the run server, and the tokens that let people and programs
//! use it. The store is the same one `tack playbook --record` writes.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Subcommand};
use tack_server::tokens::Role;

/// The store used when `--db` is not given: `runs.db` in tack's data directory.
fn default_db() -> String {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    format!("sqlite://{}", base.join("tack/runs.db").display())
}

#[derive(ClapArgs, Debug)]
#[command(about = "Serve the REST API and web page that keep every run, and run incarnations")]
pub(crate) struct Args {
    /// The run store: sqlite://PATH (default: tack/runs.db in the user's data directory) or
    /// postgres://USER@HOST/DB, shared by several servers. From TACK_DB when not given: a
    /// URL with a password is then not on the command line, where `ps` shows it.
    #[arg(long = "db", value_name = "DB_URL", env = "TACK_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// The address to listen on.
    #[arg(long = "listen", value_name = "ADDR", default_value = "127.0.0.1:8626")]
    pub listen: SocketAddr,
    /// How many runs this server runs at once; more wait in the queue.
    #[arg(long = "max-runs", value_name = "N", default_value_t = 4)]
    pub max_runs: usize,
}

#[derive(ClapArgs, Debug)]
#[command(about = "Create, list and revoke the server's access tokens")]
pub(crate) struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Subcommand, Debug)]
pub(crate) enum TokenAction {
    /// Make a token and print it, alone, on stdout (it is shown only this once).
    Create {
        /// viewer (reads), operator (also starts and cancels runs) or admin (also manages
        /// incarnations and tokens).
        #[arg(long = "role", value_name = "ROLE")]
        role: String,
        /// A name to know the token by (who started a run shows it).
        #[arg(long = "name", value_name = "NAME")]
        name: Option<String>,
        #[arg(long = "db", value_name = "DB_URL", env = "TACK_DB", hide_env_values = true)]
        db: Option<String>,
    },
    /// List the tokens (never their secrets).
    List {
        #[arg(long = "db", value_name = "DB_URL", env = "TACK_DB", hide_env_values = true)]
        db: Option<String>,
    },
    /// Revoke a token by its id.
    Revoke {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long = "db", value_name = "DB_URL", env = "TACK_DB", hide_env_values = true)]
        db: Option<String>,
    },
}

/// The name this machine goes by, for who started a run and where it ran.
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = tack_server::serve::ServeOptions {
        db_url: args.db.unwrap_or_else(default_db),
        listen: args.listen,
        max_runs: args.max_runs,
        tack_exe: std::env::current_exe()?,
        host: hostname(),
    };
    tack_server::serve::serve(options, |token| {
        println!("The first admin token (shown only now; keep it):\n{token}");
    })?;
    Ok(ExitCode::SUCCESS)
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> anyhow::Result<T> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(f))
}

pub(crate) fn token(args: TokenArgs) -> anyhow::Result<ExitCode> {
    let open = |db: Option<String>| async move {
        tack_server::Store::open(&db.unwrap_or_else(default_db)).await
    };
    match args.action {
        TokenAction::Create { role, name, db } => {
            let Some(parsed) = Role::parse(&role) else {
                anyhow::bail!("the role {role:?} is not one of viewer, operator, admin");
            };
            let name = name.unwrap_or_else(|| parsed.as_str().to_string());
            let (_, secret) =
                block_on(async { open(db).await?.create_token(&name, parsed).await })??;
            println!("{secret}");
        }
        TokenAction::List { db } => {
            let tokens = block_on(async { open(db).await?.tokens().await })??;
            println!("{:<14} {:<9} {:<10} NAME", "ID", "ROLE", "STATE");
            for t in tokens {
                let state = if t.revoked_at.is_some() { "revoked" } else { "live" };
                println!("{:<14} {:<9} {:<10} {}", t.id, t.role.as_str(), state, t.name);
            }
        }
        TokenAction::Revoke { id, db } => {
            let revoked = block_on(async { open(db).await?.revoke_token(&id).await })??;
            if !revoked {
                anyhow::bail!("no live token has the id {id:?} (tack token list shows them)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
