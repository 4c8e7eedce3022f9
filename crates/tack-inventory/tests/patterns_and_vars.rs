//! The pattern engine and the variable merge order, on inventories written to a temporary
//! directory. Expected selections and values were checked against ansible-inventory 2.21.5
//! (`--list --limit ...` and `--host ...` on the same files).

use std::fs;
use std::path::Path;

use tack_inventory::{Inventory, InventoryOptions, PatternMismatch, VarLayer};
use tack_loader::DataLoader;
use tack_yaml::Value;

const INI: &str = "\
alpha
beta
[web]
web01
web02
web03
[db]
db-a
db-b
web03
[prod:children]
web
db
[web:vars]
v=web
[db:vars]
v=db
[all:vars]
v=all
only_all=1
";

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn load(dir: &Path) -> (DataLoader, Inventory) {
    let loader = DataLoader::new(Default::default());
    let source = dir.join("hosts").to_string_lossy().into_owned();
    let options =
        InventoryOptions { pattern_mismatch: PatternMismatch::Ignore, ..Default::default() };
    let inventory = Inventory::load(&loader, &[source], options).unwrap();
    (loader, inventory)
}

fn names(inv: &Inventory, pattern: &str) -> Vec<String> {
    inv.select(pattern).unwrap().into_iter().map(|h| inv.data().host(h).name.clone()).collect()
}

#[test]
fn patterns_select_as_ansible_does() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hosts", INI);
    let (_, inv) = load(dir.path());
    let all = ["alpha", "beta", "web01", "web02", "web03", "db-a", "db-b"];
    assert_eq!(names(&inv, "all"), all);
    assert_eq!(names(&inv, "*"), all);
    assert_eq!(names(&inv, "web"), ["web01", "web02", "web03"]);
    assert_eq!(names(&inv, "web*"), ["web01", "web02", "web03"]);
    assert_eq!(names(&inv, "~db-[ab]"), ["db-a", "db-b"]);
    assert_eq!(names(&inv, "web:db"), ["web01", "web02", "web03", "db-a", "db-b"]);
    assert_eq!(names(&inv, "web,db"), ["web01", "web02", "web03", "db-a", "db-b"]);
    assert_eq!(names(&inv, "web:&db"), ["web03"]);
    assert_eq!(names(&inv, "prod:!web"), ["db-a", "db-b"]);
    // Exclusions apply after plain terms whatever their position.
    assert_eq!(names(&inv, "!web:prod"), ["db-a", "db-b"]);
    assert_eq!(names(&inv, "!db"), ["alpha", "beta", "web01", "web02"]);
    assert_eq!(names(&inv, "web[0]"), ["web01"]);
    assert_eq!(names(&inv, "web[-1]"), ["web03"]);
    assert_eq!(names(&inv, "web[1:2]"), ["web02", "web03"]);
    assert_eq!(names(&inv, "web[1:]"), ["web02", "web03"]);
    assert_eq!(names(&inv, "ungrouped"), ["alpha", "beta"]);
    assert_eq!(names(&inv, "nosuch"), Vec::<String>::new());
    assert!(inv.select("web[7]").is_err());
}

#[test]
fn localhost_is_implicit_and_outside_all() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hosts", INI);
    let (_, inv) = load(dir.path());
    assert_eq!(names(&inv, "localhost"), ["localhost"]);
    assert!(!names(&inv, "all").contains(&"localhost".to_string()));
}

#[test]
fn limit_restricts_and_reads_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hosts", INI);
    write(dir.path(), "limit.retry", "web02\n\nalpha\n");
    let (_, mut inv) = load(dir.path());
    inv.restrict_to(Some("web:!web01")).unwrap();
    assert_eq!(names(&inv, "all"), ["web02", "web03"]);
    let file = format!("@{}", dir.path().join("limit.retry").display());
    inv.restrict_to(Some(&file)).unwrap();
    assert_eq!(names(&inv, "all"), ["alpha", "web02"]);
    assert!(inv.restrict_to(Some("@/nonexistent/limit")).is_err());
    inv.restrict_to(None).unwrap();
    assert_eq!(names(&inv, "db").len(), 3);
}

#[test]
fn group_vars_merge_by_depth_priority_then_name() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hosts", INI);
    write(dir.path(), "group_vars/all.yml", "{\"v\": \"gv_all\", \"f\": \"all\"}");
    write(dir.path(), "group_vars/prod", "{\"f\": \"prod\"}");
    write(dir.path(), "group_vars/web.json", "{\"f\": \"web\"}");
    write(dir.path(), "host_vars/web03/main.json", "{\"h\": 1}");
    let (loader, inv) = load(dir.path());
    let web03 = inv.select("web03").unwrap()[0];
    let layers = inv.host_var_layers(&loader, web03, &[]).unwrap();
    let order: Vec<VarLayer> = layers.iter().map(|(l, _)| *l).collect();
    assert_eq!(order, VarLayer::DEFAULT_ORDER);
    // web and db have the same depth and priority: db, then web, so web wins among the
    // inventory-file group variables...
    let groups_layer = &layers[1].1;
    assert_eq!(groups_layer.get("v").unwrap().value, Value::Str("web".into()));
    // ...but every group_vars file ranks above inventory-file group variables, even all's.
    let vars = inv.host_vars(&loader, web03, &[]).unwrap();
    assert_eq!(vars.get("v").unwrap().value, Value::Str("gv_all".into()));
    // Among group_vars files, the deeper group (web, under prod) wins.
    assert_eq!(vars.get("f").unwrap().value, Value::Str("web".into()));
    assert_eq!(vars.get("only_all").unwrap().value, Value::Int(1));
    assert_eq!(vars.get("h").unwrap().value, Value::Int(1));
}

#[test]
fn priority_reorders_groups_of_equal_depth() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "hosts",
        "[a]\nh1\n[b]\nh1\n[a:vars]\nv=from_a\nansible_group_priority=10\n[b:vars]\nv=from_b\n",
    );
    let (loader, inv) = load(dir.path());
    let h1 = inv.select("h1").unwrap()[0];
    let vars = inv.host_vars(&loader, h1, &[]).unwrap();
    assert_eq!(vars.get("v").unwrap().value, Value::Str("from_a".into()));
    let a = inv.data().find_group("a").unwrap();
    let own = inv.group_own_vars(&loader, a, None).unwrap();
    assert_eq!(own.get("ansible_group_priority").unwrap().value, Value::Int(10));
}

#[test]
fn host_vars_beat_group_vars_and_playbook_beats_inventory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "inv/hosts", "[web]\nweb01 x=inventory_host\n");
    write(dir.path(), "inv/group_vars/web.json", "{\"x\": \"inv_group\", \"y\": \"inv_group\"}");
    write(dir.path(), "pb/group_vars/web.json", "{\"y\": \"pb_group\"}");
    write(dir.path(), "inv/host_vars/web01.json", "{\"z\": \"inv_host\"}");
    write(dir.path(), "pb/host_vars/web01.json", "{\"z\": \"pb_host\"}");
    let loader = DataLoader::new(Default::default());
    let source = dir.path().join("inv/hosts").to_string_lossy().into_owned();
    let inv = Inventory::load(&loader, &[source], InventoryOptions::default()).unwrap();
    let web01 = inv.select("web01").unwrap()[0];
    let vars = inv.host_vars(&loader, web01, &[dir.path().join("pb")]).unwrap();
    let get = |k: &str| vars.get(k).unwrap().value.clone();
    assert_eq!(get("x"), Value::Str("inventory_host".into()));
    assert_eq!(get("y"), Value::Str("pb_group".into()));
    assert_eq!(get("z"), Value::Str("pb_host".into()));
}
