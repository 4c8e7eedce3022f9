//! A play of templated tasks on 20 hosts, run with the default callback alone and wrapped by
//! the `--events` callback, whose `task_start` shows every host's rendered input: the gap
//! between the two is what showing the input costs (the run reuses the input's render, so
//! each host's arguments are rendered once either way). The last case holds 200 secrets, so
//! every value read is looked through for them and every text written is masked.

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tack_engine::{RunContext, RunFacts};
use tack_inventory::{Inventory, InventoryOptions};
use tack_loader::DataLoader;
use tack_playbook::tags::TagFilter;
use tack_playbook::{LoadOptions, Loader, Playbook};
use tack_report::Callback;
use tack_report::callback::default::DefaultCallback;
use tack_report::callback::events::EventsCallback;
use tack_template::Templar;
use tack_vault::VaultSecrets;
use tack_yaml::Mapping;

const HOSTS: usize = 20;
const TASKS: usize = 5;

fn write_project(root: &Path) {
    let mut inventory = String::from("[web]\n");
    for i in 0..HOSTS {
        inventory.push_str(&format!("web{i:02} ansible_connection=local colour=c{i} size={i}\n"));
    }
    std::fs::write(root.join("inv"), inventory).expect("inventory written");
    let mut play = String::from(
        "- hosts: web\n  gather_facts: false\n  vars:\n    base: /srv/app\n    names: [a, b, c, d]\n  tasks:\n",
    );
    for t in 0..TASKS {
        play.push_str(&format!("    - name: task {t}\n      debug:\n        msg:\n"));
        for a in 0..12 {
            play.push_str(&format!(
                "          k{a}: \"{{{{ base }}}}/{{{{ inventory_hostname | upper }}}}/{{{{ colour }}}}-{{{{ (size | int) * {a} }}}}-{{{{ names | join(',') }}}}\"\n"
            ));
        }
    }
    std::fs::write(root.join("site.yml"), play).expect("playbook written");
}

struct Project {
    _dir: tempfile::TempDir,
    loader: Arc<DataLoader>,
    inventory: Inventory,
    playbooks: Vec<Playbook>,
    options: LoadOptions,
}

fn project() -> Project {
    let dir = tempfile::tempdir().expect("temporary directory");
    write_project(dir.path());
    let loader = Arc::new(DataLoader::new(VaultSecrets::new(Vec::new())));
    let sources = vec![dir.path().join("inv").to_string_lossy().into_owned()];
    let inventory =
        Inventory::load(&loader, &sources, InventoryOptions::default()).expect("inventory");
    let options = LoadOptions { invalid_task_attribute_failed: true, ..Default::default() };
    let playbooks = {
        let files = Loader::new(&*loader, &options);
        vec![files.load_playbook(&dir.path().join("site.yml")).expect("playbook")]
    };
    Project { _dir: dir, loader, inventory, playbooks, options }
}

fn run_with(project: &Project, callback: &mut dyn Callback) {
    let files = Loader::new(&*project.loader, &project.options);
    let templar = Templar::with_loader(project.loader.clone());
    let extra_vars = Mapping::new();
    let tags = TagFilter::from_cli(&[], &[]);
    let ctx = RunContext {
        inventory: &project.inventory,
        loader: &project.loader,
        templar: &templar,
        extra_vars: &extra_vars,
        tags: &tags,
        tasks: &files,
        facts: RunFacts { forks: 1, ..Default::default() },
        start_at: None,
        force_handlers: false,
        links: &tack_links::Links::new(&tack_links::LocalOnly),
        pending: Default::default(),
        fact_cache: Default::default(),
    };
    tack_engine::run(&ctx, &project.playbooks, callback).expect("the play runs");
}

fn bench(c: &mut Criterion) {
    let project = project();
    let mut group = c.benchmark_group("events");
    group.sample_size(10);
    group.bench_function("default_callback", |b| {
        b.iter(|| {
            let mut callback = DefaultCallback::new(Vec::new(), 79);
            run_with(&project, &mut callback);
        })
    });
    group.bench_function("events_callback", |b| {
        b.iter(|| {
            let mut callback =
                EventsCallback::new(Vec::new(), DefaultCallback::new(Vec::new(), 79));
            run_with(&project, &mut callback);
            callback.finish().expect("events written")
        })
    });
    // Last: the run's secrets are process-wide and stay. 200 secrets, as a fleet's vaults
    // hold: every value read is then looked through for them, and every text written masked.
    for i in 0..200 {
        tack_vault::sealed::remember(&format!("bench-secret-{i:04}-a1b2c3d4"));
    }
    group.bench_function("events_callback_200_secrets", |b| {
        b.iter(|| {
            let mut callback =
                EventsCallback::new(Vec::new(), DefaultCallback::new(Vec::new(), 79));
            run_with(&project, &mut callback);
            callback.finish().expect("events written")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
