#!/usr/bin/env python3
"""Make a large, noisy verl console log: the workload of seed 001.

Usage: chatter_log.py REAL_LOG OUT_PATH TARGET_MB [--ray-prefix] [--tqdm]

Seed 001's CoLA reward function prints a block of Chinese and English text for every sample it
scores, so a verbose real run is gigabytes of that chatter around a few metric lines. This script
takes the `step:` lines of a real log (e.g. tests/fixtures/corpus/verl_logs/032_*) and puts such blocks between
them until the file reaches TARGET_MB; --ray-prefix adds `(TaskRunner pid=...)` to the step lines,
--tqdm a verl progress bar after each. The output is deterministic (seeded).

Where it came from: the project's starting material, beside the seed documents, as the maker
of the seed-001 workload. Copied here byte for byte but for this docstring (which named the
corpus by its old place), so that bench/check_vs_grep.py and bench/ssh_backfill.py build that
workload from the repository alone; the chatter figures in docs/speed.md were measured on its
output.
"""
import random, sys

real, out, target_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
ray = "--ray-prefix" in sys.argv
tqdm = "--tqdm" in sys.argv
steps = [l for l in open(real, encoding="utf-8", errors="replace") if l.startswith("step:")]
rnd = random.Random(7)
words = "the model thinks about whether the sentence is grammatical acceptable and checks subject verb agreement carefully".split()

def noise_block():
    think = " ".join(rnd.choice(words) for _ in range(rnd.randint(40, 160)))
    gt = rnd.choice(["acceptable", "unacceptable"])
    return ("=" * 80 + "\n" + " 开始新的采样 ".center(80, "=") + "\n\n[正确性验证]\n"
            f"  真实标签: {gt}\n  预测标签: {rnd.choice(['acceptable','unacceptable'])}\n\n"
            f"[模型思考过程为]\n{think}\n" + f" 最终得分{rnd.choice([1,-1])} ".center(80, "-") + "\n")

target = int(target_mb * 1024 * 1024)
per_step = max(0, target // len(steps) - 5000)
pfx = "(TaskRunner pid=371299) " if ray else ""
with open(out, "w", encoding="utf-8") as f:
    n = len(steps)
    for i, s in enumerate(steps, 1):
        written = 0
        while written < per_step:
            b = noise_block()
            f.write(b)
            written += len(b.encode())
        f.write(pfx + s)
        if tqdm:
            f.write(f"{pfx}Training Progress:  {100*i//n:2d}%|##   | {i}/{n} [1:06:07<4:11:40, {rnd.uniform(40,70):.2f}s/it]\n")
print(out)
