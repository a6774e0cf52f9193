//! Quantities in words, as the daemon's lines and `lull status` write
//! them: one style for durations and energy across the status blocks and
//! the journal's daily line.

/// Energy saved, `wh` watt-hours, in words: two decimals of Wh, or of
/// mWh below a tenth of a Wh (the first minutes of a shadow, where
/// "-0.00 Wh" said neither how much nor that a spin-up had cost more than
/// it saved).
pub fn energy(wh: f64) -> String {
    if wh.abs() < 5e-6 {
        // Nothing (no "0.00 Wh" beside the mWh of a neighbour).
        "0 Wh".to_string()
    } else if wh.abs() >= 0.1 {
        format!("{wh:.2} Wh")
    } else {
        format!("{:.2} mWh", wh * 1000.0)
    }
}
/// A duration of `s` seconds in words: a tenth of a second below a
/// minute (`36.2s`), else whole units (`28m51s`, `1h5m`).
pub fn secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return format!("{s}");
    }
    if s < 60.0 {
        return format!("{}s", (s * 10.0).round() / 10.0);
    }
    // As the daemon's own lines write durations (`next try in 28m51s`,
    // `1h5m`), so one block does not mix two styles.
    lull_core::time::Nanos::from_secs(s.round() as u64)
        .approx()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The journal's daily line once printed the best fixed timeout as
    /// `36206896552ns` and a quiet disk's 10 mWh as "0.0 Wh".
    #[test]
    fn durations_and_energy_read_as_status_writes_them() {
        assert_eq!(secs(36.206_896_552), "36.2s");
        assert_eq!(secs(0.0), "0s");
        assert_eq!(secs(1500.0), "25m");
        assert_eq!(secs(3_723.4), "1h2m");
        assert_eq!(energy(0.010_13), "10.13 mWh");
        assert_eq!(energy(1.549), "1.55 Wh");
        assert_eq!(energy(-0.3), "-0.30 Wh");
        assert_eq!(energy(0.0), "0 Wh");
    }
}
