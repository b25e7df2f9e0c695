"""Reading what a failure block says: the exception line, by the grammar of tracebacks."""

import pytest

from tests.corpus import REPO, verl_log
from tui.parsers.crash_block import exception_name, read_block


def block_of(text: str, marker_line: int = 0, kind: str = "traceback", more_may_come: bool = False):
    data = text.encode()
    lines = data.split(b"\n")
    marker = sum(len(line) + 1 for line in lines[:marker_line])
    return read_block(data, 0, marker, kind, more_may_come)


TRACEBACK = """\
Traceback (most recent call last):
  File "/verl/trainer/main_ppo.py", line 64, in main
    run_ppo(config)
  File "/verl/trainer/ppo/ray_trainer.py", line 900, in fit
    batch = self.reward_fn(batch)
            ^^^^^^^^^^^^^^^^^^^^^
RuntimeError: reward server returned 500
wandb: Run summary:
wandb:  critic/score/mean 0.5
"""


def test_the_exception_line_is_the_last_line_of_the_traceback_not_its_header():
    block = block_of(TRACEBACK)
    assert block.exception == "RuntimeError: reward server returned 500"
    assert block.exception_offset == TRACEBACK.index("RuntimeError")
    assert block.kind == "traceback" and not block.harmless
    # The block ends at its exception line: wandb's summary after it is not part of it.
    assert block.end == TRACEBACK.index("wandb:")


def test_a_chained_traceback_is_named_by_the_exception_that_propagated():
    text = (TRACEBACK.split("wandb")[0] + "\nThe above exception was the direct cause of the "
            "following exception:\n\nTraceback (most recent call last):\n  File \"x.py\", line 3, "
            "in <module>\n    main()\nhydra.errors.InstantiationError: could not run\n")
    assert block_of(text).exception == "hydra.errors.InstantiationError: could not run"


def test_ray_prefixed_lines_of_other_processes_are_skipped():
    text = "\n".join([
        "(TaskRunner pid=11) Traceback (most recent call last):",
        "(WorkerDict pid=22) some unrelated chatter line",
        '(TaskRunner pid=11)   File "/verl/trainer/main_ppo.py", line 64, in main',
        "(WorkerDict pid=22) ValueError: not mine",
        "(TaskRunner pid=11)     run_ppo(config)",
        "(TaskRunner pid=11) KeyError: 'answer'",
        "(TaskRunner pid=11) Something after",
    ])
    block = block_of(text)
    assert block.exception == "KeyError: 'answer'"


def test_a_traceback_glued_to_a_tqdm_bar_is_read_behind_the_bar():
    text = (" 48%|████▊     | 97/200 [02:05<02:13,  1.31s/it]Traceback (most recent call last):\n"
            '  File "train.py", line 10, in <module>\n    trainer.train()\n'
            "RuntimeError: boom at step 97\n")
    assert block_of(text).exception == "RuntimeError: boom at step 97"


def test_bars_redrawn_inside_the_traceback_lines_are_removed():
    text = ("Traceback (most recent call last):\n"
            '\rTraining Progress:  3%|▎ | 3/100 [00:10<05:00,  3.1s/it]  File "t.py", line 1, in f\n'
            "    f()\n"
            "\rTraining Progress:  3%|▎ | 3/100 [00:11<05:00,  3.1s/it]ValueError: bad batch\n")
    assert block_of(text).exception == "ValueError: bad batch"


def test_exception_ignored_by_python_is_harmless():
    text = ("Exception ignored in: <function WorkerDict.__del__ at 0x7f>\n" + TRACEBACK)
    block = block_of(text, marker_line=1)
    assert block.harmless and block.exception.startswith("RuntimeError")


def test_a_cpp_abort_is_named_by_its_what_line():
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: "
            "NCCL error: unhandled system error\n"
            "Fatal Python error: Aborted\n")
    block = block_of(text, kind="fatal-signal")
    assert block.exception.startswith("what():  [PG 0 Rank 3] Process group watchdog")
    assert block.kind == "collective-timeout"  # the what() line says why it aborted


def test_an_oom_under_a_wrapper_exception_makes_the_block_an_oom_and_names_the_cause():
    text = ("Traceback (most recent call last):\n  File \"w.py\", line 1, in run\n    step()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n  File \"w.py\", line 9, in <module>\n    run()\n"
            "RuntimeError: worker 3 failed\n")
    block = block_of(text)
    assert block.kind == "oom" and block.exception == "RuntimeError: worker 3 failed"
    assert block.cause.startswith("torch.OutOfMemoryError: CUDA out of memory")


def test_a_step_line_ends_the_block_whatever_prints_it():
    text = ("(WorkerDict pid=7) Fatal Python error: Segmentation fault\n"
            "(WorkerDict pid=7) Extension modules: msgpack\n"
            "(TaskRunner pid=1) step:210 - critic/score/mean:0.9\n"
            "(raylet) A worker died or was killed while executing a task\n")
    block = block_of(text, kind="fatal-signal")
    assert block.exception == "Fatal Python error: Segmentation fault"
    assert block.end <= text.index("(TaskRunner")


def test_a_traceback_still_being_written_is_left_for_later():
    text = "Traceback (most recent call last):\n  File \"t.py\", line 1, in f\n"
    assert block_of(text, more_may_come=True) is None
    # Read to the end of a log that is not growing, it is named by its marker.
    assert block_of(text).exception.startswith("Traceback")


def test_hydra_error_is_named_by_the_traceback_after_it():
    data = verl_log("008").read_bytes()
    marker = data.index(b"Error executing job with overrides")
    marker = data.rfind(b"\n", 0, marker) + 1
    block = read_block(data, 0, marker, "hydra-error", False)
    assert block.exception == "RuntimeError: No backend type associated with device type cpu"


def test_a_hydra_error_cut_before_its_traceback_is_named_by_its_header_not_its_wrapped_rows():
    # A terminal wrapped the overrides list over rows (inside words), and the paste ends
    # before the traceback: the rows are the header's own text, not what failed.
    text = ("Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'data.v[94/1891]\n"
            "al_files=/data/validation.parquet', 'data.train_batch_size=8', 'actor_rollout_ref.model.use_remove_p\n"
            "adding=True', 'actor_rollout_ref.rollout.log_prob_micro_batch_siz")
    block = block_of(text, kind="hydra-error")
    assert block.exception.startswith("Error executing job with overrides: ['algorithm.adv_estimator=grpo'")
    # Once a traceback follows, its cut-off last line is still the nearest thing to what failed.
    block = block_of(text + "\nTraceback (most recent call last):\n  File \"m.py\", line 3, in main\n"
                     "    run()\nfoo bar", kind="hydra-error")
    assert block.exception == "foo bar"


def test_an_excerpt_that_starts_mid_traceback_is_named_by_its_oom_line():
    data = verl_log("018").read_bytes()
    block = read_block(data, 0, 0, "traceback", False)
    assert block.kind == "oom"
    assert block.exception.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB")


@pytest.mark.parametrize(("line", "name"), [
    ("RuntimeError: boom", "RuntimeError"),
    ("ray.exceptions.RayTaskError(OutOfMemoryError): ray::TaskRunner.run()",
     "ray.exceptions.RayTaskError(OutOfMemoryError)"),
    ("AssertionError", "AssertionError"),
])
def test_exception_names(line, name):
    assert exception_name(line) == name


# The shape of a traceback copied out of a terminal pane (NVIDIA-NeMo/Gym issue 356): each
# screen row padded with spaces to the pane's width and the rows joined into one line.
PANE = " " * 90
PASTED_FROM_A_PANE = (
    'Traceback (most recent call last):\n'
    '  File "/opt/nemo_rl_venv/lib/python3.12/site-packages/ray/_private/worker.py", line 2882, '
    'in get' + PANE + 'values, debugger_breakpoint = worker.get_objects(object_refs)' + PANE + '\n'
    '                                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
    '  File "/opt/nemo_rl_venv/lib/python3.12/site-packages/ray/_private/worker.py", line 970, '
    'in get_objects\n'
    '    raise value' + PANE + 'ray.exceptions.ActorDiedError: The actor died because of an error '
    'raised in its creation task, ray::lm_policy-0-2:DTensorPolicyWorker.__init__() (pid=2791977, '
    'ip=10.65.6.13, actor_id=\n'
    '79f3b3f4160dc05408ac436e01000000, repr=DTensorPolicyWorker[rank=2])' + PANE + '\n')


def test_screen_rows_a_terminal_paste_joined_with_padding_are_read_as_lines():
    block = block_of(PASTED_FROM_A_PANE)
    assert block.exception.startswith("ray.exceptions.ActorDiedError: The actor died because")
    assert block.kind == "actor-died"


# What CPython 3.11.7 printed for an asyncio.TaskGroup one of whose tasks raised
# (python3 -c 'asyncio.run(main())' with a reward call raising RuntimeError).
EXCEPTION_GROUP = """\
  + Exception Group Traceback (most recent call last):
  |   File "/tmp/bw/eg.py", line 10, in <module>
  |     asyncio.run(main())
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", line 190, in run
  |     return runner.run(main)
  |            ^^^^^^^^^^^^^^^^
  |   File "/tmp/bw/eg.py", line 7, in main
  |     async with asyncio.TaskGroup() as tg:
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/taskgroups.py", line 145, in __aexit__
  |     raise me from None
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/tmp/bw/eg.py", line 4, in score
    |     raise RuntimeError("reward server returned 500")
    | RuntimeError: reward server returned 500
    +------------------------------------
"""


def test_an_exception_group_is_named_by_the_sub_exception_printed_last():
    block = block_of(EXCEPTION_GROUP + "wandb: Find logs at: ./wandb/run-1/logs\n")
    assert block.exception == "RuntimeError: reward server returned 500"
    # Cut before its sub-exceptions, it is named by the group's own line.
    cut = EXCEPTION_GROUP[:EXCEPTION_GROUP.index("  +-+")]
    assert block_of(cut).exception == "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)"


# vLLM's formatter repeats its header on every line of a logged traceback (the rollout
# engine inside verl, TRL and OpenRLHF runs); from https://github.com/LMCache/LMCache/issues/2306.
VLLM_LOGGED = """\
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/async_llm.py", line 477, in output_handler
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278]     outputs = await engine_core.get_output_async()
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278]               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 883, in get_output_async
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278]     raise self._format_exception(outputs) from None
(APIServer pid=697224) ERROR 01-08 17:16:15 [serving_chat.py:1278] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
(EngineCore_DP0 pid=697344) Traceback (most recent call last):
"""


def test_a_traceback_vllm_logged_line_by_line_is_read_through_its_headers():
    block = block_of(VLLM_LOGGED)
    assert block.exception.startswith("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.")
    assert block.process == "(APIServer pid=697224)"


CRASHES = REPO / "tests" / "fixtures" / "logs" / "crashes"


def _sample(name: str) -> str:
    return next(CRASHES.glob(f"{name}_*.log")).read_text(encoding="utf-8")


def _block_at(text: str, header: str):
    """The block of ``text`` opened by its first line that holds ``header``."""
    return block_of(text, next(n for n, line in enumerate(text.split("\n")) if header in line))


@pytest.mark.parametrize("nccl_says", [
    "ncclInternalError: Internal check failed.",  # the sample's own
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
])
def test_nccls_own_error_line_after_a_distbackenderror_is_the_rest_of_its_message(nccl_says: str):
    # vllm-project/vllm#10453: rank 1's DistBackendError, NCCL's line, 'Last error:', rank 2 cut.
    text = _sample("vllm10453").replace("ncclInternalError: Internal check failed.", nccl_says)
    block = _block_at(text, "[rank1]: Traceback")
    assert block.exception.startswith("torch.distributed.DistBackendError: NCCL error in: ")
    assert block.process == "[rank1]:"


def test_an_nccl_error_line_of_its_own_is_still_an_exception_line():
    # Without an exception before it, the same spelling is what the traceback raised.
    text = _sample("vllm10453").replace(
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ", "[rank1]:     NCCL error in: ")
    assert _block_at(text, "[rank1]: Traceback").exception == "ncclInternalError: Internal check failed."


@pytest.mark.parametrize("announcement", [
    "WorkerProc hit an exception.",  # the sample's own (vLLM's multiproc executor)
    "EngineCore encountered a fatal error.",  # vLLM's engine core loop
    "EngineCore failed to start.",  # the engine core's start-up (NovaSky-AI/SkyRL#1342, ../wild)
])
def test_a_traceback_cut_before_its_exception_is_named_by_the_loops_announcement(announcement: str):
    # vllm-project/vllm-ascend#7676: '(Worker pid=…) (Worker_DP0_TP1_EP1 pid=…) ERROR … [multiproc_executor.py:880]
    # WorkerProc hit an exception.', then the traceback, cut inside its frames.
    text = _sample("vllmascend7676").replace("WorkerProc hit an exception.", announcement)
    assert _block_at(text, "Traceback (most recent").exception == announcement


def test_a_whole_traceback_after_an_announcement_is_named_by_its_exception_line():
    lead = "(Worker pid=16884) (Worker_DP0_TP1_EP1 pid=16884) ERROR 03-25 06:14:02 [multiproc_executor.py:880] "
    text = _sample("vllmascend7676").rsplit("\n", 2)[0] + f"\n{lead}RuntimeError: NPU function error\n"
    assert _block_at(text, "Traceback (most recent").exception == "RuntimeError: NPU function error"


WILD = REPO / "tests" / "fixtures" / "logs" / "wild"


@pytest.mark.parametrize(("lead", "actor"), [
    ("", "ray::trainer:Trainer.__init__()"),  # the sample's own (Trinity-RFT's trainer actor)
    ("", "ray::lm_policy-0-2:DTensorPolicyWorker.__init__()"),  # NeMo-RL's named policy worker
    # Ray's own logger in front, as an RLlib worker prints it (IDSIA/hhmarl_2D#2).
    ("(RolloutWorker pid=23212) 2023-12-18 09:05:49,846       ERROR worker.py:844 -- ",
     "ray::RolloutWorker.__init__()"),
])
def test_an_actor_whose_creation_task_raised_is_named_by_rays_sentence_where_the_frames_are_cut(
        lead: str, actor: str):
    # agentscope-ai/Trinity-RFT#235: Ray's unprefixed 'Exception raised in creation task: The actor
    # died because of an error raised in its creation task, ray::…__init__() (…)', then the actor's
    # own frames behind '(Trainer pid=…)', cut before the exception line.
    text = next(WILD.glob("trinity235_*.log")).read_text(encoding="utf-8")
    text = lead + text.replace("ray::trainer:Trainer.__init__()", actor)
    block = _block_at(text, '_base.py", line 458')
    said = "Exception raised in creation task: The actor died because of an error raised in its creation task, "
    assert said + actor in block.exception


def test_the_creation_tasks_sentence_gives_way_to_the_exception_line_that_ends_the_frames():
    text = next(WILD.glob("trinity235_*.log")).read_text(encoding="utf-8").rstrip("\n")
    text += " ValueError: Bundles must be a non-empty list of resource dictionaries.\n"
    assert _block_at(text, '_base.py", line 458').exception == \
        "ValueError: Bundles must be a non-empty list of resource dictionaries."


def test_rays_dedup_suffix_is_not_part_of_the_line_that_names_the_crash():
    # OpenRLHF/OpenRLHF#624: the reference model's watchdog lines on a second node, each with
    # ' [repeated 14x across cluster]'; the excerpt cuts the last suffix ('[repea').
    text = next(WILD.glob("openrlhf624_*.log")).read_text(encoding="utf-8")
    block = _block_at(text, "Watchdog caught")
    assert block.exception.endswith("ran for 7200031 milliseconds before timing out.")
    said = "ModuleNotFoundError: No module named 'weave'"  # a Python exception line the same way
    tail = f"(TaskRunner pid=7) Traceback (most recent call last):\n(TaskRunner pid=7) {said} [repeated 7x across cluster]\n"
    assert _block_at(tail, "Traceback").exception == said


DDP = REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp"


def test_a_line_repeated_but_for_its_numbers_is_one_block_with_a_count():
    data = (DDP / "nccl_rank1_device_assert.log").read_bytes()
    marker = data.index(b"/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu")
    block = read_block(data, 0, marker, "device-error", False)
    assert block.repeats == 128 and "thread: [0,0,0]" in block.exception
    assert data[block.end:].startswith(b"[rank1]: Traceback")  # every thread's line, no more
    # The traceback after them is a block of its own, whose torch hints are its message's rest.
    traceback = read_block(data, 0, block.end, "traceback", False)
    assert traceback.exception == "torch.AcceleratorError: CUDA error: device-side assert triggered"
    assert traceback.where.rank == 1 and traceback.kind == "device-error"
    assert b"TORCH_USE_CUDA_DSA" in data[traceback.offset:traceback.end]


def test_torchruns_box_is_the_message_of_its_childfailederror_and_names_the_root_cause():
    data = (DDP / "gloo_rank1_sigkill.log").read_bytes()
    marker = data.index(b"Traceback (most recent call last):\n  File \"<frozen runpy>\"")
    block = read_block(data, 0, marker, "traceback", False)
    assert block.summary and block.kind == "killed"
    assert block.exception == "traceback : Signal 9 (SIGKILL) received by PID 27715"
    assert (block.where.rank, block.where.local_rank, block.where.host, block.where.pid) == \
        (1, 1, "localhost", 27715)
    # The line alone, read as a marker of its own inside the box, says the same from the
    # entry's lines above it.
    line = data.index(b"  traceback : Signal 9")
    assert read_block(data, 0, line, "killed", False).where == block.where
