"""CLI start-up (issue 13): `helpdesk --help` and `helpdesk ask` on recorded answers, each as a
fresh process from start to exit, beside `python -c pass` timed the same way in the same run.

    python bench/cli.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.app import isolated_environment  # noqa: E402
from bench.common import median  # noqa: E402

# Seed question 3 (tests/data/rerank_data.json): every passage BM25 retrieves has a recorded
# judgment, so the answer is made from the replay cache alone.
QUESTION = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
COMMANDS = {
    "help_s": [sys.executable, "-m", "chatbot", "--help"],
    "ask_replay_s": [sys.executable, "-m", "chatbot", "ask", QUESTION],
    "cli_floor_s": [sys.executable, "-c", "pass"],
}


def _once(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command[2:]} failed: {done.stderr.strip()[-2000:]}")
    return elapsed


def measure(runs: int = 5) -> dict[str, float]:
    """Median wall seconds of each command; the three take turns, so a change in the machine's
    load touches all of them alike. One unmeasured round first warms the OS file cache."""
    with tempfile.TemporaryDirectory() as directory:
        env = isolated_environment(Path(directory))
        times: dict[str, list[float]] = {key: [] for key in COMMANDS}
        for round_ in range(runs + 1):
            for key, command in COMMANDS.items():
                elapsed = _once(command, env)
                if round_:
                    times[key].append(elapsed)
    result = {key: round(median(values), 3) for key, values in times.items()}
    result["help_ratio"] = round(result["help_s"] / result["cli_floor_s"], 2)
    result["ask_replay_ratio"] = round(result["ask_replay_s"] / result["cli_floor_s"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    print(json.dumps(measure(parser.parse_args().runs), indent=2))


if __name__ == "__main__":
    main()
