//! The events hooks run on and the hooks a disk has: data the config
//! parses and the controller emits. The shell's `hooks` module runs them.

/// What happened to a disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookEvent {
    /// A spin-down was attempted (after its outcome: `LULL_RESULT`).
    Spindown,
    /// A disk in standby was found spinning again.
    Spinup,
    /// An idle period ended: the disk is in use again.
    Wake,
    /// The idle task started (or resumed).
    TaskStart,
    /// The idle task stopped (or paused).
    TaskStop,
}

impl HookEvent {
    /// Every event, in config-key order.
    pub const ALL: [HookEvent; 5] = [
        HookEvent::Spindown,
        HookEvent::Spinup,
        HookEvent::Wake,
        HookEvent::TaskStart,
        HookEvent::TaskStop,
    ];
    /// The name in `LULL_EVENT` and the metrics' `event` label.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::Spindown => "spindown",
            HookEvent::Spinup => "spinup",
            HookEvent::Wake => "wake",
            HookEvent::TaskStart => "task_start",
            HookEvent::TaskStop => "task_stop",
        }
    }
    /// The config key (`on_spindown`…).
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::Spindown => "on_spindown",
            HookEvent::Spinup => "on_spinup",
            HookEvent::Wake => "on_wake",
            HookEvent::TaskStart => "on_task_start",
            HookEvent::TaskStop => "on_task_stop",
        }
    }
}

/// The hooks of a disk (or the global defaults): one argv per event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Indexed like [`HookEvent::ALL`].
    pub argv: [Option<Vec<String>>; 5],
}

impl Hooks {
    /// The hook for `ev`.
    pub fn get(&self, ev: HookEvent) -> Option<&Vec<String>> {
        self.argv[ev as usize].as_ref()
    }
    /// These hooks, with `defaults` for the events they leave unset.
    pub fn or(mut self, defaults: &Hooks) -> Hooks {
        for (a, d) in self.argv.iter_mut().zip(&defaults.argv) {
            if a.is_none() {
                a.clone_from(d);
            }
        }
        self
    }
}
