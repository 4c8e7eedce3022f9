//! Python's `repr()` of the values that appear in ansible's configuration errors
//! (`Invalid value provided for 'integer': 'abc'`, `[line  2]: 'forks\n'`).
//!
//! Owns only the shape of a setting value; the string and float rules are `tack_py::repr`'s.

use tack_py::repr::{float_repr, str_repr};

use crate::SettingValue;

/// `repr()` of a setting value as Python would print the equivalent object.
pub(crate) fn value_repr(v: &SettingValue) -> String {
    match v {
        SettingValue::Null => "None".into(),
        SettingValue::Bool(true) => "True".into(),
        SettingValue::Bool(false) => "False".into(),
        SettingValue::Int(n) => n.to_string(),
        SettingValue::Float(f) => float_repr(*f),
        SettingValue::Str(s) => str_repr(s),
        SettingValue::List(items) => {
            let inner: Vec<String> = items.iter().map(value_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        SettingValue::Dict(items) => {
            let inner: Vec<String> =
                items.iter().map(|(k, v)| format!("{}: {}", str_repr(k), value_repr(v))).collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_none() {
        let v = SettingValue::List(vec![SettingValue::Str("error".into()), SettingValue::Null]);
        assert_eq!(value_repr(&v), "['error', None]");
    }
}
