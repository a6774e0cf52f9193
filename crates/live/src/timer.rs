//! The poll loop's clock: a `timerfd` on `CLOCK_BOOTTIME` watched by
//! tokio's I/O driver.
//!
//! Why not `tokio::time::sleep`: a 1 s sleep sits in the timer wheel's
//! 64 ms level, so it fires twice (once to cascade to the 1 ms level, once
//! for real), and re-arming it for the next poll wakes the driver a third
//! time: three `epoll_wait`s per poll where hd-idle has one `sleep`. A
//! timerfd armed with an absolute deadline costs one `timerfd_settime` and
//! wakes the loop once, at the deadline; its expiration count is never
//! read ([`PollTimer::wait`]). (A periodic timerfd would not spare the
//! `timerfd_settime`: the kernel re-arms it only when its count is read.)
//! `CLOCK_BOOTTIME` is the daemon's
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
    /// The deadline it is armed for (`CLOCK_BOOTTIME` nanoseconds).
    armed: std::cell::Cell<u64>,
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
        Ok(PollTimer {
            fd,
            armed: std::cell::Cell::new(u64::MAX),
        })
    }

    /// Arms it for `at`, nanoseconds of `CLOCK_BOOTTIME` (a time in the
    /// past fires at once).
    pub fn set(&self, at: Nanos) -> io::Result<()> {
        // 0 would disarm it.
        let at = at.0.max(1);
        let ts = TimeSpec::new((at / 1_000_000_000) as _, (at % 1_000_000_000) as _);
        self.armed.set(at);
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
    ///
    /// The expiration count is never read: [`PollTimer::set`] resets it,
    /// and the descriptor is watched edge-triggered, so each expiration
    /// wakes the driver once whether or not it was read (one system call
    /// per poll less). Readiness left from an expiration before the last
    /// `set` is told apart by the clock: it is cleared, and the wait goes
    /// on, until the deadline armed now has passed.
    ///
    /// Returns `CLOCK_BOOTTIME` as read then, at or past the deadline, so
    /// that the caller need not read the clock again.
    pub async fn wait(&self) -> io::Result<Nanos> {
        loop {
            let mut ready = self.fd.readable().await?;
            ready.clear_ready();
            let now = boottime();
            if now.0 >= self.armed.get() {
                return Ok(now);
            }
        }
    }
}

/// `CLOCK_BOOTTIME` now (from the vDSO: no system call): the daemon's
/// time base, which keeps counting in suspend.
pub(crate) fn boottime() -> Nanos {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).map_or(Nanos::ZERO, |ts| {
        Nanos(ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
    })
}

/// The wall clock now, as nanoseconds since the Unix epoch.
pub fn unix_now_ns() -> Nanos {
    Nanos(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
    )
}

/// The wall clock now, Unix seconds.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a current-thread runtime, as the daemon does.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn fires_at_its_deadline_and_not_before() {
        block_on(async {
            let t = PollTimer::new().unwrap();
            let at = boottime() + Nanos::from_millis(30);
            t.set(at).unwrap();
            let woke = t.wait().await.unwrap();
            assert!(
                woke >= at && boottime() >= woke,
                "fired early, or a wrong time"
            );
            // Re-armed in the past: fires at once.
            t.set(Nanos(1)).unwrap();
            t.wait().await.unwrap();
        });
    }

    #[test]
    fn an_expiration_before_the_last_set_does_not_end_the_wait() {
        block_on(async {
            let t = PollTimer::new().unwrap();
            t.set(boottime() + Nanos::from_millis(5)).unwrap();
            // The driver sees that expiration while nobody waits.
            tokio::time::sleep(std::time::Duration::from_millis(40)).await;
            let at = boottime() + Nanos::from_millis(60);
            t.set(at).unwrap();
            t.wait().await.unwrap();
            assert!(boottime() >= at, "woken by the stale expiration");
        });
    }

    #[test]
    fn every_expiration_wakes_the_wait_without_reading_it() {
        block_on(async {
            let t = PollTimer::new().unwrap();
            for _ in 0..50 {
                let at = boottime() + Nanos::from_millis(2);
                t.set(at).unwrap();
                tokio::time::timeout(std::time::Duration::from_secs(5), t.wait())
                    .await
                    .expect("an expiration was lost")
                    .unwrap();
                assert!(boottime() >= at);
            }
        });
    }
}
