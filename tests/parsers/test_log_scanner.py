"""The streaming scanner on every real log in the corpus, and on bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import REPO, all_verl_logs, verl_log
from tui.parsers.log_scanner import MAX_LINE_BYTES, LogScanner
from tui.parsers.records import (
    IncidentRecord,
    ProgressRecord,
    SampleMarkRecord,
    StepRecord,
    TotalStepsRecord,
)


CRASHES = REPO / "tests" / "fixtures" / "logs" / "crashes"


def scan(data: bytes, chunk: int | None = None) -> list:
    scanner = LogScanner()
    if chunk is None:
        return scanner.feed(data) + scanner.finish()
    records = []
    for at in range(0, len(data), chunk):
        records += scanner.feed(data[at:at + chunk])
    return records + scanner.finish()


def steps_of(records) -> dict[int, dict[str, float]]:
    """Step → metrics, the later line winning, as the model folds them."""
    out: dict[int, dict[str, float]] = {}
    for record in records:
        if isinstance(record, StepRecord):
            out.setdefault(record.step, {}).update(record.metrics)
    return out


def step_records(path) -> list[StepRecord]:
    return [r for r in scan(path.read_bytes()) if isinstance(r, StepRecord)]


# (corpus file, distinct steps with metrics) — counted by hand with grep.
STEP_COUNTS = {"001": 1, "003": 1, "004": 2, "012": 1, "013": 5, "016": 1, "025": 15, "026": 7,
               "027": 2, "028": 2, "029": 59, "030": 106, "031": 435, "032": 1120, "033": 1120,
               "034": 211, "035": 106, "036": 1, "047": 15, "048": 1, "049": 1, "050": 1, "051": 5,
               "008": 0, "009": 0, "018": 0, "021": 0, "044": 0, "052": 0, "053": 0}


def test_every_corpus_log_is_covered_here():
    assert {p.name[:3] for p in all_verl_logs()} == set(STEP_COUNTS)


@pytest.mark.parametrize("prefix", sorted(STEP_COUNTS))
def test_step_counts_of_every_corpus_log(prefix):
    assert len(steps_of(scan(verl_log(prefix).read_bytes()))) == STEP_COUNTS[prefix]


@pytest.mark.parametrize("path", all_verl_logs(), ids=lambda p: p.name[:3])
def test_chunk_boundaries_never_change_the_result(path):
    data = path.read_bytes()
    assert repr(scan(data, chunk=997)) == repr(scan(data))  # repr: nan != nan


def test_offsets_point_at_the_step_line_in_the_file():
    path = verl_log("031")
    data = path.read_bytes()
    for record in step_records(path):
        line = data[record.offset:record.end]
        assert line.endswith(b"\n") and f"step:{record.step} - ".encode() in line


def test_whole_grpo_run_values():
    steps = steps_of(scan(verl_log("032").read_bytes()))
    assert max(steps) == 1120
    assert steps[1120] == {"val/test_score/openai/gsm8k": 0.697}
    last = steps[1119]
    assert last["critic/score/mean"] == 0.981 and last["actor/pg_loss"] == 0.003
    assert last["actor/kl_loss"] == 0.080 and last["actor/entropy_loss"] == 0.022
    assert last["timing_s/step"] == 81.267 and last["Tokens/Sec/GPU"] > 0


def test_ray_prefixed_ansi_run_reads_through_the_colour_codes():
    steps = steps_of(scan(verl_log("031").read_bytes()))
    assert steps[434]["timing/gen"] == 17.455 and steps[434]["critic/kl"] == 0.203


def test_full_repr_and_scientific_values():
    (record,) = step_records(verl_log("001"))
    assert record.step == 34
    assert record.metrics["global_seqlen/min"] == 419336
    assert record.metrics["training/global_step"] == 34
    assert any(value == -8.163164312320433e-06 for value in record.metrics.values())


def test_cut_end_of_a_pasted_line_is_dropped_not_misread():
    (record,) = step_records(verl_log("001"))
    assert record.metrics["response_length/min"] == 38.0  # the line ends "…:38.0 -"


def test_numpy_wrapped_values():
    (record,) = step_records(verl_log("050"))
    assert record.metrics["num_turns/min"] == 2
    (validation,) = step_records(verl_log("049"))
    assert validation.step == 0 and validation.dropped == 0
    assert all(key.startswith("val-") for key in validation.metrics)


def test_lines_cut_at_4096_bytes_lose_only_the_cut_item():
    records = [r for r in step_records(verl_log("047")) if r.step in (0, 5, 10)]
    assert {r.step: r.dropped for r in records} == {0: 1, 5: 1, 10: 1}
    assert all(math.isfinite(v) for r in records for v in r.metrics.values())


@pytest.mark.parametrize("prefix", ["012", "048"])
def test_terminal_wrapped_lines_are_joined_back(prefix):
    (record,) = step_records(verl_log(prefix))
    assert record.dropped == 0 and len(record.metrics) == 172
    assert all(" " not in key and "\n" not in key for key in record.metrics)
    if prefix == "012":  # the value wrapped as "…0.0361111062102847" / "6 - val-aux…"
        assert record.metrics["val-aux/aime_2025/reward/mean@30"] == 0.03611110621028476
        assert record.metrics["actor/entropy"] == 0.347299188375473
    else:  # a 213-column row lost the space of its " - " at the edge
        assert record.metrics["val-aux/aime_2025/score/best@8/std"] == 0.3327460572646935


def test_sft_lines_glued_to_tqdm_are_not_mistaken_for_wraps():
    steps = steps_of(scan(verl_log("025").read_bytes()))
    assert steps[4] == {"train/loss": 1.0045815706253052, "train/lr(1e-3)": 0.001081081081081081}
    assert steps[250]["val/loss"] > 0


def test_step_printed_twice_later_line_wins():
    data = b"step:3 - a:1.0 - b:2.0\nchatter\nstep:3 - a:5.0\n"
    assert steps_of(scan(data)) == {3: {"a": 5.0, "b": 2.0}}


def test_validation_only_step_zero():
    records = step_records(verl_log("004"))
    assert records[0].step == 0
    assert all(k.startswith(("val-aux/", "val-core/")) for k in records[0].metrics)
    assert records[1].metrics["training/global_step"] == 1.0


def test_nan_values_are_kept():
    (record,) = step_records(verl_log("036"))
    assert math.isnan(record.metrics["critic/vf_loss"]) and math.isnan(record.metrics["critic/grad_norm"])
    assert record.metrics["critic/vf_explained_var"] == -72.348


def test_progress_bars_in_every_layout():
    # 034: every bar before every step line, the first one on its own line.
    bars = [r for r in scan(verl_log("034").read_bytes()) if isinstance(r, ProgressRecord)
            and r.desc == "Training Progress"]
    assert bars[-1].n == 210 and bars[-1].total == 210
    # 044: the Ray prefix alone on a line and the bar on the next.
    episodes = [r for r in scan(verl_log("044").read_bytes()) if isinstance(r, ProgressRecord)
                and r.desc.startswith("Episode")]
    assert episodes and episodes[-1].n == 12 and episodes[-1].total == 12


def test_total_training_steps_announcement():
    totals = [r.total for r in scan(verl_log("034").read_bytes()) if isinstance(r, TotalStepsRecord)]
    assert totals == [210, 210]  # the trainer's line, then a worker's LR schedule


@pytest.mark.parametrize("lead", ["(WorkerDict pid=6911) ", "", "\x1b[36m(WorkerDict pid=6911)\x1b[0m "])
def test_a_workers_lr_schedule_line_says_the_runs_total(lead: str):
    # verl-project/verl#705 (tests/fixtures/logs/crashes): the trainer's 'Total training steps'
    # is above the window; each actor worker says the total again when it builds its LR schedule.
    sample = next(CRASHES.glob("verl705_*.log")).read_bytes()
    assert [r.total for r in scan(sample) if isinstance(r, TotalStepsRecord)][:1] == [30126]
    line = f"{lead}Total steps: 435, num_warmup_steps: 13\n".encode()
    assert [r.total for r in scan(line) if isinstance(r, TotalStepsRecord)] == [435]


@pytest.mark.parametrize("line", [
    "Total steps: 435",  # without the schedule's second half: not verl's worker line
    "'num_warmup_steps': 0, 'total_steps': 435",  # a config dump
])
def test_other_total_steps_wordings_are_not_the_runs_total(line: str):
    assert not [r for r in scan(f"{line}\n".encode()) if isinstance(r, TotalStepsRecord)]


@pytest.mark.parametrize(("prefix", "kinds"), [
    ("018", {"oom", "traceback"}), ("021", {"collective-timeout"}),
    ("008", {"hydra-error", "ray-error", "traceback"}),
    ("009", {"actor-died", "hydra-error", "traceback"}),
])
def test_incidents_with_offsets(prefix, kinds):
    data = verl_log(prefix).read_bytes()
    incidents = [r for r in scan(data) if isinstance(r, IncidentRecord)]
    assert {i.kind for i in incidents} == kinds
    for incident in incidents:
        start = data.rfind(b"\n", 0, incident.offset + 1) + 1
        assert start == incident.offset  # offsets point at line starts


def test_sample_blocks_are_marked_where_they_start():
    data = verl_log("032").read_bytes()
    marks = [r.offset for r in scan(data) if isinstance(r, SampleMarkRecord)]
    assert len(marks) == 112 and all(data[m:m + 8] == b"[prompt]" for m in marks)


def test_trl_lines_are_numbered_in_order():
    steps = steps_of(scan(verl_log("013").read_bytes()))
    assert sorted(steps) == [1, 2, 3, 4, 5]
    assert steps[1]["reward"] == 1.7171093285083772


def test_reward_printouts_without_metrics_give_nothing():
    for prefix in ("052", "053"):
        assert scan(verl_log(prefix).read_bytes()) == []


# -- bad input --------------------------------------------------------------

def test_empty_input():
    assert scan(b"") == []


def test_binary_junk_between_step_lines():
    junk = bytes(range(256)) * 40
    data = b"step:1 - a:1\n" + junk + b"\nstep:2 - a:2\n"
    assert steps_of(scan(data)) == {1: {"a": 1.0}, 2: {"a": 2.0}}


def test_a_ten_megabyte_line_is_passed_over_and_the_rest_read():
    huge = b"[link=x]" * (10 * 1024 * 1024 // 8) + b" step: 9 - %| Traceback"
    data = b"step:1 - a:1\n" + huge + b"\nstep:2 - a:2\n"
    assert steps_of(scan(data, chunk=1 << 20)) == {1: {"a": 1.0}, 2: {"a": 2.0}}


def test_a_line_beyond_the_limit_is_skipped_and_counted():
    scanner = LogScanner()
    records = scanner.feed(b"y" * (MAX_LINE_BYTES + 10))
    records += scanner.feed(b"\nstep:2 - a:2\n")
    assert scanner.skipped_lines == 1
    assert steps_of(records) == {2: {"a": 2.0}}


def test_a_partial_last_line_waits_for_its_newline():
    scanner = LogScanner()
    assert scanner.feed(b"step:1 - a:1.5") == []
    assert scanner.consumed == 0
    (record,) = scanner.feed(b"25\n")
    assert record.metrics == {"a": 1.525} and scanner.consumed == 17


def test_invalid_utf8_inside_a_step_line():
    assert steps_of(scan(b"step:1 - a:1 - k\xff\xfe:2 - b:3\n")) == {1: {"a": 1.0, "k\ufffd\ufffd": 2.0, "b": 3.0}}


def test_isolated_lines_from_a_remote_filter_keep_their_offsets():
    scanner = LogScanner()
    (record,) = scanner.scan_line(b"step:7 - a:1\n", 1000)
    assert (record.offset, record.end, record.step) == (1000, 1013, 7)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4000), st.integers(min_value=1, max_value=600))
def test_arbitrary_bytes_never_raise_and_chunking_is_invisible(data, chunk):
    assert repr(scan(data, chunk=chunk)) == repr(scan(data))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.floats(allow_nan=False, width=32)), max_size=30),
       st.sampled_from([b"", b"\x1b[36m(TaskRunner pid=1)\x1b[0m ", b"(pid=9, ip=1.2.3.4) "]))
def test_written_step_lines_read_back_exactly(points, prefix):
    data = b"".join(prefix + f"step:{s} - m/x:{v!r}\n".encode() for s, v in points)
    expected: dict[int, dict[str, float]] = {}
    for s, v in points:
        expected[s] = {"m/x": v}
    assert steps_of(scan(data)) == expected


def test_settle_reads_the_newest_bar_of_a_line_with_no_newline_yet():
    """tqdm writes the newline only when its loop ends: the bar on screen now is in the held
    last line, and the header's s/it and ETA lagged one bar behind it."""
    from tui.parsers.records import ProgressRecord

    scanner = LogScanner()
    scanner.feed(b"step:1 - critic/score/mean:0.5\n"
                 b"Training Progress:  10%|#         | 1/10 [01:05<09:45, 65.00s/it]"
                 b"\rTraining Progress:  20%|##        | 2/10 [02:05<08:00, 60.00s/it]")
    bars = [r for r in scanner.settle() if isinstance(r, ProgressRecord)]
    assert bars and bars[-1].sec_per_it == 60.0 and bars[-1].eta_s == 480
    # The line is not consumed: when its newline comes it is parsed whole.
    assert scanner.consumed == len(b"step:1 - critic/score/mean:0.5\n")
    whole = scanner.feed(b"\n")
    assert [r.sec_per_it for r in whole if isinstance(r, ProgressRecord)] == [65.0, 60.0]


def test_a_hole_of_nuls_ends_a_line_and_the_step_after_it_is_read():
    # copytruncate under a writer that keeps its offset: NULs up to where it writes on.
    hole = b"\x00" * (MAX_LINE_BYTES + 10)
    scanner = LogScanner()
    records = scanner.feed(hole + b"step:3 - a:3\n") + scanner.finish()
    assert steps_of(records) == {3: {"a": 3.0}}
    assert records[0].offset == len(hole)


def test_a_hole_read_while_its_next_line_is_half_written_keeps_that_line():
    hole = b"\x00" * (MAX_LINE_BYTES + 10)
    scanner = LogScanner()
    assert scanner.feed(hole + b"step:3 - a:") == []
    records = scanner.feed(b"3\n") + scanner.finish()
    assert steps_of(records) == {3: {"a": 3.0}} and records[0].offset == len(hole)


def test_a_grepped_line_behind_a_hole_is_read_from_after_it():
    hole = b"\x00" * (MAX_LINE_BYTES + 10)
    (record,) = LogScanner().scan_line(hole + b"step:3 - a:3\n", 100)
    assert record.step == 3 and record.offset == 100 + len(hole)
