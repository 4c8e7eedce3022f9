//! Rendering a typical task's arguments (`benches/task_args.json`: a dozen templated
//! arguments with filters and a loop variable) once per loop item, as the executor does per
//! host. The same set is timed through ansible-core's templar by
//! `scripts/bench-ansible-templar.py`; both figures are in `docs/benchmarks.md`.

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

criterion_group!(benches, bench);
criterion_main!(benches);
