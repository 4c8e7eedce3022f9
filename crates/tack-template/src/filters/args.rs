//! Binding a filter call's arguments the way Python binds them to the plugin function's
//! signature, so a bad call fails with the `TypeError` text ansible shows (`do_sort() got an
//! unexpected keyword argument 'foo'`, `b64encode() takes from 1 to 3 positional arguments but
//! 4 were given`).
//!
//! It owns only argument binding and the coercions filters share; it knows nothing about what
//! any filter does.

use minijinja::Value;
use minijinja::value::{Rest, ValueOrKwargs};

use super::FilterError;

/// A Python function's parameter list, as far as ansible's error messages reveal it.
pub(crate) struct Sig {
    /// The Python function's `__name__` (`do_sort`, `b64encode`), used in `TypeError` texts.
    pub func: &'static str,
    /// Leading parameters Jinja passes itself (`environment`, `context`): Python counts them
    /// in its messages although the template never writes them.
    pub hidden: usize,
    /// Positional-or-keyword parameters, the filter's input first.
    pub params: &'static [&'static str],
    /// How many of `params` have no default.
    pub required: usize,
    /// `*args`: extra positional arguments are kept instead of refused.
    pub varargs: bool,
    /// `**kwargs`: unknown keyword arguments are kept instead of refused.
    pub varkw: bool,
    /// A C builtin taking exactly one positional argument (`len`, `abs`), whose messages differ.
    pub builtin_one: bool,
}

impl Sig {
    pub(crate) const fn new(
        func: &'static str,
        params: &'static [&'static str],
        required: usize,
    ) -> Sig {
        Sig { func, hidden: 0, params, required, varargs: false, varkw: false, builtin_one: false }
    }

    pub(crate) const fn env(mut self) -> Sig {
        self.hidden = 1;
        self
    }

    pub(crate) const fn varargs(mut self) -> Sig {
        self.varargs = true;
        self
    }

    pub(crate) const fn varkw(mut self) -> Sig {
        self.varkw = true;
        self
    }

    pub(crate) const fn builtin_one(func: &'static str) -> Sig {
        Sig { builtin_one: true, ..Sig::new(func, &["obj"], 1) }
    }
}

/// A call's arguments matched to a [`Sig`].
#[derive(Debug, Default)]
pub(crate) struct Bound {
    values: Vec<Option<Value>>,
    /// Positional arguments beyond the named parameters (`*args`).
    pub extra: Vec<Value>,
    /// Keyword arguments no parameter names (`**kwargs`), in call order.
    pub extra_kw: Vec<(String, Value)>,
}

impl Bound {
    /// The argument bound to parameter `i`, if the call gave one.
    pub(crate) fn get(&self, i: usize) -> Option<&Value> {
        self.values.get(i).and_then(Option::as_ref)
    }

    /// The filter's input (parameter 0, always required).
    pub(crate) fn input(&self) -> &Value {
        static UNDEFINED: Value = Value::UNDEFINED;
        self.get(0).unwrap_or(&UNDEFINED)
    }

    /// Parameter `i`, or `None` when the call gave no argument or Python's `None`.
    pub(crate) fn opt(&self, i: usize) -> Option<&Value> {
        self.get(i).filter(|v| !v.is_none())
    }
}

/// Splits minijinja's raw arguments into positional values and keyword pairs.
pub(crate) fn split(args: Rest<ValueOrKwargs>) -> (Vec<Value>, Vec<(String, Value)>) {
    let mut values = args.into_values();
    let mut kwargs = Vec::new();
    if values.last().is_some_and(Value::is_kwargs)
        && let Some(kw) = values.pop()
        && let Ok(keys) = kw.try_iter()
    {
        for key in keys {
            let value = kw.get_item(&key).unwrap_or_default();
            kwargs.push((key.as_str().unwrap_or_default().to_string(), value));
        }
    }
    (values, kwargs)
}

/// Binds `args` and `kwargs` to `sig` as Python would, or fails with Python's `TypeError` text.
pub(crate) fn bind(
    sig: &Sig,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
) -> Result<Bound, FilterError> {
    if sig.builtin_one {
        if !kwargs.is_empty() {
            return Err(FilterError::failed(format!("{}() takes no keyword arguments", sig.func)));
        }
        if args.len() != 1 {
            return Err(FilterError::failed(format!(
                "{}() takes exactly one argument ({} given)",
                sig.func,
                args.len()
            )));
        }
    }
    let n = sig.params.len();
    let mut bound = Bound { values: vec![None; n], ..Bound::default() };
    let given = args.len();
    for (i, arg) in args.into_iter().enumerate() {
        if i < n {
            bound.values[i] = Some(arg);
        } else if sig.varargs {
            bound.extra.push(arg);
        } else {
            return Err(FilterError::failed(too_many(sig, given)));
        }
    }
    for (key, value) in kwargs {
        match sig.params.iter().position(|p| *p == key) {
            Some(i) if bound.values[i].is_some() => {
                return Err(FilterError::failed(format!(
                    "{}() got multiple values for argument '{key}'",
                    sig.func
                )));
            }
            Some(i) => bound.values[i] = Some(value),
            None if sig.varkw => bound.extra_kw.push((key, value)),
            None => {
                return Err(FilterError::failed(format!(
                    "{}() got an unexpected keyword argument '{key}'",
                    sig.func
                )));
            }
        }
    }
    let missing: Vec<&str> =
        (0..sig.required).filter(|&i| bound.values[i].is_none()).map(|i| sig.params[i]).collect();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
        let list = match names.len() {
            1 => names[0].clone(),
            2 => format!("{} and {}", names[0], names[1]),
            _ => format!("{}, and {}", names[..names.len() - 1].join(", "), names[names.len() - 1]),
        };
        let plural = if missing.len() == 1 { "argument" } else { "arguments" };
        return Err(FilterError::failed(format!(
            "{}() missing {} required positional {plural}: {list}",
            sig.func,
            missing.len()
        )));
    }
    Ok(bound)
}

fn too_many(sig: &Sig, given: usize) -> String {
    let max = sig.hidden + sig.params.len();
    let min = sig.hidden + sig.required;
    let given = sig.hidden + given;
    let takes = if min == max {
        let plural = if max == 1 { "argument" } else { "arguments" };
        format!("{max} positional {plural}")
    } else {
        format!("from {min} to {max} positional arguments")
    };
    let were = if given == 1 { "was" } else { "were" };
    format!("{}() takes {takes} but {given} {were} given", sig.func)
}

/// Python truthiness of an argument (`bool(value)`).
pub(crate) fn truthy(value: &Value) -> bool {
    super::pyval::truthy(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Sig =
        Sig::new("do_sort", &["value", "reverse", "case_sensitive", "attribute"], 1).env();

    fn call(sig: &Sig, n: usize, kw: &[&str]) -> String {
        let args = (0..n).map(|i| Value::from(i as i64)).collect();
        let kwargs = kw.iter().map(|k| (k.to_string(), Value::from(1))).collect();
        match bind(sig, args, kwargs) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    // Expected texts printed by ansible-core 2.21.5 (`do_sort`) and CPython 3.13 (`f`, `g`,
    // `len`) for the same calls.
    #[test]
    fn messages_count_hidden_parameters_as_python_does() {
        assert_eq!(
            call(&SORT, 6, &[]),
            "do_sort() takes from 2 to 5 positional arguments but 7 were given"
        );
        assert_eq!(call(&SORT, 1, &["foo"]), "do_sort() got an unexpected keyword argument 'foo'");
        assert_eq!(
            call(&SORT, 2, &["reverse"]),
            "do_sort() got multiple values for argument 'reverse'"
        );
        assert_eq!(call(&SORT, 1, &["attribute"]), "ok");
    }

    #[test]
    fn missing_arguments_are_listed_as_python_lists_them() {
        let sig = Sig::new("f", &["a", "b", "c", "d"], 3);
        assert_eq!(
            call(&sig, 0, &[]),
            "f() missing 3 required positional arguments: 'a', 'b', and 'c'"
        );
        assert_eq!(call(&sig, 1, &[]), "f() missing 2 required positional arguments: 'b' and 'c'");
        assert_eq!(
            call(&Sig::new("g", &["a"], 1), 2, &[]),
            "g() takes 1 positional argument but 2 were given"
        );
        assert_eq!(
            call(&Sig::builtin_one("len"), 2, &[]),
            "len() takes exactly one argument (2 given)"
        );
    }
}
