#!/usr/bin/env python3
"""Turns scripts/bench-import.sh's CSV into a markdown table and an SVG chart.

usage: bench_report.py RESULTS.csv OUT.md OUT.svg SERVER_VERSION SERVER_SETTINGS
No third-party packages: the chart is plain SVG.
"""
import csv
import datetime
import html
import os
import platform
import subprocess
import sys


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def head_to_head(rows):
    """Per-round ratios of each ringpipe contender to LOAD DATA, their median,
    and the CPU each run cost the client and the server."""
    rounds = sorted({r["round"] for r in rows}, key=int)
    by = {(r["round"], r["contender"]): r for r in rows}
    contenders = list(dict.fromkeys(r["contender"] for r in rows))
    cores = os.cpu_count() or 1

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    def cpu(c, key):
        values = [by[(r, c)][key] for r in rounds]
        return f"{median(float(v) for v in values):.1f}" if all(values) else "n/a"

    out = [
        "",
        f"Head to head, interleaved: {len(rounds)} rounds, each starting with a different "
        "contender; ratio within each round. CPU: median client (user + system) and server "
        "(`/proc/<mariadbd>/stat`) CPU seconds per run; their sum over the "
        f"{cores} cores is the shortest wall time any overlap could reach.",
        "",
        "| contender | rows/s per round | × LOAD DATA per round | median ratio | client CPU-s | server CPU-s | CPU floor s |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    ref = [float(by[(r, "LOAD DATA LOCAL")]["rows_per_s"]) for r in rounds]
    for c in contenders:
        mine = [float(by[(r, c)]["rows_per_s"]) for r in rounds]
        client, server = cpu(c, "client_cpu_s"), cpu(c, "server_cpu_s")
        floor = f"{(float(client) + float(server)) / cores:.1f}" if "n/a" not in (client, server) else "n/a"
        rates = " / ".join(f"{v:,.0f}" for v in mine)
        if c == "LOAD DATA LOCAL":
            out.append(f"| {c} | {rates} | | | {client} | {server} | {floor} |")
            continue
        ratios = [m / l for m, l in zip(mine, ref)]
        per_round = " / ".join(f"{x:.2f}" for x in ratios)
        out.append(f"| {c} | {rates} | {per_round} | {median(ratios):.2f} | {client} | {server} | {floor} |")
    return out


def head_to_head_bars(rows):
    """One bar per head-to-head contender: its median rows/s and the median
    of its per-round ratios to LOAD DATA."""
    rounds = sorted({r["round"] for r in rows}, key=int)
    by = {(r["round"], r["contender"]): float(r["rows_per_s"]) for r in rows}
    contenders = list(dict.fromkeys(r["contender"] for r in rows))

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    bars = []
    for c in contenders:
        ratios = [by[(r, c)] / by[(r, "LOAD DATA LOCAL")] for r in rounds]
        label = f"{c}, head to head ({len(rounds)} rounds)"
        bars.append((label, median(by[(r, c)] for r in rounds), median(ratios)))
    return bars


def main():
    results, out_md, out_svg, version, settings = sys.argv[1:6]
    rows = list(csv.DictReader(open(results)))
    reference = next(r for r in rows if r["contender"].startswith("LOAD DATA"))
    ref_rate = float(reference["rows_per_s"])
    lines = [
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {os.cpu_count()} vCPU, {cpu_model()}  ",
        f"Server: MariaDB {version}; {settings}  ",
        f"Command: `RINGPIPE_BENCH_ROUNDS={os.environ.get('RINGPIPE_BENCH_ROUNDS', '3')} "
        "scripts/bench-import.sh` "
        f"(RINGPIPE_BENCH_ROWS={os.environ.get('RINGPIPE_BENCH_ROWS', '1000000')})",
        "",
        "| contender | rows | seconds | rows/s | × LOAD DATA | peak RSS MiB | count | checksum | note |",
        "|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        rate = float(r["rows_per_s"] or 0)
        ratio = f"{rate / ref_rate:.2f}" if rate and "conversion" not in r["contender"] else ""
        lines.append(
            f"| {r['contender']} | {r['rows']} | {r['seconds']} | {rate:,.0f} | {ratio} | "
            f"{r['peak_rss_mib']} | {r['count_ok']} | {r['checksum_ok']} | {r['note']} |"
        )
    h2h = os.path.join(os.path.dirname(results), "head_to_head.csv")
    if os.path.exists(h2h):
        lines += head_to_head(list(csv.DictReader(open(h2h))))
    open(out_md, "w").write("\n".join(lines) + "\n")

    # (label, rows/s, ratio to LOAD DATA): the single runs, then the
    # head-to-head medians, whose ratios are the ones taken within rounds.
    bars = [
        (r["contender"], float(r["rows_per_s"] or 0), float(r["rows_per_s"] or 0) / ref_rate)
        for r in rows
        if "conversion" not in r["contender"]
    ]
    if os.path.exists(h2h):
        bars += head_to_head_bars(list(csv.DictReader(open(h2h))))
    width, bar_h, left = 900, 22, 330
    top = 40
    height = top + bar_h * len(bars) + 40
    peak = max(v for _, v, _ in bars) or 1
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<text x="10" y="22" font-size="15">Import throughput, rows/s ({html.escape(cpu_model())})</text>',
    ]
    for i, (name, value, ratio) in enumerate(bars):
        y = top + i * bar_h
        w = (width - left - 120) * value / peak
        colour = "#c0392b" if "ringpipe" in name else "#7f8c8d"
        svg.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{html.escape(name)}</text>')
        svg.append(f'<rect x="{left}" y="{y + 3}" width="{w:.1f}" height="{bar_h - 6}" fill="{colour}"/>')
        svg.append(f'<text x="{left + w + 6:.1f}" y="{y + 15}">{value:,.0f} ({ratio:.2f}×)</text>')
    svg.append("</svg>")
    open(out_svg, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
