//! Loading speed: a ~1 MB vars file, a typical playbook, and flat mappings of 10k and 40k keys
//! (the second should take about four times the first: building a mapping is linear).
//!
//! Run with `cargo bench -p tack-yaml --bench load`.

use std::fmt::Write;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A vars file of many hosts' settings, in the shapes vars files have: nested mappings, lists,
/// booleans, numbers, dates, quoted templates, a block scalar and merges of a shared anchor.
fn vars_file(target_bytes: usize) -> String {
    let mut out =
        String::from("defaults: &defaults\n  port: 8080\n  monitored: yes\n  ratio: 1.5\n");
    let mut i = 0;
    while out.len() < target_bytes {
        write!(
            out,
            "host_{i:05}:\n  <<: *defaults\n  name: \"web{i}.example.com\"\n  address: 10.0.{}.{}\n  \
             enabled: {}\n  weight: {}\n  since: 2024-01-{:02}\n  tags: [web, \"{{{{ env }}}}\", tier{}]\n  \
             motd: |\n    Welcome to host {i}.\n    Managed by tack.\n",
            i / 256 % 256,
            i % 256,
            if i % 2 == 0 { "true" } else { "off" },
            i * 7,
            i % 28 + 1,
            i % 3,
        )
        .unwrap();
        i += 1;
    }
    out
}

const PLAYBOOK: &str = r#"---
- name: Configure web servers
  hosts: webservers
  become: true
  vars:
    http_port: 80
    max_clients: 200
    packages: &pkgs
      - nginx
      - git
      - python3
  pre_tasks:
    - name: Update apt cache
      apt:
        update_cache: yes
        cache_valid_time: 3600
      when: ansible_os_family == "Debian"
  tasks:
    - name: Install packages
      package:
        name: "{{ item }}"
        state: present
      loop: *pkgs
    - name: Write the nginx config
      template:
        src: templates/nginx.conf.j2
        dest: /etc/nginx/nginx.conf
        mode: "0644"
      notify: restart nginx
    - name: Ensure nginx is running
      service:
        name: nginx
        state: started
        enabled: true
    - block:
        - name: Check the site
          uri:
            url: "http://localhost:{{ http_port }}/"
            status_code: 200
          register: site
          retries: 3
          delay: 5
          until: site.status == 200
      rescue:
        - debug:
            msg: "site did not answer: {{ site.msg | default('unknown') }}"
      always:
        - debug: var=site
  handlers:
    - name: restart nginx
      service:
        name: nginx
        state: restarted

- name: Configure databases
  hosts: dbservers
  serial: 2
  tasks:
    - name: Install postgres
      package:
        name: postgresql
        state: present
    - name: Create the database
      community.postgresql.postgresql_db:
        name: app
      become_user: postgres
"#;

fn flat_mapping(keys: usize) -> String {
    (0..keys).map(|i| format!("key_{i}: {i}\n")).collect()
}

fn bench(c: &mut Criterion) {
    tack_diag::set_warning_sink(Some(Box::new(|_| {})));
    let path: Option<Arc<Path>> = Some(Arc::from(Path::new("/bench/vars.yml")));
    let mut group = c.benchmark_group("load");
    group.sample_size(20);

    let vars = vars_file(1 << 20);
    group.throughput(Throughput::Bytes(vars.len() as u64));
    group.bench_function("vars_1mb", |b| {
        b.iter(|| tack_yaml::load_one(black_box(&vars), path.clone()).unwrap())
    });

    group.throughput(Throughput::Bytes(PLAYBOOK.len() as u64));
    group.bench_function("playbook", |b| {
        b.iter(|| tack_yaml::load_one(black_box(PLAYBOOK), path.clone()).unwrap())
    });

    for keys in [10_000, 40_000] {
        let text = flat_mapping(keys);
        group.throughput(Throughput::Elements(keys as u64));
        group.bench_function(format!("flat_{keys}_keys"), |b| {
            b.iter(|| tack_yaml::load_one(black_box(&text), path.clone()).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
