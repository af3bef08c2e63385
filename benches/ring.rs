//! Ring-buffer benchmarks: `ringpipe-ring` against the `disruptor` crate,
//! `crossbeam-channel` (bounded) and `std::sync::mpsc::sync_channel`.
//!
//! `cargo bench --bench ring [FILTER]` runs every case whose id contains
//! FILTER. On a noisy machine absolute numbers swing run to run, so each
//! round runs every contender of a case once (starting with a different
//! one each round), the ratio ours/peer is taken within the round, and the
//! report shows the median of the per-round ratios beside the median
//! events/s. Environment:
//!
//! - `RINGPIPE_BENCH_EVENTS`: events per throughput run (default 20M);
//! - `RINGPIPE_BENCH_ROUNDS`: rounds (default 7);
//! - `RINGPIPE_BENCH_TRIPS`: measured round trips per latency run of the
//!   rings (default 1M; the channels do at most 100k, see `channel_trips`);
//! - `RINGPIPE_BENCH_LOAD_SECS`: seconds per run of the steady-load case
//!   (`load`, default 0.5);
//! - `RINGPIPE_BENCH_QUICK=1`: tiny counts and one round (a CI smoke run);
//! - `RINGPIPE_BENCH_ONLY=NAME`: run only the contenders whose name contains
//!   NAME (e.g. to profile one of them under `valgrind --tool=callgrind`;
//!   ratios are then not computed).
//! - `RINGPIPE_BENCH_NO_GATHER=1`: our processors hand over every event at
//!   once (`WaitStrategy::without_gathering`), to measure what gathering
//!   buys;
//! - `RINGPIPE_BENCH_BATCHES=1`: after each of our single-producer runs,
//!   print every processor's mean batch size (diagnostic: the run's time
//!   then includes waiting for the ring to drain).
//!
//! Both rings get the same wait strategy in every case: busy-spin is each
//! ring's own busy-spin, and yielding is spin for 100 polls, then yield
//! (ours `WaitStrategy::yielding`, and `SpinThenYield` for the `disruptor`
//! crate, which ships none). Pinned and unpinned cases are reported apart.
//!
//! Final figures, at a quiet time (nothing else running; about 15 minutes):
//!
//! ```text
//! RINGPIPE_BENCH_ROUNDS=7 cargo bench --bench ring > ring-bench.md
//! ```
//!
//! `cargo bench --bench ring load` runs only the steady-load latency case
//! (1M and 10M events/s, p50/p99/p99.9 publish→handle; ours with and
//! without gathering, and the `disruptor` crate).
//!
//! A full unfiltered run (not quick) writes the SVG chart to
//! `docs/img/ring-throughput.svg`.

mod support;

use std::path::Path;
use std::time::Duration;

use support::latency::{self, Trips};
use support::load::{self, Load};
use support::peers::{channel, disruptor_crate, ours, Crossbeam, StdSync};
use support::stats::{median, min_max, rate};
use support::{chart, Params, Topology, Wait};

/// Where the chart goes, relative to the workspace root.
const CHART: &str = "docs/img/ring-throughput.svg";

/// Run-size settings, from the environment.
#[derive(Debug, Clone, Copy)]
struct Config {
    /// `RINGPIPE_BENCH_QUICK`: a smoke run, which does not touch the chart.
    quick: bool,
    events: u64,
    rounds: usize,
    trips: Trips,
    /// Seconds per run of the steady-load case.
    load_secs: f64,
}

impl Config {
    fn from_env() -> Self {
        let quick = std::env::var("RINGPIPE_BENCH_QUICK").is_ok_and(|v| v != "0");
        let (events, rounds, trips) = match quick {
            true => (200_000, 1, 20_000),
            false => (20_000_000, 7, 1_000_000),
        };
        let trips = env_u64("RINGPIPE_BENCH_TRIPS").unwrap_or(trips);
        let load_secs = match std::env::var("RINGPIPE_BENCH_LOAD_SECS") {
            Ok(secs) => secs.parse().expect("RINGPIPE_BENCH_LOAD_SECS is a number"),
            Err(_) if quick => 0.02,
            Err(_) => 0.5,
        };
        Config {
            quick,
            load_secs,
            events: env_u64("RINGPIPE_BENCH_EVENTS").unwrap_or(events).max(1024),
            rounds: env_u64("RINGPIPE_BENCH_ROUNDS").map_or(rounds, |r| r.max(1) as usize),
            trips: Trips {
                measured: trips.max(100),
                warmup: (trips / 100).max(100),
            },
        }
    }
}

impl Config {
    /// Round trips for the channel contenders: at most 100k, because a
    /// channel parks its receiver and a wake-up costs ~50 µs on this VM, so
    /// 1M round trips of `sync_channel` alone would take about a minute.
    fn channel_trips(&self) -> Trips {
        let measured = self.trips.measured.min(CHANNEL_TRIPS);
        Trips {
            measured,
            warmup: self.trips.warmup.min(measured / 100).max(100),
        }
    }
}

/// Cap on the channel contenders' measured round trips (see `channel_trips`).
const CHANNEL_TRIPS: u64 = 100_000;

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let parsed = value.replace('_', "").parse();
    Some(parsed.unwrap_or_else(|_| panic!("{name}={value:?} is not a number")))
}

/// A contender: a name and one timed run.
#[derive(Clone, Copy)]
struct Contender {
    name: &'static str,
    run: fn(&Params) -> Duration,
}

const OURS: Contender = Contender {
    name: "ringpipe-ring",
    run: ours::run,
};
const DISRUPTOR: Contender = Contender {
    name: "disruptor 4.4",
    run: disruptor_crate::run,
};
const CROSSBEAM: Contender = Contender {
    name: "crossbeam-channel",
    run: channel::run::<Crossbeam>,
};
const STD: Contender = Contender {
    name: "std sync_channel",
    run: channel::run::<StdSync>,
};
const ALL: [Contender; 4] = [OURS, DISRUPTOR, CROSSBEAM, STD];
const RINGS: [Contender; 2] = [OURS, DISRUPTOR];

/// One throughput case; `contenders[0]` is ours.
struct Case {
    id: &'static str,
    title: &'static str,
    params: Params,
    /// Fraction of `RINGPIPE_BENCH_EVENTS` this case publishes per run.
    scale: f64,
    /// More busy threads than the machine's 2 cores.
    oversubscribed: bool,
    contenders: &'static [Contender],
}

fn cases() -> Vec<Case> {
    let p = |topology, wait, pinned, batch| Params {
        events: 0,
        wait,
        pinned,
        batch,
        topology,
    };
    use Topology::*;
    use Wait::*;
    let case = |id, title, params, scale, oversubscribed, contenders| Case {
        id,
        title,
        params,
        scale,
        oversubscribed,
        contenders,
    };
    vec![
        case(
            "spsc-busy-pinned",
            "1P→1C busy-spin, pinned",
            p(Spsc, Busy, true, 1),
            1.0,
            false,
            &ALL,
        ),
        case(
            "spsc-busy-unpinned",
            "1P→1C busy-spin, unpinned",
            p(Spsc, Busy, false, 1),
            1.0,
            false,
            &ALL,
        ),
        case(
            "spsc-yield-pinned",
            "1P→1C yielding, pinned",
            p(Spsc, Yield, true, 1),
            1.0,
            false,
            &ALL,
        ),
        case(
            "spsc-yield-unpinned",
            "1P→1C yielding, unpinned",
            p(Spsc, Yield, false, 1),
            1.0,
            false,
            &ALL,
        ),
        case(
            "batch64",
            "1P→1C batch 64, busy-spin, pinned",
            p(Spsc, Busy, true, 64),
            1.0,
            false,
            &RINGS,
        ),
        case(
            "batch64-unpinned",
            "1P→1C batch 64, busy-spin, unpinned",
            p(Spsc, Busy, false, 64),
            1.0,
            false,
            &RINGS,
        ),
        case(
            "batch256",
            "1P→1C batch 256, busy-spin, pinned",
            p(Spsc, Busy, true, 256),
            1.0,
            false,
            &RINGS,
        ),
        case(
            "mpsc2-yield",
            "2P→1C yielding †",
            p(Mpsc2, Yield, false, 1),
            0.5,
            true,
            &ALL,
        ),
        case(
            "mpsc2-busy",
            "2P→1C busy-spin †",
            p(Mpsc2, Busy, false, 1),
            0.1,
            true,
            &RINGS,
        ),
        case(
            "shard2-yield",
            "1P→2 sharded yielding †",
            p(Shard2, Yield, false, 1),
            0.5,
            true,
            &ALL,
        ),
        case(
            "pipeline2-yield",
            "1P→A→B yielding †",
            p(Pipeline2, Yield, false, 1),
            0.5,
            true,
            &ALL,
        ),
    ]
}

/// Per-contender results of one case.
struct CaseResult {
    title: &'static str,
    names: Vec<&'static str>,
    /// Events/s of each run, per contender.
    rates: Vec<Vec<f64>>,
    /// Per-round ratio ours/peer, per contender (empty for ours).
    ratios: Vec<Vec<f64>>,
}

fn run_case(case: &Case, config: &Config) -> CaseResult {
    let batch = case.params.batch as u64;
    let events = ((config.events as f64 * case.scale) as u64).max(1024) / batch * batch;
    let params = Params {
        events,
        ..case.params
    };
    let only = std::env::var("RINGPIPE_BENCH_ONLY").unwrap_or_default();
    let contenders: Vec<Contender> = case
        .contenders
        .iter()
        .copied()
        .filter(|c| c.name.contains(&only))
        .collect();
    let k = contenders.len();
    let warmup = Params {
        events: (events / 20).max(batch * 16) / batch * batch,
        ..params
    };
    for contender in &contenders {
        (contender.run)(&warmup);
    }
    let (mut rates, mut ratios) = (vec![Vec::new(); k], vec![Vec::new(); k]);
    for round in 0..config.rounds {
        let mut this_round = vec![0.0; k];
        for i in (0..k).map(|i| (i + round) % k) {
            let contender = contenders[i];
            let elapsed = (contender.run)(&params);
            this_round[i] = events as f64 / elapsed.as_secs_f64();
            eprintln!(
                "  {} round {round}: {:<18} {:>10} ev/s",
                case.id,
                contender.name,
                rate(this_round[i])
            );
        }
        for i in 0..k {
            rates[i].push(this_round[i]);
            if i > 0 && contenders[0].name == OURS.name {
                ratios[i].push(this_round[0] / this_round[i]);
            }
        }
    }
    let names = contenders.iter().map(|c| c.name).collect();
    CaseResult {
        title: case.title,
        names,
        rates,
        ratios,
    }
}

/// Latency of one contender: p50, p99, p99.9 in ns per round.
struct LatencyResult {
    name: &'static str,
    percentiles: Vec<[f64; 3]>,
}

impl LatencyResult {
    /// Percentile `j` (0: p50, 1: p99, 2: p99.9) of every round.
    fn column(&self, j: usize) -> Vec<f64> {
        self.percentiles.iter().map(|p| p[j]).collect()
    }

    /// This contender's p99 over `peer`'s, round by round.
    fn p99_ratios(&self, peer: &LatencyResult) -> Vec<f64> {
        self.column(1)
            .iter()
            .zip(peer.column(1))
            .map(|(o, p)| o / p)
            .collect()
    }
}

fn run_latency(config: &Config) -> Vec<LatencyResult> {
    type PingPong = fn(Trips) -> hdrhistogram::Histogram<u64>;
    let contenders: [(&'static str, PingPong); 4] = [
        (OURS.name, latency::ours::run),
        (DISRUPTOR.name, latency::disruptor_crate::run),
        (CROSSBEAM.name, latency::channels::<Crossbeam>),
        (STD.name, latency::channels::<StdSync>),
    ];
    let mut results: Vec<LatencyResult> = contenders
        .iter()
        .map(|(name, _)| LatencyResult {
            name,
            percentiles: Vec::new(),
        })
        .collect();
    let k = contenders.len();
    for round in 0..config.rounds {
        for i in (0..k).map(|i| (i + round) % k) {
            let trips = if i < 2 {
                config.trips
            } else {
                config.channel_trips()
            };
            let histogram = (contenders[i].1)(trips);
            let q = |q| histogram.value_at_quantile(q) as f64;
            let row = [q(0.5), q(0.99), q(0.999)];
            eprintln!(
                "  latency round {round}: {:<18} p50 {} p99 {} p99.9 {} ns",
                contenders[i].0, row[0], row[1], row[2]
            );
            results[i].percentiles.push(row);
        }
    }
    results
}

/// The offered loads of the steady-load case, in events per second.
const LOADS: [u64; 2] = [1_000_000, 10_000_000];

/// Our ring without gathering, in the steady-load case.
const OURS_IMMEDIATE: &str = "ringpipe-ring, without_gathering";

/// Steady-load latency: per load, ours (as configured by default, then
/// `without_gathering`) and the `disruptor` crate's, the last the peer.
fn run_load(config: &Config) -> Vec<(u64, [LatencyResult; 3])> {
    type Run = fn(Load) -> hdrhistogram::Histogram<u64>;
    let contenders: [(&'static str, Run); 3] = [
        (OURS.name, load::ours::run),
        (OURS_IMMEDIATE, load::ours::run_without_gathering),
        (DISRUPTOR.name, load::disruptor_crate::run),
    ];
    LOADS
        .iter()
        .map(|&rate| {
            let load = Load {
                rate,
                events: ((rate as f64 * config.load_secs) as u64).max(1000),
            };
            let mut results = contenders.map(|(name, _)| LatencyResult {
                name,
                percentiles: Vec::new(),
            });
            for round in 0..config.rounds {
                for i in (0..contenders.len()).map(|i| (i + round) % contenders.len()) {
                    let histogram = (contenders[i].1)(load);
                    let q = |q| histogram.value_at_quantile(q) as f64;
                    let row = [q(0.5), q(0.99), q(0.999)];
                    eprintln!(
                        "  load {rate}/s round {round}: {:<33} p50 {} p99 {} p99.9 {} ns",
                        contenders[i].0, row[0], row[1], row[2]
                    );
                    results[i].percentiles.push(row);
                }
            }
            (rate, results)
        })
        .collect()
}

fn print_load(results: &[(u64, [LatencyResult; 3])]) {
    println!("| offered load | contender | median p50 ns | median p99 ns | median p99.9 ns | min–max p99 ns | median ratio p99 ours/disruptor (per round) |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (rate, contenders) in results {
        let peer = &contenders[contenders.len() - 1];
        for (i, result) in contenders.iter().enumerate() {
            let [p50, p99, p999] = [0, 1, 2].map(|j| median(&result.column(j)));
            let (lo, hi) = min_max(&result.column(1));
            let ratio = if std::ptr::eq(result, peer) {
                "—".to_string()
            } else {
                format!("{:.2}", median(&result.p99_ratios(peer)))
            };
            let load = if i == 0 {
                format!("{}M/s", rate / 1_000_000)
            } else {
                String::new()
            };
            println!(
                "| {load} | {} | {p50:.0} | {p99:.0} | {p999:.0} | {lo:.0}–{hi:.0} | {ratio} |",
                result.name
            );
        }
    }
}

fn ratio_cells(ratios: &[f64]) -> (String, String) {
    if ratios.is_empty() {
        return ("—".into(), "—".into());
    }
    let (lo, hi) = min_max(ratios);
    (format!("{:.2}", median(ratios)), format!("{lo:.2}–{hi:.2}"))
}

fn print_throughput(results: &[CaseResult]) {
    println!("| case | contender | median events/s | median ratio ours/peer (per round) | min–max ratio |");
    println!("|---|---|---:|---:|---:|");
    for result in results {
        for (i, name) in result.names.iter().enumerate() {
            let (ratio, range) = ratio_cells(&result.ratios[i]);
            let case = if i == 0 { result.title } else { "" };
            println!(
                "| {case} | {name} | {} | {ratio} | {range} |",
                rate(median(&result.rates[i]))
            );
        }
    }
}

fn print_latency(results: &[LatencyResult]) {
    println!("| contender | median p50 ns | median p99 ns | median p99.9 ns | median ratio p99 ours/peer (per round) | min–max ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, result) in results.iter().enumerate() {
        let ratios = match i {
            0 => Vec::new(),
            _ => results[0].p99_ratios(result),
        };
        let (ratio, range) = ratio_cells(&ratios);
        let [p50, p99, p999] = [0, 1, 2].map(|j| median(&result.column(j)));
        println!(
            "| {} | {p50:.0} | {p99:.0} | {p999:.0} | {ratio} | {range} |",
            result.name
        );
    }
}

/// The targets: (case id, peer, minimum median ratio ours/peer).
const TARGETS: [(&str, &str, f64); 8] = [
    ("spsc-busy-pinned", "disruptor 4.4", 1.5),
    ("spsc-busy-pinned", "crossbeam-channel", 5.0),
    ("batch64", "disruptor 4.4", 1.2),
    ("batch64-unpinned", "disruptor 4.4", 1.2),
    ("batch256", "disruptor 4.4", 1.0),
    ("mpsc2-yield", "disruptor 4.4", 1.0),
    ("pipeline2-yield", "disruptor 4.4", 1.0),
    ("shard2-yield", "disruptor 4.4", 1.0),
];

fn print_targets(cases: &[Case], results: &[CaseResult], latency: Option<&[LatencyResult]>) {
    println!("Targets (median per-round ratio):");
    for (id, peer, want) in TARGETS {
        let Some(at) = cases.iter().position(|c| c.id == id) else {
            continue;
        };
        let result = &results[at];
        let Some(i) = result.names.iter().position(|n| *n == peer) else {
            continue;
        };
        let got = median(&result.ratios[i]);
        let verdict = if got >= want { "met" } else { "NOT met" };
        println!(
            "- {}: ours/{peer} = {got:.2} (target ≥ {want}) — {verdict}",
            result.title
        );
    }
    if let Some([ours, disruptor, ..]) = latency {
        // Judged like every other target, by the median of the per-round
        // ratios: the medians of p99 alone hide which contender won a round.
        let got = median(&ours.p99_ratios(disruptor));
        let p99 = |r: &LatencyResult| median(&r.column(1));
        let verdict = if got <= 1.0 { "met" } else { "NOT met" };
        println!(
            "- round-trip p99: ours/disruptor = {got:.2} (target ≤ 1.0; medians {:.0} vs {:.0} ns) — {verdict}",
            p99(ours),
            p99(disruptor)
        );
    }
}

fn write_chart(results: &[CaseResult]) {
    let groups: Vec<chart::Group> = results
        .iter()
        .map(|r| chart::Group {
            case: r.title.to_string(),
            bars: r
                .names
                .iter()
                .zip(&r.rates)
                .map(|(n, v)| (n.to_string(), median(v)))
                .collect(),
        })
        .collect();
    let names = ALL.map(|c| c.name);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CHART);
    match chart::write(&path, &names, &groups) {
        Ok(()) => println!("Chart: {CHART}"),
        Err(error) => eprintln!("could not write {CHART}: {error}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test` runs bench targets without `--bench`: nothing to do then.
    if !args.iter().any(|a| a == "--bench") {
        println!("ring benchmarks: run with `cargo bench --bench ring [FILTER]`");
        return;
    }
    let filter = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_default();
    let config = Config::from_env();
    let all = cases();
    let cases: Vec<Case> = all.into_iter().filter(|c| c.id.contains(&filter)).collect();
    println!(
        "ring benchmarks: {} events/run, {} rounds, {} round trips, capacity {}; filter {filter:?}",
        config.events,
        config.rounds,
        config.trips.measured,
        support::CAPACITY,
    );
    let results: Vec<CaseResult> = cases
        .iter()
        .map(|case| {
            eprintln!("{} ...", case.id);
            run_case(case, &config)
        })
        .collect();
    let latency = "latency".contains(&filter).then(|| {
        eprintln!("latency ...");
        run_latency(&config)
    });
    let steady = "load".contains(&filter).then(|| {
        eprintln!("load ...");
        run_load(&config)
    });
    println!();
    if !results.is_empty() {
        print_throughput(&results);
        println!();
        if cases.iter().any(|c| c.oversubscribed) {
            println!("† oversubscribed: 3 busy threads on 2 cores; bounded by event count.");
            println!();
        }
    }
    if let Some(latency) = &latency {
        println!(
            "Round-trip latency, ping-pong, {} round trips per run for the rings and {} for the channels, pinned cores 0/1, busy-spin rings (ours with its publication markers in the slots):",
            config.trips.measured,
            config.channel_trips().measured,
        );
        println!();
        print_latency(latency);
        println!();
    }
    if let Some(steady) = &steady {
        println!(
            "Latency publish→handle under a steady offered load, {} s per run, busy-spin, pinned cores 0/1, default slot layout:",
            config.load_secs
        );
        println!();
        print_load(steady);
        println!();
    }
    print_targets(&cases, &results, latency.as_deref());
    // Only a full, unfiltered run replaces the published chart.
    if filter.is_empty() && !config.quick {
        write_chart(&results);
    }
}
