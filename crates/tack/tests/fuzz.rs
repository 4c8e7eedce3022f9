//! Fuzzing on stable Rust: each parser a user's or a host's bytes reach (the YAML loader, the
//! template engine, the INI inventory parser, the agent protocol's decoder, `from_json`'s
//! decoder) is fed its seed corpus (`tests/fuzz/<target>/`) and mutations of it. Any error
//! is fine; a panic is a finding (the test fails, naming the input, which is written to
//! `target/fuzz-findings/`), and a stack overflow or an abort fails it by ending the process.
//! An input that runs longer than `TACK_FUZZ_INPUT_SECONDS` (20) is a finding as well; with
//! `TACK_FUZZ_SAVE_EACH` set, each input is written to `target/fuzz-findings/current` before
//! it runs (to name the one that overflowed the stack).
//!
//! CI runs a short pass (`TACK_FUZZ_ITERATIONS`, 2,000 inputs per target by default); a long
//! run is the same test with more, its figures in `docs/reliability.md`:
//!
//!     TACK_FUZZ_ITERATIONS=200000 TACK_FUZZ_SEED=7 cargo test --release -p tack --test fuzz
//!
//! The mutator is deterministic for a seed, so a finding is reproduced by its seed alone.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// xorshift64*: the inputs depend on the seed only.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Bytes that matter to the formats fuzzed, tried more often than chance would.
const INTERESTING: &[&[u8]] = &[
    b"{{",
    b"}}",
    b"{%",
    b"%}",
    b"[",
    b"]",
    b"{",
    b"}",
    b"(",
    b")",
    b":",
    b"- ",
    b"&a ",
    b"*a",
    b"!!",
    b"!vault |",
    b"\n",
    b"\t",
    b"\"",
    b"'",
    b"\\u",
    b"\\",
    b"|",
    b">",
    b"=",
    b",",
    b"0x",
    b"1e309",
    b"-",
    b"\xff",
    b"\xc3\xa9",
    b"\x00",
    b"[all:vars]",
    b"[g:children]",
    b"~",
];

fn mutate(rng: &mut Rng, seed: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(7) {
            0 if !data.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(data.len());
                data.drain(at.min(data.len() - 1)..end);
            }
            1 => {
                let byte = (rng.next() & 0xff) as u8;
                data.insert(at, byte);
            }
            2 => {
                let token = INTERESTING[rng.below(INTERESTING.len())];
                data.splice(at..at, token.iter().copied());
            }
            3 if !data.is_empty() => {
                // A stretch repeated: nesting and long chains.
                let start = rng.below(data.len());
                let end = (start + 1 + rng.below(8)).min(data.len());
                let piece = data[start..end].to_vec();
                for _ in 0..rng.below(64) {
                    data.splice(start..start, piece.iter().copied());
                }
            }
            4 => {
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len());
                let end = (from + rng.below(64)).min(other.len());
                data.splice(at..at, other[from..end].iter().copied());
            }
            5 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            _ => data.truncate(at),
        }
    }
    data
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz").join(target);
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    files.sort();
    files.iter().filter_map(|f| std::fs::read(f).ok()).collect()
}

fn iterations() -> usize {
    std::env::var("TACK_FUZZ_ITERATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000)
}

/// Feeds `target` its seeds and mutations of them; a panic fails the test with the input.
fn fuzz(name: &str, seeds: Vec<Vec<u8>>, target: impl Fn(&[u8]) + Sync) {
    // On a stack the size of the main thread's (8 MiB), where tack loads files and renders
    // the controller's templates; a test thread's 2 MiB would find depths tack never meets.
    std::thread::scope(|scope| {
        let run = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(scope, || fuzz_here(name, seeds, &target))
            .expect("the fuzzing thread starts");
        if let Err(panic) = run.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

fn fuzz_here(name: &str, seeds: Vec<Vec<u8>>, target: &(impl Fn(&[u8]) + Sync)) {
    assert!(!seeds.is_empty(), "{name}: no seed corpus");
    let seed = std::env::var("TACK_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1u64);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let watch = Watchdog::start(name, seed);
    // The engine's panic boundary keeps quiet about panics it catches; ours are findings.
    for (n, input) in seeds
        .iter()
        .cloned()
        .chain((0..iterations()).map(|_| {
            let base = &seeds[rng.below(seeds.len())];
            mutate(&mut rng, base, &seeds)
        }))
        .enumerate()
    {
        watch.begin(n, &input);
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let out = finding(&format!("{name}-{seed}-{n}"), &input);
            panic!("{name}: input {n} (seed {seed}) panicked; it is in {}", out.display());
        }
    }
    watch.stop();
}

/// Writes `input` to `target/fuzz-findings/<file>`; its path.
fn finding(file: &str, input: &[u8]) -> PathBuf {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-findings").join(file);
    let _ = std::fs::create_dir_all(out.parent().unwrap());
    let _ = std::fs::write(&out, input);
    out
}

/// How long one input may take (`TACK_FUZZ_INPUT_SECONDS`, 20 by default): one that takes
/// longer is a finding too (a parser or template that hangs on some input takes a run down
/// as surely as a panic), written out before the process is ended, since the thread running
/// it cannot be stopped.
struct Watchdog {
    state: Arc<(AtomicUsize, Mutex<Vec<u8>>, AtomicBool)>,
}

impl Watchdog {
    fn start(name: &str, seed: u64) -> Watchdog {
        let limit = std::env::var("TACK_FUZZ_INPUT_SECONDS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(20u64);
        let state = Arc::new((AtomicUsize::new(0), Mutex::new(Vec::new()), AtomicBool::new(false)));
        let watched = state.clone();
        let name = name.to_string();
        std::thread::spawn(move || {
            let (counter, current, done) = &*watched;
            let mut last = usize::MAX;
            let mut since = std::time::Instant::now();
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let now = counter.load(Ordering::Relaxed);
                if now != last {
                    (last, since) = (now, std::time::Instant::now());
                } else if since.elapsed().as_secs() >= limit {
                    let input = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let n = now.wrapping_sub(1);
                    let out = finding(&format!("{name}-{seed}-{n}-slow"), &input);
                    eprintln!(
                        "{name}: input {n} (seed {seed}) ran over {limit} s; it is in {}",
                        out.display()
                    );
                    std::process::exit(1);
                }
            }
        });
        Watchdog { state }
    }

    fn begin(&self, n: usize, input: &[u8]) {
        // An overflowed stack ends the process with no word of the input: with
        // `TACK_FUZZ_SAVE_EACH` set, each input is written out before it runs, so the last one
        // written is the one that ended it.
        if std::env::var_os("TACK_FUZZ_SAVE_EACH").is_some() {
            finding("current", input);
        }
        let (counter, current, _) = &*self.state;
        *current.lock().unwrap_or_else(|e| e.into_inner()) = input.to_vec();
        counter.store(n + 1, Ordering::Relaxed);
    }

    fn stop(&self) {
        self.state.2.store(true, Ordering::Relaxed);
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_yaml_loader_never_panics() {
    fuzz("yaml", corpus("yaml"), |bytes| {
        let _ = tack_yaml::load_all(&text(bytes), None);
    });
}

#[test]
fn the_template_engine_never_panics() {
    let templar = tack_template::Templar::new();
    let mut vars = tack_yaml::Mapping::new();
    vars.insert(
        tack_yaml::Node::bare(tack_yaml::Value::Str("x".into())),
        tack_yaml::Node::bare(tack_yaml::Value::Int(3)),
    );
    let scope = tack_template::Scope::from_mapping(&vars);
    // One template a line: each line of the corpus is a seed of its own.
    let seeds: Vec<Vec<u8>> = corpus("template")
        .iter()
        .flat_map(|file| file.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect::<Vec<_>>())
        .filter(|line| !line.is_empty())
        .collect();
    fuzz("template", seeds, |bytes| {
        let _ = templar.render_str(&text(bytes), &scope);
    });
}

#[test]
fn the_ini_inventory_parser_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let loader = tack_loader::DataLoader::new(Default::default());
    let path = dir.path().join("hosts");
    fuzz("inventory_ini", corpus("inventory_ini"), |bytes| {
        std::fs::write(&path, bytes).unwrap();
        let source = [path.display().to_string()];
        let _ = tack_inventory::Inventory::load(&loader, &source, Default::default());
    });
}

#[test]
fn the_protocol_decoder_never_panics() {
    use tack_protocol::{FrameReader, Message, encode_message};
    let mut args = serde_json::Map::new();
    args.insert("_raw_params".into(), "echo hi".into());
    let messages = [
        Message::Hello { protocol: tack_protocol::PROTOCOL_VERSION, max_frame: 1 << 20 },
        Message::ExecCommand { id: 7, cmd: "uname -a".into(), cwd: "/".into() },
        Message::ModuleResult { id: 7, result: args.clone() },
        Message::Bye,
    ];
    let mut seeds = Vec::new();
    let mut stream = Vec::new();
    for message in &messages {
        let mut frame = Vec::new();
        encode_message(message, &mut frame, 1 << 20).unwrap();
        stream.extend_from_slice(&frame);
        seeds.push(frame);
    }
    seeds.push(stream);
    fuzz("protocol", seeds, |bytes| {
        let mut reader = FrameReader::new(bytes);
        for _ in 0..8 {
            match reader.recv_message() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    });
}

#[test]
fn the_json_decoder_never_panics() {
    fuzz("json", corpus("json"), |bytes| {
        let _ = tack_yaml::pyjson::loads(&text(bytes), None);
    });
}
