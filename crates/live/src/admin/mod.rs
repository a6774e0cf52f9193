//! The admin's tools: what an admin runs beside the daemon, not the
//! daemon itself.
//!
//! - [`status`]: `lull status`, each disk's state as the running daemon
//!   reports it.
//! - [`check`]: `--check`, the configuration as a start would see it.
//! - [`from_hd_idle`]: `--from-hd-idle`, hd-idle's options as a lull
//!   configuration.
//! - [`front`]: the one argument definition of the daemon's two front
//!   ends, `lulld` and `lull daemon`, so their help cannot disagree.
//!
//! Why a module and not a crate: `lulld` ships these tools, and `lulld`
//! is this crate's binary, packaged from it (`cargo deb -p lull-live`). A
//! crate of their own would depend on this one (they read its config,
//! state file and metrics), so `lulld` and its packaging would have to
//! move out of it too. As a module the wall is still checked: nothing
//! below imports it (`crates/lull/tests/no_cycles.rs` puts it on the top
//! layer, with `daemon`), so the daemon runs the same without it.
//!
//! What the daemon itself needs of these subjects stays below: the checks
//! a start runs ([`crate::preflight()`]) and the reading of hd-idle's
//! options, which names a competing hd-idle ([`crate::hd_idle`]).

pub mod check;
pub mod from_hd_idle;
pub mod front;
pub mod status;
