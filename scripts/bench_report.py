#!/usr/bin/env python3
"""Turns scripts/bench-import.sh's runs into markdown tables.

usage: bench_report.py RUNS.csv OUT.md SERVER_VERSION SERVER_SETTINGS FULL_ROWS

One table per transport. Each contender's time is scaled to FULL_ROWS (a
slice is extrapolated per row); its ratio to ringpipe is taken within each
round (same transport) and the median of those ratios is the figure to
quote. CPU seconds are per 1M rows, medians of the rounds. When ringpipe
also ran on the ready CSV, a second table gives each baseline's ratio to
that run: the comparison on the same input. No third-party packages.
"""

import csv
import datetime
import os
import subprocess
import sys
from collections import defaultdict

#: ringpipe's run on the ready CSV, the baselines' own input.
CSV_RUN = "ringpipe of the ready CSV"


def lscpu():
    """(model name, CPU count) from lscpu."""
    model, cpus = "unknown CPU", str(os.cpu_count() or "?")
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return model, cpus
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            model = value.strip()
        elif key.strip() == "CPU(s)":
            cpus = value.strip()
    return model, cpus


def median(values):
    values = sorted(values)
    n = len(values)
    if n == 0:
        return None
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def table(rows, base, label, full_rows, shown):
    """Markdown lines: a row per contender for which `shown(name)` holds,
    with its time's ratio to contender `base`'s in the same round."""
    scale = lambda r: full_rows / int(r["rows"])  # noqa: E731
    per_m = lambda r: 1e6 / int(r["rows"])  # noqa: E731
    ring = {r["round"]: float(r["wall_s"]) * scale(r) for r in rows if r["contender"] == base}
    lines = [
        "",
        f"| contender | rows run | time s (median) | × {label} (median) | × {label} per round "
        "| client CPU-s / 1M | server CPU-s / 1M | table (count, CHECKSUM) |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    # The base first, then the others in the order they ran.
    for name in sorted(dict.fromkeys(r["contender"] for r in rows), key=lambda n: n != base):
        if not shown(name):
            continue
        mine = [r for r in rows if r["contender"] == name]
        times = [float(r["wall_s"]) * scale(r) for r in mine]
        ratios = [t / ring[r["round"]] for t, r in zip(times, mine) if r["round"] in ring]
        client = median([float(r["client_cpu_s"]) * per_m(r) for r in mine])
        servers = [float(r["server_cpu_s"]) * per_m(r) for r in mine if r["server_cpu_s"]]
        server = median(servers) if len(servers) == len(mine) else None
        wrong = [r["check"] for r in mine if r["check"] != "ok"]
        check = f"{wrong[0]} (rows, checksum) in {len(wrong)} of {len(mine)} runs" if wrong else "ok"
        lines.append(
            f"| {name} | {mine[0]['rows']} | {fmt(median(times), '.2f')} "
            f"| {fmt(median(ratios), '.2f')} | {' / '.join(f'{x:.2f}' for x in ratios)} "
            f"| {fmt(client, '.2f')} | {fmt(server, '.2f')} | {check} |"
        )
    return lines


def main():
    runs_csv, out_md, version, settings, full_rows = sys.argv[1:6]
    full_rows = int(full_rows)
    runs = list(csv.DictReader(open(runs_csv)))
    rounds = sorted({int(r["round"]) for r in runs})
    by_transport = defaultdict(list)
    for r in runs:
        by_transport[r["transport"]].append(r)

    model, cpus = lscpu()
    env = os.environ.get
    # The variables that chose the contenders, as the command was given.
    chosen = "".join(
        f"{name}='{env(name)}' "
        for name in ("RINGPIPE_BENCH_ONLY", "RINGPIPE_BENCH_VARIANTS")
        if env(name)
    )
    lines = [
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {model}, {cpus} CPUs  ",
        f"Server: MariaDB {version}; {settings}  ",
        f"Command: `{chosen}RINGPIPE_BENCH_ROWS={full_rows} RINGPIPE_BENCH_ROUNDS={len(rounds)} "
        f"RINGPIPE_BENCH_SLICE={env('RINGPIPE_BENCH_SLICE', '20000')} scripts/bench-import.sh`  ",
        f"{len(rounds)} timed rounds after an untimed warm-up, contender order rotated each "
        "round; every table checked by "
        "row count and CHECKSUM TABLE against a reference load.",
        "",
        "Time: seconds for the full input (slices extrapolated per row). × ringpipe: the "
        "contender's time over ringpipe's in the same round and transport (> 1 is slower), "
        "median over the rounds. CPU: client (user + system of its processes) and server "
        "(/proc/<mariadbd>/stat) CPU seconds per 1M rows, medians.",
    ]
    for transport, rows in by_transport.items():
        lines += ["", f"Transport: {transport}"]
        lines += table(rows, "ringpipe", "ringpipe", full_rows, lambda name: True)
        if any(r["contender"] == CSV_RUN for r in rows):
            lines += [
                "",
                "The same runs against ringpipe of the ready CSV (the baselines' input):",
            ]
            lines += table(rows, CSV_RUN, "CSV run", full_rows, lambda name: name != "ringpipe")
    open(out_md, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
