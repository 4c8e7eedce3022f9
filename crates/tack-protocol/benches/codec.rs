//! The hot path of every task: encoding a request and decoding its reply. Measured for a
//! typical `command` request, a `setup`-sized result (~25 KiB of JSON) and a 1 MiB blob.
//!
//! Run with `cargo bench -p tack-protocol --bench codec`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use tack_protocol::{
    DEFAULT_MAX_FRAME, FrameReader, FrameWriter, Message, RunModule, encode_message,
};

fn request() -> Message {
    let mut args = Map::new();
    args.insert("_raw_params".into(), "systemctl is-active nginx".into());
    args.insert("chdir".into(), "/srv/app".into());
    args.insert("creates".into(), Value::Null);
    Message::RunModule(RunModule {
        id: 42,
        module: "ansible.builtin.command".into(),
        args,
        check_mode: false,
        diff: true,
        environment: [("LANG".to_string(), "C.UTF-8".to_string())].into(),
        rlimit_nofile: None,
        timeout: Some(30),
    })
}

/// A result shaped like `setup`'s: many small keys, nested mounts and interfaces.
fn big_result() -> Message {
    let mut facts = Map::new();
    for i in 0..200 {
        facts.insert(format!("ansible_fact_{i}"), json!(format!("value number {i}")));
    }
    let mounts: Vec<Value> = (0..40)
        .map(|i| {
            json!({"mount": format!("/mnt/{i}"), "device": format!("/dev/sd{i}"),
                   "fstype": "ext4", "options": "rw,relatime", "size_total": 1u64 << 34,
                   "size_available": 1u64 << 33, "uuid": "0b6f6e2c-8e3a-4bde-9d5e-1b2c3d4e5f60"})
        })
        .collect();
    facts.insert("ansible_mounts".into(), Value::Array(mounts));
    let mut result = Map::new();
    result.insert("ansible_facts".into(), Value::Object(facts));
    result.insert("changed".into(), false.into());
    Message::ModuleResult { id: 42, result }
}

fn bench(c: &mut Criterion) {
    for (name, message) in [("request", request()), ("setup_result", big_result())] {
        let mut frame = Vec::new();
        encode_message(&message, &mut frame, DEFAULT_MAX_FRAME).unwrap();
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(frame.len() as u64));
        let mut buf = Vec::new();
        group.bench_function("encode", |b| {
            b.iter(|| encode_message(black_box(&message), &mut buf, DEFAULT_MAX_FRAME).unwrap())
        });
        group.bench_function("decode", |b| {
            b.iter(|| FrameReader::new(black_box(&frame[..])).recv_message().unwrap())
        });
        group.finish();
    }
    let blob = vec![0xa5u8; 1 << 20];
    let mut group = c.benchmark_group("blob_1mib");
    group.throughput(Throughput::Bytes(blob.len() as u64));
    let mut out = Vec::with_capacity(blob.len() + 16);
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            FrameWriter::new(&mut out).send_blob(black_box(&blob)).unwrap();
        })
    });
    let mut encoded = Vec::new();
    FrameWriter::new(&mut encoded).send_blob(&blob).unwrap();
    group.bench_function("decode", |b| {
        b.iter(|| FrameReader::new(black_box(&encoded[..])).recv_blob().unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
