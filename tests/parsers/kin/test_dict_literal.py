"""Reading printed dicts: Python and JSON, cut, glued, several on a line."""

from tui.parsers.kin.dict_literal import printed_dicts, read_items


def keys(items):
    return [item.key for item in items]


def test_a_dict_glued_to_a_bar_and_a_second_cut_dict():
    lead, dicts = printed_dicts("| 1/20 [05:56<1:52:59, 356.80s/it]{'loss': 0.05, 's': '1/2'} {'loss': 0.0")
    assert lead.endswith("356.80s/it]")
    assert [d.closed for d in dicts] == [True, False]
    assert keys(dicts[0].items) == ["loss", "s"] and dicts[0].items[1].quoted
    assert dicts[1].items[0].cut  # ran into the end of the text: may have lost digits


def test_a_value_followed_by_its_comma_is_whole_even_when_the_dict_is_cut():
    _, [printed] = printed_dicts('{"loss": 0.0, "completions/mean_length": 4096.0, "completions/min_length":')
    assert [(i.key, i.value, i.cut) for i in printed.items] == [
        ("loss", "0.0", False), ("completions/mean_length", "4096.0", False)]


def test_keys_with_brackets_and_values_with_commas_inside_parentheses():
    _, [printed] = printed_dicts("{'memory(GiB)': 6.5, 'train_speed(iter/s)': 0.52, "
                                 "'t': tensor(0.5, device='cuda:0'), 'n': np.float64(1.5)}")
    assert [(i.key, i.value) for i in printed.items] == [
        ("memory(GiB)", "6.5"), ("train_speed(iter/s)", "0.52"),
        ("t", "tensor(0.5, device='cuda:0')"), ("n", "np.float64(1.5)")]


def test_nested_dicts_flatten_with_a_slash_and_lists_are_values():
    _, [printed] = printed_dicts("{'a': {'b': 1, 'c': 2}, 'd': [1, 2], 'e': 3}")
    assert [(i.key, i.value) for i in printed.items] == [("a/b", "1"), ("a/c", "2"), ("d", "[1, 2]"),
                                                          ("e", "3")]


def test_braces_without_a_quoted_key_are_not_dicts():
    assert printed_dicts("set {1, 2} and {} and f'{x}'")[1] == []


def test_a_pretty_printed_middle_row():
    items, _, closed = read_items(" 'policy/grad_norm': '0.3125',", 0, stop_at_close=False)
    assert (keys(items), closed) == (["policy/grad_norm"], False)
    items, _, closed = read_items(" 'trainer/global_step': 3}", 0, stop_at_close=False)
    assert (items[0].value, closed) == ("3", True)


def test_garbage_never_raises():
    for text in ["{'", "{'a'", "{'a':", "{'a': '", "{'a': (", "{'a': 1,,, 'b'", "{{{{'x': }}}}", "'\\"]:
        printed_dicts(text)
        read_items(text, 0, stop_at_close=False)
