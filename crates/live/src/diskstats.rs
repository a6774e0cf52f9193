//! Reading `/proc/diskstats`: the shell's half of lull-controller's
//! `diskstats`, which parses what is read here (and is re-exported whole).

pub use lull_controller::diskstats::*;

/// Reads diskstats at `path` into the start of `buf` and returns its
/// length, with reads as large as the buffer, so a poll is one `read` and
/// the end-of-file one, not the doubling probe reads `read_to_string`
/// does on a file whose size the kernel reports as 0. `buf` keeps its
/// length (zeroed once, grown when the file outgrows it). A procfs file is
/// kept open in `file` and read again from offset 0 (the kernel
/// regenerates it: no `open` and `close` per poll); any other file is
/// opened each time.
///
/// From the kept procfs file, a first read shorter than
/// [`SEQ_SHORT_READ`] is the whole file, and the end-of-file read is
/// skipped: the kernel's `seq_file` fills a read until the caller's buffer
/// is full, the file ends, or its own buffer (at least a page, 4 KiB) has
/// no room for the next line, and a diskstats line is under 512 bytes
/// (a 32-byte name and 20 numbers); so a read stops short of 4 KiB − 512
/// bytes only at the end. That read matters: to
/// find where it left off, diskstats walks the kernel's list of block
/// devices from the start, which costs about as much as the read that
/// produced the lines (`perf`, issue 18).
pub fn read_diskstats(
    file: &mut Option<std::fs::File>,
    path: &std::path::Path,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let (f, kept) = match file.take() {
        Some(f) => (f, true),
        None => (std::fs::File::open(path)?, false),
    };
    let mut len = 0;
    let result = loop {
        if buf.len() - len < 4096 {
            buf.resize(buf.len() + (16 << 10), 0);
        }
        match f.read_at(&mut buf[len..], len as u64) {
            Ok(0) => break Ok(len),
            Ok(n) if kept && len == 0 && n < SEQ_SHORT_READ => break Ok(n),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let procfs = || {
        nix::sys::statfs::fstatfs(&f)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::PROC_SUPER_MAGIC)
    };
    if result.is_ok() && (kept || procfs()) {
        *file = Some(f);
    }
    result
}

/// A first read of `/proc/diskstats` shorter than this is the whole file
/// ([`read_diskstats`]).
pub const SEQ_SHORT_READ: usize = 4096 - 512;

#[cfg(test)]
mod tests {
    #[test]
    fn diskstats_is_kept_open_on_procfs_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diskstats");
        std::fs::write(&path, "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        let (mut file, mut buf) = (None, Vec::new());
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n");
        assert!(file.is_none(), "a regular file is opened afresh");
        // Replaced (as tests and `write_atomically` do): the new content.
        let tmp = dir.path().join("new");
        std::fs::write(&tmp, "8 16 sdb 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert!(buf[..n].starts_with(b"8 16 sdb"));
        // A file larger than the buffer is read whole.
        let big: String = (0..2000)
            .map(|i| format!("8 {i} sd{i} 1 2 3 4 5 6 7 8 9 10 11\n"))
            .collect();
        std::fs::write(&path, &big).unwrap();
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert_eq!(&buf[..n], big.as_bytes());
        assert!(file.is_none(), "a regular file is never kept open");
    }

    #[test]
    #[cfg_attr(not(has_proc_diskstats), ignore = "needs /proc/diskstats")]
    fn proc_diskstats_is_kept_open() {
        let (mut file, mut buf) = (None, Vec::new());
        // /proc/diskstats stays open and reads the same devices each time.
        let proc = std::path::Path::new("/proc/diskstats");
        let Ok(want) = std::fs::read_to_string(proc) else {
            lull_testkit::skip("no /proc/diskstats");
            return;
        };
        let names = |t: &str| -> Vec<String> {
            t.lines()
                .filter_map(|l| l.split_ascii_whitespace().nth(2).map(str::to_string))
                .collect()
        };
        for round in 0..3 {
            let n = super::read_diskstats(&mut file, proc, &mut buf).unwrap();
            let got = std::str::from_utf8(&buf[..n]).unwrap();
            assert_eq!(names(got), names(&want), "read {round}");
            assert!(got.ends_with('\n'));
            assert!(file.is_some(), "procfs: kept open");
        }
    }
}
