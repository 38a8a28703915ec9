//! memsight's result documents and what is done with them, without a terminal, HTML or a command
//! line: the presentation model each suite's results become ([`view`], [`present`]) and the
//! figures they yield ([`figure`]), their keys ([`key`]) and labels ([`dims`]); the result document of every command and reading it back
//! ([`document`]); the run history, comparison and export ([`history`]); the fleet report
//! ([`fleet_report`]) and its analysis ([`fleet`]), with the launchers' rank variables
//! ([`launcher`]). [`registry`] lists the suites. The `memsight` binary draws views, owns flags
//! and files.

#![forbid(unsafe_code)]

pub mod check;
pub mod dims;
pub mod document;
pub mod figure;
pub mod fleet;
pub mod fleet_member;
pub mod fleet_report;
pub mod history;
pub mod key;
pub mod launcher;
pub mod present;
pub mod registry;
pub mod story;
pub mod table;
pub mod view;
