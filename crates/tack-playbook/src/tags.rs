//! Tag selection (`Taggable.evaluate_tags`): which tasks `--tags` / `--skip-tags` let run,
//! with the special tags `always`, `never`, `all`, `tagged` and `untagged`.

use std::collections::BTreeSet;

/// `--tags` and `--skip-tags` after ansible's command-line processing.
#[derive(Debug, Clone)]
pub struct TagFilter {
    pub only: BTreeSet<String>,
    pub skip: BTreeSet<String>,
}

impl TagFilter {
    /// From the raw `-t`/`--skip-tags` values (each may be comma-separated). No `--tags`
    /// means `all`.
    pub fn from_cli(tags: &[String], skip: &[String]) -> TagFilter {
        let split = |values: &[String]| -> BTreeSet<String> {
            values.iter().flat_map(|v| v.split(',')).map(|t| t.trim().to_string()).collect()
        };
        let mut only = split(tags);
        if only.is_empty() {
            only.insert("all".into());
        }
        TagFilter { only, skip: split(skip) }
    }

    /// Whether a task with these (already inherited and rendered) tags runs.
    pub fn should_run(&self, tags: &BTreeSet<String>) -> bool {
        let untagged: BTreeSet<String> = ["untagged".to_string()].into();
        let tags = if tags.is_empty() { &untagged } else { tags };
        let is_untagged = *tags == untagged;
        let mut run = true;
        if !self.only.is_empty() {
            run = tags.contains("always")
                || (self.only.contains("all") && !tags.contains("never"))
                || !tags.is_disjoint(&self.only)
                || (self.only.contains("tagged") && !is_untagged && !tags.contains("never"));
        }
        if run && !self.skip.is_empty() {
            if self.skip.contains("all") {
                if !tags.contains("always") || self.skip.contains("always") {
                    run = false;
                }
            } else if !tags.is_disjoint(&self.skip)
                || (self.skip.contains("tagged") && !is_untagged)
            {
                run = false;
            }
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ansible_rules() {
        let all = TagFilter::from_cli(&[], &[]);
        assert!(all.should_run(&set(&[])));
        assert!(!all.should_run(&set(&["never"])));
        assert!(all.should_run(&set(&["never", "always"])));
        let only = TagFilter::from_cli(&["a,b".into()], &[]);
        assert!(only.should_run(&set(&["b"])));
        assert!(!only.should_run(&set(&["c"])));
        assert!(only.should_run(&set(&["always"])));
        let tagged = TagFilter::from_cli(&["tagged".into()], &[]);
        assert!(!tagged.should_run(&set(&[])));
        assert!(tagged.should_run(&set(&["x"])));
        let skip = TagFilter::from_cli(&[], &["x".into()]);
        assert!(!skip.should_run(&set(&["x", "y"])));
        let skip_all = TagFilter::from_cli(&[], &["all".into()]);
        assert!(skip_all.should_run(&set(&["always"])));
        assert!(!skip_all.should_run(&set(&["y"])));
    }
}
