//! What the integration tests share: where the public trace samples are.

use std::path::{Path, PathBuf};

/// The samples folder (`$LULL_TRACES`, else `../shared/traces` beside the
/// repository), or `None` after saying why the caller skips.
pub(crate) fn traces() -> Option<PathBuf> {
    let dir = std::env::var_os("LULL_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"));
    if dir.is_dir() {
        Some(dir)
    } else {
        lull_testkit::skip(&format!(
            "trace samples not found at {} (set LULL_TRACES)",
            dir.display()
        ));
        None
    }
}
