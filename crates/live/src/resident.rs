//! Keeping the daemon's resident set small: the pages of code that runs
//! once (start-up, reloads) leave it after that work, and the heap gives
//! its free pages back (`docs/performance.md`, "Daemon against hd-idle").

use lull_core::time::Nanos;

/// How long after rare work its code pages are released.
pub(crate) const RELEASE_DELAY: Nanos = Nanos::from_secs(5);

/// Takes the code and read-only data pages of the daemon and its
/// libraries out of its resident set (they stay in the page cache), and
/// gives the heap's free pages back, so what stays resident is what the
/// poll loop uses.
///
/// Why: most of the binary's code runs once, at start-up or at a reload
/// (reading and checking the config, building the networks), and the
/// kernel maps file pages in 64 KiB chunks around each page touched
/// (fault-around): without this, 4.2 MiB of the daemon's 4.8 MiB RSS are
/// such file-backed pages. A page dropped here and needed again is mapped
/// back from the page cache by a minor fault.
///
/// Only private, file-backed, read-only mappings (`r-xp` and `r--p` in
/// `/proc/self/smaps`) that hold no page of their own (`Anonymous: 0 kB`)
/// are dropped: every page of such a mapping is the file's, so nothing is
/// lost. A mapping that was ever written, such as the relocated
/// `.data.rel.ro` that the loader makes read-only afterwards, holds
/// private copies and is left alone. Returns the bytes advised.
pub(crate) fn release_code_pages() -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut bytes = 0;
    // The mapping being read, while it may be dropped: (start, end).
    let mut candidate: Option<(usize, usize)> = None;
    let mut release = |range: Option<(usize, usize)>| {
        let Some((a, b)) = range else { return };
        // SAFETY: `MADV_DONTNEED` on a private, read-only file mapping
        // with no private (anonymous) page only unmaps the file's own
        // pages from this process; the next access maps the same contents
        // back from the file. No memory is freed or changed.
        #[allow(unsafe_code)]
        let r = unsafe { libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_DONTNEED) };
        if r == 0 {
            bytes += b - a;
        }
    };
    for l in smaps.lines() {
        if let Some(kb) = l.strip_prefix("Anonymous:") {
            if kb.trim().trim_end_matches("kB").trim() != "0" {
                candidate = None;
            }
            continue;
        }
        let mut f = l.split_ascii_whitespace();
        let Some(range) = f.next() else { continue };
        if range.ends_with(':') {
            continue; // another of the mapping's fields
        }
        // A mapping's header (an anonymous one has no path): the mapping
        // before it is complete.
        release(candidate.take());
        let (Some(perms), Some(_off), Some(_dev), Some(inode), Some(path)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if !matches!(perms, "r-xp" | "r--p") || inode == "0" || !path.starts_with('/') {
            continue;
        }
        if let Some((a, b)) = range.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            candidate = Some((a, b));
        }
    }
    release(candidate);
    trim_heap();
    bytes
}

/// Gives the heap's free pages back to the kernel (glibc keeps them
/// mapped after the start-up's allocations are freed).
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` only releases memory the allocator holds
        // free; it is thread-safe and takes no pointer.
        #[allow(unsafe_code)]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The resident file-backed pages of this process (`RssFile`), KiB.
    fn rss_file_kib() -> Option<u64> {
        std::fs::read_to_string("/proc/self/status")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("RssFile:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    #[test]
    fn code_pages_are_released_and_the_code_still_runs() {
        let before = rss_file_kib();
        let n = super::release_code_pages();
        assert!(n > 0, "the test binary has code mappings");
        let after = rss_file_kib();
        // Code runs after it (mapped back on use): formatting, allocating,
        // hashing, a thread.
        let v: Vec<String> = (0..1000).map(|i| format!("{i}")).collect();
        let set: std::collections::HashSet<&String> = v.iter().collect();
        let t = std::thread::spawn(|| 6 * 7).join().unwrap();
        assert_eq!((v[42].as_str(), set.len(), t), ("42", 1000, 42));
        // Relocated read-only data (pointers the loader wrote, in a
        // mapping made read-only afterwards) kept its contents.
        type Op = (&'static str, fn(u32) -> u32);
        static TABLE: [Op; 2] = [("double", |x| x * 2), ("square", |x| x * x)];
        let table = std::hint::black_box(&TABLE);
        assert_eq!(
            (table[1].0, (table[1].1)(7), (table[0].1)(7)),
            ("square", 49, 14)
        );
        if let (Some(b), Some(a)) = (before, after) {
            assert!(a < b, "RssFile {b} KiB before, {a} KiB after");
        }
    }
}
