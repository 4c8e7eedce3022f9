//! What the SSH tests share: a loopback sshd of their own (`sshd`) and the agent binary cargo
//! builds (`agent`).
#![allow(dead_code)]

pub mod agent;
pub mod cases;
pub mod sshd;
