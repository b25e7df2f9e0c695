"""tqdm bars: position, total, rate, elapsed and ETA."""

from tui.parsers.tqdm_progress import parse_bar, parse_duration, training_position


def test_verl_training_bar():
    bar = parse_bar("Training Progress:  15%|█▌        | 49/320 [1:06:07<4:11:40, 55.72s/it]", 7)
    assert (bar.desc, bar.n, bar.total) == ("Training Progress", 49, 320)
    assert bar.elapsed_s == 3967 and bar.eta_s == 4 * 3600 + 11 * 60 + 40
    assert bar.sec_per_it == 55.72 and bar.offset == 7
    assert training_position(bar) == (49, 320)


def test_iterations_per_second_become_seconds_per_step():
    bar = parse_bar("Processed prompts: 100%|██████████| 16/16 [00:12<00:00,  1.25it/s]", 0)
    assert bar.sec_per_it == 1 / 1.25
    assert training_position(bar) is None  # not the trainer's bar


def test_unknown_rate_and_huge_eta():
    start = parse_bar("Training Progress:   0%|          | 0/210 [00:00<?, ?it/s]", 0)
    assert start.sec_per_it is None and start.eta_s is None
    slow = parse_bar("Training Progress:   2%|█▌ | 60/3499 [21:41:02<7621:31:21, 7978.33s/it]", 0)
    assert slow.eta_s == 7621 * 3600 + 31 * 60 + 21 and slow.sec_per_it == 7978.33


def test_a_bar_cut_mid_eta_still_gives_position():
    bar = parse_bar("Training Progress:   0%|▌    | 14/3499 [20:35:11<5552:33:5", 0)
    assert (bar.n, bar.total, bar.elapsed_s) == (14, 3499, 20 * 3600 + 35 * 60 + 11)
    assert bar.sec_per_it is None


def test_epoch_bars_of_the_sft_trainer_count_across_epochs():
    bar = parse_bar("Epoch 2/6:  10%|█   | 6/62 [00:45<06:47,  7.27s/it]", 0)
    assert training_position(bar) == (62 + 6, 6 * 62)


def test_not_a_bar():
    assert parse_bar("accuracy went up 5%| maybe", 0) is None
    assert parse_duration("?") is None and parse_duration("1:02:03") == 3723


def test_ray_tqdm_bars_of_an_actor_count_in_unit_scale_sizes():
    # EasyR1's run bar as Ray's tqdm_ray draws it (crashes/easyr1469, crashes/easyr1_9):
    # the position after the description, counts and rate with three significant digits.
    bar = parse_bar("(pid=22967) Running step 0:   7%|▋         | 4.00/60.0 [2:11:12<23:53:54, 1.54ks/it]", 0)
    assert (bar.desc, bar.n, bar.total, bar.sec_per_it) == ("(pid=22967) Running step 0", 4, 60, 1540.0)
    bar = parse_bar("Running step 0:   7%|▋         | 4.00/60.0 [2:11:12<23:53:54, 1.54ks/it]", 0)
    assert training_position(bar) == (4, 60)
    # A rounded size is no step count: 1.75k may be anything from 1745 to 1754.
    assert parse_bar("Running step 0:   1%|█▋        | 14.0/1.75k [1:08:55<129:59:06, 269s/it]", 0) is None
