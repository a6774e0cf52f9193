//! What a disk's log has said already, so a line repeated at every idle
//! period or every poll is written once (at info level) and then kept
//! quiet (at debug level, or not at all). A sub-machine of
//! [`DiskController`](super::DiskController): it decides nothing about
//! the disk, only whether a line is news.

/// The log lines a disk has said, by kind.
#[derive(Debug, Default)]
pub(super) struct Reporter {
    /// The reason of the last skipped task start, whose first occurrence
    /// is written at once.
    last_skip: Option<String>,
    /// The kinds of the wear budget's and the break-even check's refusals
    /// logged at info level since the last standby went (the same again
    /// goes to debug level).
    refusals_said: Vec<&'static str>,
    /// Why the activity log last said the disk's standbys are withheld
    /// (`Record::Withheld`; empty: not, or not said).
    withheld_logged: String,
    /// The programs spinning this disk down beside lull already warned of
    /// (by pid), so each is warned of once.
    pub(super) spinners_warned: Vec<u32>,
    /// The routine lines of each idle period go to debug level
    /// (`routine!`): a `flush`, `command` or `jobs` disk said its first
    /// one at info level.
    quiet_routine: bool,
}

impl Reporter {
    /// Whether a skipped start's reason `why` differs from the last one
    /// (and so is news to write at once); remembers it.
    pub(super) fn new_skip(&mut self, why: &str) -> bool {
        if self.last_skip.as_deref() == Some(why) {
            return false;
        }
        self.last_skip = Some(why.to_string());
        true
    }

    /// Whether a refusal of `kind` is the first since the last standby
    /// went (said at info level); remembers it.
    pub(super) fn new_refusal(&mut self, kind: &'static str) -> bool {
        if self.refusals_said.contains(&kind) {
            return false;
        }
        self.refusals_said.push(kind);
        true
    }

    /// A standby went: the next refusal of each kind is news again.
    pub(super) fn refusals_over(&mut self) {
        self.refusals_said.clear();
    }

    /// Whether `said` (why standbys are withheld; empty: they are not)
    /// differs from what the activity log last said; remembers it.
    pub(super) fn new_withheld(&mut self, said: &str) -> bool {
        if said == self.withheld_logged {
            return false;
        }
        self.withheld_logged = said.to_string();
        true
    }

    /// Whether the spinner with process id `pid` is not yet warned of;
    /// remembers it.
    pub(super) fn new_spinner(&mut self, pid: u32) -> bool {
        if self.spinners_warned.contains(&pid) {
            return false;
        }
        self.spinners_warned.push(pid);
        true
    }

    /// Whether the routine lines of an idle period go to debug level.
    pub(super) fn quiet_routine(&self) -> bool {
        self.quiet_routine
    }

    /// The first idle period's stop has said its routine lines are quiet
    /// from here on.
    pub(super) fn quiet_from_now(&mut self) {
        self.quiet_routine = true;
    }
}
