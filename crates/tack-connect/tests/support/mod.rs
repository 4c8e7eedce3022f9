//! What the SSH tests share: a loopback sshd of their own (`sshd`) and the agent binary cargo
//! builds (`agent`).
#![allow(dead_code)]

pub(crate) mod agent;
pub(crate) mod cases;
pub(crate) mod sshd;
