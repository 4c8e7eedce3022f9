//! Provenance: a render reports whether anything it read came from a managed host (facts,
//! registered results, `hostvars`, values derived from them) or is unavailable (plan mode),
//! exactly for what it actually read.

use std::collections::BTreeMap;
use std::sync::Arc;

use tack_template::{HostVars, Layer, Provenance, ProvenanceSet, Scope, Templar};
use tack_yaml::{Node, Value};

fn yaml(text: &str) -> Node {
    tack_yaml::load_one(text, None).expect("test YAML")
}

fn layer(text: &str, provenance: Provenance) -> Arc<Layer> {
    Arc::new(Layer::from_mapping(yaml(text).as_map().expect("a mapping"), provenance))
}

/// One host's scope: inventory and play vars (trusted), facts and a registered result (from
/// the host).
fn host_scope(name: &str) -> Scope {
    Scope::new()
        .with_layer(layer(
            &format!("inventory_hostname: {name}\nhttp_port: 8080\ngroup_names: [web]\n"),
            Provenance::Trusted,
        ))
        .with_layer(layer(
            "app: shop\nurl: 'http://{{ inventory_hostname }}:{{ http_port }}/'\n\
             via_fact: '{{ ansible_facts.hostname }}-x'\n",
            Provenance::Trusted,
        ))
        .with_layer(layer(
            "ansible_facts: {hostname: h1, os_family: Debian}\n\
             ansible_hostname: h1\n",
            Provenance::ManagedHost,
        ))
        .with_layer(layer(
            "result: {stdout: '{{ not_a_template }}', rc: 0}\n",
            Provenance::ManagedHost,
        ))
}

struct Inventory(BTreeMap<String, Scope>);

impl HostVars for Inventory {
    fn hosts(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
    fn host_scope(&self, host: &str) -> Option<Scope> {
        self.0.get(host).cloned()
    }
}

fn scope() -> Scope {
    let mut hosts = BTreeMap::new();
    hosts.insert("web1".to_string(), host_scope("web1"));
    hosts.insert("web2".to_string(), host_scope("web2"));
    host_scope("web1").with_hostvars(Arc::new(Inventory(hosts)))
}

fn read(source: &str, scope: &Scope) -> (Value, ProvenanceSet) {
    let r = Templar::new().render_str(source, scope).expect("renders");
    (r.value.value, r.provenance)
}

#[test]
fn registered_results_are_managed_host() {
    let (value, p) = read("{{ result.rc }}", &scope());
    assert_eq!(value, Value::Int(0));
    assert!(p.is_managed_host());
}

#[test]
fn facts_are_managed_host() {
    assert!(read("{{ ansible_facts.os_family }}", &scope()).1.is_managed_host());
    assert!(read("{{ ansible_hostname | upper }}", &scope()).1.is_managed_host());
}

#[test]
fn hostvars_reads_are_managed_host() {
    let (value, p) = read("{{ hostvars['web2'].ansible_facts.hostname }}", &scope());
    assert_eq!(value, Value::Str("h1".into()));
    assert!(p.is_managed_host());
    assert!(read("{{ hostvars['web2'] | length > 0 }}", &scope()).1.is_managed_host());
}

#[test]
fn a_set_fact_derived_from_the_host_stays_managed_host() {
    let templar = Templar::new();
    let base = scope();
    let from_fact = templar.render_str("{{ ansible_facts.hostname }}-{{ app }}", &base).unwrap();
    assert!(from_fact.provenance.is_managed_host());
    // The executor stores a set_fact result with the provenance derived from its render.
    let mut facts = Layer::new();
    facts.insert("derived", from_fact.value, from_fact.provenance.derived());
    let after = base.with_layer(Arc::new(facts));
    assert!(read("prefix-{{ derived }}", &after).1.is_managed_host());
}

#[test]
fn play_and_inventory_vars_are_trusted() {
    let (value, p) = read("{{ url }}{{ app }} {{ group_names | join(',') }}", &scope());
    assert_eq!(value, Value::Str("http://web1:8080/shop web".into()));
    assert!(p.is_trusted());
    assert!(!p.is_managed_host());
}

#[test]
fn a_template_variable_reading_a_fact_is_managed_host() {
    assert!(read("{{ via_fact }}", &scope()).1.is_managed_host());
}

#[test]
fn dynamic_lookup_of_a_trusted_key_is_trusted() {
    let (value, p) = read("{{ vars['http_port'] }} {{ vars['app'] }}", &scope());
    assert_eq!(value, Value::Str("8080 shop".into()));
    assert!(p.is_trusted());
    let name = "{{ vars[('ansible' ~ '_hostname')] }}";
    assert!(read(name, &scope()).1.is_managed_host());
    let other_host = "{{ hostvars['web2']['http_port'] }}";
    assert!(read(other_host, &scope()).1.is_trusted());
}

#[test]
fn registered_strings_are_never_templates() {
    let (value, _) = read("{{ result.stdout }}", &scope());
    assert_eq!(value, Value::Unsafe("{{ not_a_template }}".into()));
}

#[test]
fn unavailable_values_are_reported_only_when_read() {
    let pending = Provenance::Unavailable { producer: Arc::from("install packages") };
    let mut plan = Layer::new();
    plan.insert("pkg_result", Node::bare(Value::Null), pending);
    let scope = scope().with_layer(Arc::new(plan));
    let templar = Templar::new();

    let skipped = Node::bare(Value::Str("false and pkg_result.changed".into()));
    let c = templar.evaluate_conditional(&skipped, &scope).unwrap();
    assert!(!c.value);
    assert!(!c.provenance.has_unavailable());

    let needed = Node::bare(Value::Str("pkg_result is defined".into()));
    let c = templar.evaluate_conditional(&needed, &scope).unwrap();
    assert_eq!(c.provenance.unavailable().collect::<Vec<_>>(), ["install packages"]);
}

#[test]
fn static_provenance_counts_every_referenced_name() {
    let templar = Templar::new();
    let node = Node::bare(Value::Str("{{ app if true else ansible_hostname }}".into()));
    let r = templar.render(&node, &scope()).unwrap();
    assert!(r.provenance.is_trusted(), "only `app` was read");
    assert!(templar.static_provenance(&node, &scope()).is_managed_host());
    let names = templar.referenced_names("{% set x = 1 %}{{ x + app_port | int }}").unwrap();
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["app_port"]);
}

#[test]
fn rendered_strings_are_never_rendered_again() {
    let templar = Templar::new();
    let base = scope();
    // A set_fact of a trusted value whose result looks like a template (it was computed).
    let made = templar.render_str("{{ '{{ app }}' }}", &base).unwrap();
    assert_eq!(made.value.value, Value::Unsafe("{{ app }}".into()));
    let mut facts = Layer::new();
    facts.insert("made", made.value, made.provenance.derived());
    let after = base.with_layer(Arc::new(facts));
    assert_eq!(read("{{ made }}", &after).0, Value::Unsafe("{{ app }}".into()));
}

#[test]
fn vars_lookup_of_a_trusted_name_is_trusted() {
    let (value, p) = read("{{ lookup('vars', 'http_port') }}", &scope());
    assert_eq!(value, Value::Int(8080));
    assert!(!p.is_managed_host());
    assert!(p.is_trusted());
}

#[test]
fn vars_lookup_records_the_binding_it_read() {
    let (value, p) = read("{{ lookup('vars', 'ansible_hostname') }}", &scope());
    assert_eq!(value, Value::Str("h1".into()));
    assert!(p.is_managed_host());
    // A name computed from trusted data still reads the managed-host binding it names.
    assert!(read("{{ lookup('vars', 'ansible_' ~ 'hostname') }}", &scope()).1.is_managed_host());
    assert!(read("{{ query('vars', 'app', 'result')[1].rc }}", &scope()).1.is_managed_host());
}

#[test]
fn controller_lookups_are_trusted_unless_their_terms_came_from_a_host() {
    assert!(!read("{{ lookup('env', 'HOME') }}", &scope()).1.is_managed_host());
    assert!(!read("{{ lookup('pipe', 'echo hi') }}", &scope()).1.is_managed_host());
    let (value, p) = read("{{ lookup('items', ansible_facts.hostname) }}", &scope());
    assert_eq!(value, Value::Str("h1".into()));
    assert!(p.is_managed_host());
}

#[test]
fn with_loop_items_carry_the_provenance_of_their_terms() {
    let templar = Templar::new();
    let trusted = yaml("['{{ app }}', b]");
    let (items, p) =
        tack_template::lookups::run_loop(&templar, "items", &trusted, &scope()).expect("loop");
    assert_eq!(items.len(), 2);
    assert!(!p.is_managed_host());
    let from_host = Node::bare(Value::Str("{{ [ansible_hostname, 'x'] }}".into()));
    let (items, p) =
        tack_template::lookups::run_loop(&templar, "items", &from_host, &scope()).expect("loop");
    assert_eq!(items[0].value, Value::Str("h1".into()));
    assert!(p.is_managed_host());
}

/// A registered loop result: the items the playbook wrote stay the user's inside the host's
/// value, at the places the binding names, and a loop over the result knows where.
#[test]
fn places_a_binding_trusts_stay_trusted_inside_a_hosts_value() {
    use tack_template::Binding;
    use tack_yaml::tagged::PathStep;
    let registered = yaml(
        "results:\n- item: {checks: ['x == 1']}\n  stdout: 'y == 2'\n- item: {checks: ['z == 3']}\n",
    );
    let place = |i: usize| {
        vec![PathStep::Key("results".into()), PathStep::Index(i), PathStep::Key("item".into())]
    };
    let with = |trusted: Vec<Vec<PathStep>>| {
        let binding =
            Binding::new(registered.clone(), Provenance::ManagedHost).with_trusted_at(trusted);
        Scope::new().with_binding("r", binding)
    };
    let templar = Templar::new();
    let kinds = |scope: &Scope, template: &str| -> Vec<&'static str> {
        let items = templar
            .resolve_to_list(&Node::bare(Value::Str(template.into())), scope)
            .expect("a list");
        items
            .iter()
            .map(|n| match n.value {
                Value::Str(_) => "trusted",
                Value::Unsafe(_) => "untrusted",
                _ => "other",
            })
            .collect()
    };
    let trusting = with(vec![place(0)]);
    assert_eq!(kinds(&trusting, "{{ r.results[0].item.checks }}"), ["trusted"]);
    assert_eq!(kinds(&trusting, "{{ r.results[1].item.checks }}"), ["untrusted"]);
    assert_eq!(kinds(&trusting, "{{ [r.results[0].stdout] }}"), ["untrusted"]);
    assert_eq!(kinds(&with(Vec::new()), "{{ r.results[0].item.checks }}"), ["untrusted"]);

    let source = Node::bare(Value::Str("{{ r.results }}".into()));
    let (rendered, kept) = templar.render_loop(&source, &trusting).expect("renders");
    assert!(rendered.provenance.is_managed_host());
    let leaves = kept.trusted_leaves().expect("a variable's list");
    let checks =
        |i| vec![PathStep::Key("item".into()), PathStep::Key("checks".into()), PathStep::Index(i)];
    assert_eq!(leaves, vec![vec![checks(0)], vec![]]);
    let built = Node::bare(Value::Str("{{ [r.results[0]] }}".into()));
    let (_, kept) = templar.render_loop(&built, &trusting).expect("renders");
    assert_eq!(kept.trusted_leaves(), None, "a list a template built is new values");
}
