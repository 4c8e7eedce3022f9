//! Inventories.

mod address;
mod literal;
mod shlex;
mod data;
mod pyrepr;
