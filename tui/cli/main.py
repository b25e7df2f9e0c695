"""``rlwatch``: argument parsing and dispatch.

Only argparse is imported at start-up; each command imports what it needs
when it runs, so ``rlwatch --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, NoReturn

from tui import __version__

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

DESCRIPTION = """\
Watch a verl (PPO/GRPO) training run from the terminal.

  rlwatch PATH               dashboard on a log file or a run directory;
                             PATH may be [user@]host:/path (read over SSH)
  rlwatch PATH PATH…         the fleet: one row per run, worst first; enter opens
                             one. Also @NAME (a run or group in runs.toml) and
                             globs (gpu-host:'/runs/*')
  rlwatch watch PATH… --headless
                             no screen, for leaving running: one line per event
                             (crashed, stalled, moving again, finished); --notify
                             URL sends them (Slack, ntfy, mail… Apprise URLs),
                             --metrics-port serves the runs to Prometheus
  rlwatch check PATH…        read the run(s) once and report (exit 0 ok, 1 warning,
                             2 critical, 3 unreadable); --json for scripts
  rlwatch demo               dashboard on a bundled real run, replayed at speed
  rlwatch report PATH        the end-of-run verdict (-o report.md / report.html, --json)
  rlwatch export PATH --tensorboard DIR
                             write the run's metrics as TensorBoard event files
  rlwatch compare A B …      runs side by side: key metrics by step, numbers,
                             the settings that differ
  rlwatch rules              print the active health rules
  rlwatch status PATH…       one line for tmux's status-right: run, step/total,
                             reward, worst state (reads only what is new); for
                             several runs, their counts by state and the worst
"""


FLEET_TARGETS = ("a log file or run directory, local or [user@]host:path or "
                 "ssh://[user@]host[:port]/path, a Ray job (ray+http://HOST:8265/JOB, "
                 "ray://[user@]head/JOB) or a Slurm job (slurm://[user@]login/JOBID); several, "
                 "@NAME from ~/.config/rlwatch/runs.toml or a glob for a fleet")


def _add_log_option(parser: argparse.ArgumentParser, rules: bool = True, mute: bool = False) -> None:
    parser.add_argument("--log", metavar="FILE",
                        help="the log file to read (default: found in the run directory)")
    parser.add_argument("--accept-new-host-key", action="store_true",
                        help="for a remote target: accept and record an unknown SSH host key, "
                             "like OpenSSH's StrictHostKeyChecking=accept-new (a changed key is "
                             "always refused)")
    _add_ssh_options(parser)
    if rules:
        _add_rules_option(parser)
    if mute:
        _add_mute_option(parser)


def _add_ssh_options(parser: argparse.ArgumentParser) -> None:
    """OpenSSH's own ``-F``, ``-i`` and ``-J``, meaning what they mean to ``ssh``."""
    ssh = parser.add_argument_group("SSH (as ssh has them)")
    ssh.add_argument("-F", "--ssh-config", metavar="FILE",
                     help="the ssh_config file to read instead of ~/.ssh/config")
    ssh.add_argument("-i", dest="identity", metavar="IDENTITY", action="append", default=[],
                     help="a private key to log in with (besides ssh-agent's); may be repeated")
    ssh.add_argument("-J", dest="jump", metavar="[USER@]HOST[:PORT]",
                     help="reach the target's host through this jump host (comma-separated: "
                          "hop after hop)")


def _use_ssh_options(args: argparse.Namespace) -> str | None:
    """Make every connection of this command use ``-F``/``-i``/``-J``; what is wrong with
    them (a file that cannot be read), or None."""
    config, identities, jump = (getattr(args, "ssh_config", None), getattr(args, "identity", []),
                                getattr(args, "jump", None))
    if config is None and not identities and jump is None:
        return None
    for option, path in [("-F", config), *(("-i", identity) for identity in identities)]:
        if path is not None and not os.access(os.path.expanduser(path), os.R_OK):
            return f"{option} {path}: no such file, or it cannot be read"
    from tui.sources.ssh.client_options import ClientOptions, choose

    choose(ClientOptions(config, tuple(identities), jump))
    return None


def _add_rules_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", metavar="FILE",
                        help="a rule file applied on top of the defaults and "
                             "~/.config/rlwatch/rules.toml")


def _add_mute_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mute", metavar="RULE[,RULE…]",
                        help="rules whose findings are shown as muted and never counted in the "
                             "state or the exit status (`rlwatch rules` lists their ids)")


def _add_ascii_option(parser: argparse.ArgumentParser) -> None:
    glyphs = parser.add_mutually_exclusive_group()
    glyphs.add_argument("--ascii", dest="ascii", action="store_true", default=None,
                        help="draw with ASCII only, for fonts without block and box-drawing "
                             "characters (default: when LC_ALL/LC_CTYPE/LANG do not say UTF-8, "
                             "as tmux decides; or 'ascii = true' in ~/.config/rlwatch/config.toml)")
    glyphs.add_argument("--unicode", dest="ascii", action="store_false",
                        help="draw with Unicode glyphs even where the locale does not say UTF-8")


def _add_look_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", metavar="NAME",
                        help="colour theme for this run: rlwatch-dark (default), rlwatch-light, "
                             "rlwatch-high-contrast, rlwatch-colorblind, or one of yours in "
                             "~/.config/rlwatch/themes/NAME.toml (t switches; that is remembered)")
    _add_ascii_option(parser)


class _Parser(argparse.ArgumentParser):
    """argparse, exiting like a monitoring plugin on a bad command line: 3 (UNKNOWN), never
    argparse's 2, which a script or Nagios reads as critical (``tui.cli.exit_codes``).
    Sub-commands' parsers are of this class too (argparse makes them of their parent's)."""

    # Words of the command line that begin with '-' and are no option (``-rf.log``): set by
    # ``_dispatch`` so that the error can say where such a path goes.
    unknown_dashed: tuple[str, ...] = ()

    def error(self, message: str) -> NoReturn:
        from tui.cli.exit_codes import USAGE
        from tui.parsers.text import safe_text

        message = safe_text(message)  # it may quote what was typed (a path with a newline)
        self.print_usage(sys.stderr)
        hint = "".join(f"{self.prog}: a path that begins with '-' goes after '--': {self.prog} -- {word}\n"
                       for word in self.unknown_dashed[:1])
        self.exit(USAGE, f"{self.prog}: error: {message}\n{hint}")


    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """A line at a time: stderr shows each write as one line (``tui.cli.inert_stream``)."""
        for line in message.splitlines(keepends=True):
            super()._print_message(line, file)


def build_parser() -> argparse.ArgumentParser:
    """The full command line, with one sub-command per job."""
    parser = _Parser(
        prog="rlwatch", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rlwatch {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    watch = commands.add_parser("watch", help="open the dashboard on a run, or the fleet on "
                                              "several (the default command)")
    watch.add_argument("target", metavar="PATH", nargs="+", help=FLEET_TARGETS)
    _add_log_option(watch, mute=True)
    watch.add_argument("--on-critical", metavar="CMD",
                       help="run CMD (through your shell) with each new critical finding as JSON "
                            "on stdin, e.g. to page someone or post to Slack")
    watch.add_argument("--gpus", metavar="HOST[,HOST…]", action="append", default=[],
                       help="other nodes of a multi-node run whose accelerators to show too "
                            "(ssh_config aliases or [user@]host; repeatable)")
    _add_look_options(watch)
    unattended = watch.add_argument_group(
        "unattended", "with --headless: no screen; one line per event on stdout, for tmux, "
                      "nohup or a systemd user service")
    unattended.add_argument("--headless", action="store_true",
                            help="watch without a screen and print each event (a new critical "
                                 "finding, a stalled run moving again, a run finished)")
    unattended.add_argument("--json", action="store_true", help="print each event as a JSON line")
    unattended.add_argument("--warnings", action="store_true", help="tell new warnings too")
    unattended.add_argument("--notify", metavar="URL", action="append", default=[],
                            help="send each event to this Apprise URL too (slack://…, ntfy://…, "
                                 "mailto://…, json://…; repeatable; the headless watcher also "
                                 "sends to notify = [...] in ~/.config/rlwatch/config.toml); "
                                 "without --headless, each new critical finding the screen shows")
    unattended.add_argument("--remind", metavar="HOURS", type=float,
                            help="say again at most every HOURS while a run stays critical")
    unattended.add_argument("--metrics-port", metavar="[ADDRESS:]PORT",
                            help="serve every run's state, step, timing, key metrics and findings "
                                 "to Prometheus on PORT (127.0.0.1 unless ADDRESS is given)")

    check = commands.add_parser("check", help="read a run once, print a report, exit with its state")
    check.add_argument("target", metavar="PATH", nargs="+", help=FLEET_TARGETS)
    check.add_argument("--json", action="store_true",
                       help="print one JSON object (several runs: an array of them)")
    check.add_argument("--format", choices=("text", "json", "openmetrics"), default="text",
                       help="openmetrics: the runs' state, step, timing, key metrics and findings "
                            "for node_exporter's textfile collector (as --metrics-port serves them)")
    _add_log_option(check, mute=True)

    demo = commands.add_parser("demo", help="the dashboard on a bundled real run, replayed at speed")
    demo.add_argument("--speed", type=float, default=8.0, metavar="STEPS_PER_S",
                      help="steps replayed per second (default: 8)")
    _add_look_options(demo)
    report = commands.add_parser("report", help="the end-of-run verdict of a run")
    report.add_argument("target", metavar="PATH", help="a log file or run directory, local or [user@]host:path or ssh://[user@]host[:port]/path")
    report.add_argument("--target", dest="goal", type=float, metavar="SCORE",
                        help="the final validation score the task needs (e.g. 0.55)")
    report.add_argument("-o", "--output", metavar="FILE",
                        help="write Markdown (.md) or a standalone HTML page (.html)")
    report.add_argument("--json", action="store_true", help="print the numbers as JSON")
    _add_log_option(report, mute=True)

    export = commands.add_parser("export", help="write a run's metrics as TensorBoard event files")
    export.add_argument("target", metavar="PATH", help="a log file or run directory, local or [user@]host:path or ssh://[user@]host[:port]/path")
    export.add_argument("--tensorboard", metavar="DIR", required=True,
                        help="a new directory for the event files (tensorboard --logdir DIR)")
    _add_log_option(export, rules=False)

    compare = commands.add_parser("compare", help="several runs side by side: charts, numbers, settings")
    compare.add_argument("targets", nargs="+", metavar="PATH", help="two or more runs, as for the dashboard")
    _add_log_option(compare, mute=True)
    _add_look_options(compare)

    rules = commands.add_parser("rules", help="print the active health rules and their numbers")
    _add_rules_option(rules)
    _add_mute_option(rules)

    status = commands.add_parser(
        "status", help="one short line for tmux's status-right, e.g. "
                       "set -g status-right '#(rlwatch status /runs/cola)'")
    status.add_argument("target", metavar="PATH", nargs="+", help=FLEET_TARGETS)
    _add_log_option(status, mute=True)
    _add_ascii_option(status)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: no traceback for Ctrl-C or a closed pipe (``| head``);
    nothing written to stderr can drive the terminal (it may quote a log's text)."""
    from tui.cli.inert_stream import InertStream
    from tui.heap import map_large_buffers

    map_large_buffers()  # a million-step run's arrays must not fragment the heap (tui.heap)
    stderr = sys.stderr
    sys.stderr = InertStream(stderr)
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Python would complain again while flushing stdout at exit.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    finally:
        sys.stderr = stderr


def _command_first(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """The arguments with the command first and its targets last, as argparse needs them.

    Users type options anywhere, as with any argparse tool: ``rlwatch --theme
    rlwatch-light /runs/cola`` and ``rlwatch --log grpo.log check /runs/cola``
    as much as after the target, and between the targets of a fleet
    (``rlwatch /runs/a --theme t gpu:/runs/b``: argparse would take only the
    targets before the first option). The first word that is neither an
    option nor an option's value is the command, moved to the front, or a
    target, which means ``watch``; the other words that are neither go last.
    With none (``--help``, ``--version``) nothing changes.
    """
    commands = _commands(parser)
    takes_value = {option for sub in commands.choices.values() for action in sub._actions
                   if action.nargs != 0 for option in action.option_strings}
    options: list[str] = []
    words: list[str] = []
    after_dashes: list[str] | None = None
    skip = False
    for word in args:
        if after_dashes is not None:
            after_dashes.append(word)
        elif skip:
            options.append(word)
            skip = False
        elif word == "--":
            after_dashes = []
        elif word.startswith("-") and word != "-":
            options.append(word)
            skip = word in takes_value  # ``--log FILE``; ``--log=FILE`` is one word
        else:
            words.append(word)
    if not words and not after_dashes:
        return args
    if words and words[0] in commands.choices:
        command, targets = words[0], words[1:]
    else:
        command, targets = "watch", words  # ``rlwatch PATH`` means ``rlwatch watch PATH``
    # After ``--`` a word is a target even if it looks like an option (``-odd-dir``).
    return [command, *options, *targets, *(["--", *after_dashes] if after_dashes else [])]


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))


_NEGATIVE_NUMBER = re.compile(r"-\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|-\.\d+")


def _unknown_dashed(parser: argparse.ArgumentParser, args: list[str]) -> tuple[str, ...]:
    """The words before any ``--`` that begin with '-' but name no option of any command
    (nor abbreviate one, nor carry a short option's value: ``-ofile``)."""
    parsers = [parser, *_commands(parser).choices.values()]
    known = {option for each in parsers for action in each._actions for option in action.option_strings}
    words = args[:args.index("--")] if "--" in args else args
    return tuple(word for word in words if word.startswith("-") and word != "-"
                 and not _NEGATIVE_NUMBER.fullmatch(word)  # ``--speed -1``: a value
                 and not any(option.startswith(word.split("=", 1)[0]) if word.startswith("--")
                             else word[:2] == option for option in known))


def _end_process(code: int) -> NoReturn:
    """End a one-shot command's process once its output is out. Python's own teardown
    (finalizing asyncssh, cryptography and the modules it loaded) is ~25 ms of a remote
    ``check``'s whole run that nobody waits for on purpose: scripts and tmux do."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _headless_only(args: argparse.Namespace) -> str | None:
    """The first option given that only the headless watcher takes, or None."""
    for option, given in (("--json", args.json), ("--warnings", args.warnings),
                          ("--remind", args.remind is not None),
                          ("--metrics-port", args.metrics_port is not None)):
        if given:
            return option
    return None


def _dispatch(argv: list[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    dashed = _unknown_dashed(parser, args_list)
    for each in [parser, *_commands(parser).choices.values()]:
        if isinstance(each, _Parser):
            each.unknown_dashed = dashed
    args = parser.parse_args(_command_first(parser, args_list))
    if args.command is None:
        parser.print_help()
        return 0
    if (wrong := _use_ssh_options(args)) is not None:
        from tui.cli.exit_codes import UNREADABLE

        print(f"rlwatch: {wrong}", file=sys.stderr)
        return UNREADABLE
    if args.command in ("check", "watch", "status", "report", "export"):
        from tui.cli.head_start import look_for_liboqs_early
        from tui.cli.run_list import is_fleet

        targets = args.target if isinstance(args.target, list) else [args.target]
        one_run = not is_fleet(targets)
        if one_run:
            look_for_liboqs_early(targets[0])
    if args.command == "watch" and (args.headless or _headless_only(args)):
        if not args.headless:
            parser.error(f"{_headless_only(args)} needs --headless")
        if args.on_critical or args.gpus:
            parser.error("--headless tells through --notify; --on-critical and --gpus are the screens'")
        from tui.cli.watch import run_headless

        return run_headless(args.target, args.log, args.rules, args.accept_new_host_key, args.json,
                            args.warnings, args.notify, args.remind, args.metrics_port, args.mute)
    if args.command == "check" and args.format == "openmetrics":
        if args.json:
            parser.error("--json and --format openmetrics: give one")
        from tui.cli.metrics import run_check_openmetrics

        return run_check_openmetrics(args.target, args.log, args.rules, args.accept_new_host_key,
                                     args.mute)
    if args.command == "check":
        args.json = args.json or args.format == "json"
        if not one_run:
            from tui.cli.fleet import run_check_fleet

            return run_check_fleet(args.target, args.log, args.json, args.rules,
                                   args.accept_new_host_key, args.mute)
        from tui.cli.head_start import begin

        head = begin(args.target[0], args.log, args.accept_new_host_key, "tui.cli.check")
        from tui.cli.check import run_check

        code = run_check(args.target[0], args.log, args.json, args.rules, args.accept_new_host_key,
                         head, args.mute)
        if argv is None:  # the process's own command line: nothing runs after it
            _end_process(code)
        return code
    if args.command == "report":
        from tui.cli.report_command import run_report

        return run_report(args.target, args.log, args.goal, args.output, args.json, args.rules,
                          args.accept_new_host_key, args.mute)
    if args.command == "export":
        from tui.cli.export import run_export

        return run_export(args.target, args.log, args.tensorboard, args.accept_new_host_key)
    if args.command == "compare":
        from tui.cli.compare_command import run_compare

        return run_compare(args.targets, args.log, args.rules, args.accept_new_host_key, args.theme, args.ascii,
                           args.mute)
    if args.command == "rules":
        from tui.cli.rules_command import run_rules

        return run_rules(args.rules, args.mute)
    if args.command == "status":
        from tui.cli.status_command import run_status

        return run_status(args.target, args.log, args.rules, args.ascii, args.accept_new_host_key,
                          args.mute)
    if args.command == "demo":
        from tui.cli.dashboard import run_demo

        return run_demo(args.speed, args.theme, args.ascii)
    if not one_run:
        if args.gpus:
            parser.error("--gpus names the other nodes of one run; give it one target")
        from tui.cli.fleet import run_fleet

        return run_fleet(args.target, args.log, args.rules, args.on_critical,
                         args.accept_new_host_key, args.theme, args.ascii, args.mute,
                         args.notify)
    from tui.cli.dashboard import run_dashboard

    gpu_hosts = tuple(host for group in args.gpus for host in group.split(",") if host)
    return run_dashboard(args.target[0], args.log, args.rules, args.on_critical,
                         args.accept_new_host_key, gpu_hosts, args.theme, args.ascii, args.mute,
                         args.notify)


if __name__ == "__main__":
    sys.exit(main())
