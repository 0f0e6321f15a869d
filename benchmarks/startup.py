"""How long the ``zhiku`` command takes from start to exit (targets: ``--help`` ≤ 0.4 s, a search
of the demo knowledge base ≤ 1.5 s, query embedding included).

    python benchmarks/startup.py                      # builds the demo knowledge base in a temp dir
    python benchmarks/startup.py --home DIR --runs 5  # DIR built by ``zhiku --home DIR demo`` if empty
    python benchmarks/startup.py --json startup.json

Each command runs as a new process, as a user runs it: the figure is whole-process wall time,
interpreter start-up and imports included, median of ``--runs`` after one warm-up run (which
also leaves the built jieba dictionary in the data directory, as any first search does). Other
work on the machine slows every process alike, so ``python -c pass`` and ``python -c "import
zhiku"`` are measured in the same rounds as a baseline, and each command is also shown less the
bare interpreter; CPU time (user + system) is shown beside, as on a quiet machine the wall
time of a single-threaded start comes close to it. The rounds interleave the commands, so a
burst of load touches them all.
A search never reuses an embedding from an earlier process: query embeddings are cached only in
memory, so every run embeds its query.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"zhiku --help": 0.4, "zhiku search (zh)": 1.5, "zhiku search (en)": 1.5}


def commands(home: Path) -> dict[str, list[str]]:
    """Label → argv; the ``zhiku`` command is this checkout's, run as ``python -m zhiku.cli``."""
    zhiku = [sys.executable, "-m", "zhiku.cli", "--home", str(home)]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import zhiku'": [sys.executable, "-c", "import zhiku"],
        "zhiku --help": [*zhiku, "--help"],
        "zhiku search (zh)": [*zhiku, "search", "会员积分的有效期是多久？", "--dataset", "demo"],
        "zhiku search (en)": [*zhiku, "search", "How long do points stay valid?", "--dataset", "demo"],
    }


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, threads included) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, help="demo data directory (built when it has no demo)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    with tempfile.TemporaryDirectory(prefix="zhiku-startup-") as scratch:
        home = args.home or Path(scratch) / "home"
        if not (home / "zhiku.db").exists():
            print(f"building the demo knowledge base in {home} ...", file=sys.stderr)
            subprocess.run(
                [sys.executable, "-m", "zhiku.cli", "--home", str(home), "demo"],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        argvs = commands(home)
        for argv in argvs.values():  # warm-up: file cache, the stored jieba dictionary
            run_once(argv, env)
        times: dict[str, list[float]] = {label: [] for label in argvs}
        cpu: dict[str, list[float]] = {label: [] for label in argvs}
        for _ in range(args.runs):
            for label, argv in argvs.items():
                wall, used = run_once(argv, env)
                times[label].append(wall)
                cpu[label].append(used)
    medians = {label: statistics.median(values) for label, values in times.items()}
    cpu_medians = {label: statistics.median(values) for label, values in cpu.items()}
    bare = medians["python -c pass"]
    load = os.getloadavg()[0]
    print(f"median of {args.runs} whole-process wall times (load average {load:.1f}, {os.cpu_count()} cores)")
    print(f"{'command':28} {'wall s':>8} {'less python':>12} {'cpu s':>7} {'target s':>9}")
    for label, median in medians.items():
        target = TARGETS.get(label)
        verdict = "" if target is None else f"{target:>9.1f} {'ok' if median <= target else 'over'}"
        print(f"{label:28} {median:>8.3f} {median - bare:>12.3f} {cpu_medians[label]:>7.3f} {verdict}")
    if args.json:
        report = {
            "runs": args.runs,
            "load_average": round(load, 2),
            "median_s": {label: round(value, 4) for label, value in medians.items()},
            "median_cpu_s": {label: round(value, 4) for label, value in cpu_medians.items()},
            "all_s": {label: [round(v, 4) for v in values] for label, values in times.items()},
            "targets_s": TARGETS,
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
