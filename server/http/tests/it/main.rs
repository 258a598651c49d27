//! The HTTP layer tested in process: every test builds the application (core
//! and router) in this program and sends it requests with tower's `oneshot`.
//! One test program, so one link.

mod account_api;
mod api_precision;
mod crowds;
mod finding;
mod games_listed;
mod leaderboard;
mod people;
mod served;
mod shared_rules;
mod support;
