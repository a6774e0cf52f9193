//! The poll loop's clock: a `timerfd` on `CLOCK_BOOTTIME` watched by
//! tokio's I/O driver.
//!
//! Why not `tokio::time::sleep`: a 1 s sleep sits in the timer wheel's
//! 64 ms level, so it fires twice (once to cascade to the 1 ms level, once
//! for real), and re-arming it for the next poll wakes the driver a third
//! time: three `epoll_wait`s per poll where hd-idle has one `sleep`. A
//! timerfd armed with an absolute deadline costs one `timerfd_settime` and
//! wakes the loop once, at the deadline. `CLOCK_BOOTTIME` is the daemon's
//! own time base ([`crate::daemon`]), so a deadline that passes during a
//! suspend fires at resume.
//!
//! The one `unsafe` here is tokio's registration of a raw descriptor,
//! which the private `Fd` owner makes sound.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};

use lull_core::time::Nanos;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// A one-shot timer on `CLOCK_BOOTTIME`.
pub struct PollTimer {
    fd: AsyncFd<Fd>,
}

impl std::fmt::Debug for PollTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PollTimer")
    }
}

impl PollTimer {
    /// A disarmed timer, registered with the current runtime.
    pub fn new() -> io::Result<PollTimer> {
        let t = TimerFd::new(
            ClockId::CLOCK_BOOTTIME,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(io::Error::from)?;
        // SAFETY: `Fd` owns the timerfd for the life of the `AsyncFd` and
        // always returns that same descriptor.
        #[allow(unsafe_code)]
        let fd = unsafe { AsyncFd::register(Fd(t)) }?;
        Ok(PollTimer { fd })
    }

    /// Arms it for `at`, nanoseconds of `CLOCK_BOOTTIME` (a time in the
    /// past fires at once).
    pub fn set(&self, at: Nanos) -> io::Result<()> {
        // 0 would disarm it.
        let at = at.0.max(1);
        let ts = TimeSpec::new((at / 1_000_000_000) as _, (at % 1_000_000_000) as _);
        self.fd
            .get_ref()
            .0
            .set(
                Expiration::OneShot(ts),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            )
            .map_err(io::Error::from)
    }

    /// Waits until it fires (cancel-safe: dropping the future loses
    /// nothing).
    pub async fn wait(&self) -> io::Result<()> {
        loop {
            let mut ready = self.fd.readable().await?;
            let read = ready.try_io(|fd| {
                let mut buf = [0u8; 8];
                nix::unistd::read(fd.get_ref().0.as_fd(), &mut buf)
                    .map(drop)
                    .map_err(io::Error::from)
            });
            match read {
                Ok(r) => {
                    // One-shot and not re-armed yet: it cannot be readable
                    // again before the next `set`, so the next `wait` goes
                    // straight to epoll instead of a `read` that fails.
                    if r.is_ok() {
                        ready.clear_ready();
                    }
                    return r;
                }
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_at_its_deadline_and_not_before() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let now = || {
                let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).unwrap();
                Nanos(ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
            };
            let t = PollTimer::new().unwrap();
            let at = now() + Nanos::from_millis(30);
            t.set(at).unwrap();
            t.wait().await.unwrap();
            assert!(now() >= at, "fired early");
            // Re-armed in the past: fires at once.
            t.set(Nanos(1)).unwrap();
            t.wait().await.unwrap();
        });
    }
}
