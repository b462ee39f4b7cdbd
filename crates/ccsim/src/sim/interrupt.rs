//! Ctrl-C during long setup work (routes, path scans): the front end registers a check, and the
//! long loops poll it and give up with `ScenarioError::interrupted`. The event loop needs none:
//! the front end runs it in chunks and checks between them.
use std::sync::OnceLock;

static CHECK: OnceLock<fn() -> bool> = OnceLock::new();

/// Register the check (once per process): true when the user asked to stop.
pub fn set_check(check: fn() -> bool) {
    let _ = CHECK.set(check);
}

/// The user asked to stop (false if no check is registered).
pub fn requested() -> bool {
    CHECK.get().is_some_and(|check| check())
}
