//! How the workspace's randomized differential tests decide how long to
//! run: a fixed number of cases by default, so the suite stays quick and
//! repeatable, and for a set time with a seed of its own when asked.
//!
//! A test named by `PREFIX` reads `PREFIX_SECS` (run for that many
//! seconds) and `PREFIX_SEED` (start its generator there):
//!
//! ```text
//! RINGPIPE_CSV_FUZZ_SECS=600 RINGPIPE_CSV_FUZZ_SEED=7 cargo test -p ringpipe-text
//! ```
//!
//! ```
//! use ringpipe_hunt::Hunt;
//!
//! let hunt = Hunt::from_env("EXAMPLE_HUNT", 100, 42);
//! let mut random = hunt.seed();
//! let mut case = 0;
//! while hunt.more(case) {
//!     random = random.wrapping_mul(6364136223846793005).wrapping_add(1);
//!     case += 1;
//! }
//! hunt.report(case, "cases");
//! # assert_eq!(case, 100);
//! ```

use std::time::{Duration, Instant};

pub mod spell;

/// One test's run: how many cases, or for how long, and its seed.
#[derive(Debug, Clone, Copy)]
pub struct Hunt {
    /// Run for this long (`PREFIX_SECS`), or `cases` cases.
    budget: Option<Duration>,
    cases: u64,
    seed: u64,
    started: Instant,
}

impl Hunt {
    /// `cases` cases from `seed`, unless `PREFIX_SECS` and `PREFIX_SEED`
    /// ask for a timed hunt or another seed. A value that is not a whole
    /// number is ignored.
    pub fn from_env(prefix: &str, cases: u64, seed: u64) -> Self {
        let env = |suffix: &str| {
            std::env::var(format!("{prefix}_{suffix}"))
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
        };
        Hunt {
            budget: env("SECS").map(Duration::from_secs),
            cases,
            seed: env("SEED").unwrap_or(seed),
            started: Instant::now(),
        }
    }

    /// Where the test's generator starts.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether case `case` (counted from 0) runs: the first always does,
    /// the rest while cases or time are left.
    pub fn more(&self, case: u64) -> bool {
        case == 0
            || match self.budget {
                Some(budget) => self.started.elapsed() < budget,
                None => case < self.cases,
            }
    }

    /// Prints what a timed hunt read (`done` and what they were), for its
    /// log; a default run prints nothing.
    pub fn report(&self, done: u64, what: &str) {
        if self.budget.is_some() {
            eprintln!("{done} {what} in {:.0?}", self.started.elapsed());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_hunt_runs_its_cases_and_the_first_case_always_runs() {
        let hunt = Hunt::from_env("RINGPIPE_HUNT_UNSET_FOR_TESTS", 3, 9);
        assert_eq!(hunt.seed(), 9);
        assert_eq!((0..10).filter(|&c| hunt.more(c)).count(), 3);
        let none = Hunt::from_env("RINGPIPE_HUNT_UNSET_FOR_TESTS", 0, 9);
        assert!(none.more(0) && !none.more(1));
    }

    #[test]
    fn a_timed_hunt_runs_until_its_time_is_up() {
        let hunt = Hunt {
            budget: Some(Duration::ZERO),
            cases: 1_000,
            seed: 1,
            started: Instant::now(),
        };
        assert!(hunt.more(0));
        assert!(!hunt.more(1));
    }
}
