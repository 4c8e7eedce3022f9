//! The CPython behaviours ansible-core's output depends on, in one place.
//!
//! ansible-core prints Python objects (`repr()` of strings, bytes and floats), resolves paths
//! with `os.path`, splits command lines with `shlex` and shortens excerpts with `textwrap`.
//! tack reproduces those results byte for byte, so each rule is written once, here, and every
//! layer calls it:
//!
//! ```
//! assert_eq!(tack_py::repr::str_repr("it's"), "\"it's\"");
//! assert_eq!(tack_py::repr::float_repr(1e16), "1e+16");
//! assert_eq!(tack_py::path::normpath("//a/./b/../c".as_ref()).to_str(), Some("//a/c"));
//! assert_eq!(tack_py::shlex::split("a 'b c'").unwrap(), ["a", "b c"]);
//! ```
//!
//! The reference is the CPython ansible-core 2.21.5 runs on (3.13, Unicode 15.1): the
//! character classes in [`unicode`] are generated from it by `scripts/gen-py-unicode.py`, and
//! `tests/corpus/` holds cases recorded from it by `scripts/record-py.py`; the codec tables in
//! [`codecs`] come from `scripts/gen-py-codecs.py`.
//!
//! A few rules of ansible's own live here too, because layers below the data loader (and the
//! agent, which depends on nothing else) need them: [`ansible::unquote`] and
//! [`ansible::unfrackpath`], pure compositions of the rules above; the short name of a plugin
//! in ansible-core's own collections ([`ansible::short_name`]); and `boolean()`, the one
//! reading of `yes`/`no`/`on`/`off` ([`boolean`]).
//!
//! What this crate does not do: know any tack type (values, nodes, settings), read files
//! (`realpath` and `isfile` only ask the file system about names), or print anything.

pub mod ansible;
pub mod binascii;
pub mod boolean;
pub mod codecs;
mod codecs_tables;
pub mod difflib;
pub mod num;
pub mod oserror;
pub mod path;
pub mod re;
pub mod repr;
pub mod shlex;
pub mod text;
pub mod textwrap;
pub mod unicode;
mod unicode_tables;
