//! Rendering a typical task's arguments (`benches/task_args.json`: a dozen templated
//! arguments with filters and a loop variable) once per loop item, as the executor does per
//! host. The same set is timed through ansible-core's templar by
//! `scripts/bench-ansible-templar.py`; both figures are in `docs/benchmarks.md`.
//!
//! Also a file lookup a role makes by a fact (`lookup('file', ansible_os_family ~ '.txt')`),
//! its terms host-named and so confined, beside the same lookup with written terms: what
//! marking the call and confining the file cost.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_yaml::{Mapping, Node};

struct Task {
    base: Scope,
    items: Vec<Node>,
    loop_var: String,
    args: Node,
}

fn load() -> Task {
    let text = include_str!("task_args.json");
    let doc = tack_yaml::load_one(text, None).expect("task_args.json is valid JSON");
    let map = doc.as_map().expect("a mapping at the top");
    let vars = map.get("vars").and_then(Node::as_map).expect("vars");
    let base = Scope::new().with_layer(Arc::new(Layer::from_mapping(vars, Provenance::Trusted)));
    let items = map.get("loop_items").and_then(Node::as_seq).expect("loop_items").to_vec();
    let loop_var = map.get("loop_var").and_then(Node::as_str).expect("loop_var").to_string();
    let args = map.get("args").expect("args").clone();
    Task { base, items, loop_var, args }
}

/// One render: the task's arguments for one loop item (the item's layer is pushed on the
/// shared scope, as the executor does per host and item).
fn render_one(templar: &Templar, task: &Task, item: &Node) -> usize {
    let mut layer = Layer::new();
    layer.insert(task.loop_var.clone(), item.clone(), Provenance::Trusted);
    let scope = task.base.with_layer(Arc::new(layer));
    let rendered = templar.render(&task.args, &scope).expect("the task's arguments render");
    rendered.value.as_map().map_or(0, Mapping::len)
}

fn bench(c: &mut Criterion) {
    let task = load();
    let templar = Templar::new();
    for item in &task.items {
        assert_eq!(render_one(&templar, &task, item), 14);
    }
    let mut next = 0;
    c.bench_function("task_args/one_render", |b| {
        b.iter(|| {
            next = (next + 1) % task.items.len();
            render_one(&templar, &task, &task.items[next])
        });
    });
}

/// `{{ lookup('file', NAME) }}` in a playbook directory holding `files/Debian.txt`, with a
/// fact from the host and a written name.
fn bench_lookup(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("files")).expect("files/");
    std::fs::write(dir.path().join("files/Debian.txt"), "debian\n").expect("a file");
    let mut loader = tack_loader::DataLoader::new(Default::default());
    loader.set_basedir(dir.path());
    let templar = Templar::with_loader(Arc::new(loader));
    let mut facts = Layer::new();
    let fact = Node::bare(tack_yaml::Value::Str("Debian".into()));
    facts.insert("ansible_os_family".to_string(), fact, Provenance::ManagedHost);
    let scope = Scope::new().with_layer(Arc::new(facts));
    for (name, source) in [
        ("lookup/file_named_by_a_fact", "{{ lookup('file', ansible_os_family ~ '.txt') }}"),
        ("lookup/file_written", "{{ lookup('file', 'Debian.txt') }}"),
    ] {
        let node = Node::bare(tack_yaml::Value::Str(source.into()));
        let out = templar.render(&node, &scope).expect("the lookup renders");
        assert_eq!(out.value.as_str(), Some("debian"));
        c.bench_function(name, |b| b.iter(|| templar.render(&node, &scope).map(|r| r.provenance)));
    }
}

/// The first read of a variable holding 500 strings written in a file (each with its place):
/// the binding becomes template data then, every string tagged as ansible tags what it
/// loads (`Origin`, `TrustedAsTemplate`). A fresh layer each time, as each host's and each
/// loop item's variables are converted once.
fn bench_first_read(c: &mut Criterion) {
    let text: String = (0..500).map(|i| format!("- value number {i}\n")).collect();
    let path: Arc<std::path::Path> = Arc::from(std::path::Path::new("/bench/vars.yml"));
    let doc = tack_yaml::load_one(&text, Some(path)).expect("a YAML list");
    let templar = Templar::new();
    let node = Node::bare(tack_yaml::Value::Str("{{ big | length }}".into()));
    c.bench_function("vars/first_read_500_written_strings", |b| {
        b.iter(|| {
            let mut layer = Layer::new();
            layer.insert("big".to_string(), doc.clone(), Provenance::Trusted);
            let scope = Scope::new().with_layer(Arc::new(layer));
            templar.render(&node, &scope).map(|r| r.provenance)
        })
    });
}

criterion_group!(benches, bench, bench_lookup, bench_first_read);
criterion_main!(benches);
