"""The report as terminal text, Markdown, a standalone HTML page, or JSON.

Text that came from the log (sample prompts, incident lines, metric keys) is
escaped for each format: HTML-escaped in the page, fenced or backslash-escaped
in Markdown, never interpreted. Every format is also passed whole through
:func:`~tui.parsers.text.safe_text` (the JSON's strings through ``safe_data``):
a control character or escape sequence in the log is shown in its visible
form (``␛]0;title␇``), so neither ``cat report.md`` nor a browser acts on it.
"""

from __future__ import annotations

import html
import math

from tui.durations import word_duration
from tui.parsers.text import safe_data, safe_text
from tui.parsers.values import format_value
from tui.report.plots import line_chart
from tui.report.verdict import Check, Report

_MARK = {True: "PASS", False: "FAIL", None: "----"}


# A check whose name ends so holds seconds: written in words (``16 h 15 min``), not as a
# number of seconds (``5.853e+04``); the JSON keeps the number.
SECONDS = ", s"


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if not math.isfinite(value):
        return str(format_value(value))
    return f"{value:.4g}"


def _name(check: Check) -> str:
    return check.name.removesuffix(SECONDS)


def _value(check: Check) -> str:
    """The check's value as a person reads it: a duration in words, else a number."""
    if check.name.endswith(SECONDS) and check.value is not None and math.isfinite(check.value):
        return word_duration(check.value)
    return _number(check.value)


def _expected(check: Check) -> str:
    """`` (expected X)``, or nothing for a check that has no expectation (no --target)."""
    return f" (expected {check.expectation})" if check.expectation else ""


def _heading(report: Report) -> str:
    total = f"/{report.total_steps}" if report.total_steps else ""
    crash = next((f for f in report.findings if f.rule == "crash" and f.exception), None)
    said = f": {crash.message}" if report.state == "crashed" and crash is not None else ""
    return f"rlwatch report — {safe_text(report.log)}, step {report.last_step}{total} ({report.state}{said})"


def _sections(report: Report) -> list[tuple[str, list[Check]]]:
    return [("Task result", report.task), ("Stability", report.stability),
            ("Resources", report.resources)]


def _charts(report: Report) -> list[str]:
    return [line_chart(f"{title} ({key})", steps, values)
            for title, (key, steps, values) in report.series.items()]


def _sample_lines(sample) -> list[str]:
    score = "—" if sample.score is None else f"{sample.score:g}"
    return [f"score {score} | ground truth: {sample.ground_truth[:200]}",
            f"  prompt:   {sample.prompt[-300:]}", f"  response: {sample.response[-500:]}"]


def to_text(report: Report) -> str:
    """For the terminal."""
    lines = [_heading(report), ""]
    for title, checks in _sections(report):
        lines.append(title)
        for check in checks:
            lines.append(f"  [{_MARK[check.passed]}] {_name(check)}: {_value(check)}{_expected(check)}")
            lines.append(f"         {check.why}")
        lines.append("")
    lines.append(f"Findings over the whole run ({len(report.findings)})")
    lines += [f"  {f.severity.upper():<8} {f.rule} ×{f.count}: {f.said()}" for f in report.findings]
    lines += ["", *_charts(report), ""]
    lines.append(f"Validation samples ({len(report.samples)} shown)")
    for sample in report.samples:
        lines += _sample_lines(sample)
    lines.append(f"Worst-scoring samples (score < 0.5): {len(report.worst_samples)}")
    for sample in report.worst_samples:
        lines += _sample_lines(sample)
    return safe_text("\n".join(lines), multiline=True)


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"


def to_markdown(report: Report) -> str:
    """A Markdown document; plots as text blocks."""
    out = [f"# {_md_cell(_heading(report))}", ""]
    for title, checks in _sections(report):
        out += [f"## {title}", "", "| | check | value | expected | why |", "|---|---|---|---|---|"]
        out += [f"| {_MARK[c.passed]} | {_md_cell(_name(c))} | {_value(c)} | "
                f"{_md_cell(c.expectation)} | {_md_cell(c.why)} |" for c in checks]
        out.append("")
    out += [f"## Findings ({len(report.findings)})", ""]
    out += [f"- **{f.severity}** `{f.rule}` ×{f.count}: {_md_cell(f.said())}" for f in report.findings]
    out += ["", "## Curves", ""] + [_fence(chart) + "\n" for chart in _charts(report)]
    out += [f"## Validation samples ({len(report.samples)})", ""]
    out += [_fence("\n".join(_sample_lines(s))) + "\n" for s in report.samples]
    out += [f"## Worst-scoring samples ({len(report.worst_samples)})", ""]
    out += [_fence("\n".join(_sample_lines(s))) + "\n" for s in report.worst_samples]
    return safe_text("\n".join(out), multiline=True)


def to_html(report: Report) -> str:
    """A standalone page (inline CSS, no scripts, nothing fetched)."""
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>{esc(_heading(report))}</title><style>",
             "body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em}",
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em}",
             ".PASS{color:#1a7f37}.FAIL{color:#cf222e}pre{background:#f6f8fa;padding:.6em;overflow:auto}",
             "</style></head><body>", f"<h1>{esc(_heading(report))}</h1>"]
    for title, checks in _sections(report):
        parts.append(f"<h2>{esc(title)}</h2><table><tr><th></th><th>check</th><th>value</th>"
                     "<th>expected</th><th>why</th></tr>")
        parts += [f"<tr><td class='{_MARK[c.passed]}'>{_MARK[c.passed]}</td><td>{esc(_name(c))}</td>"
                  f"<td>{esc(_value(c))}</td><td>{esc(c.expectation)}</td><td>{esc(c.why)}</td></tr>"
                  for c in checks]
        parts.append("</table>")
    parts.append(f"<h2>Findings ({len(report.findings)})</h2><ul>")
    parts += [f"<li><b>{esc(f.severity)}</b> {esc(f.rule)} ×{f.count}: {esc(f.said())}</li>"
              for f in report.findings]
    parts.append("</ul><h2>Curves</h2>")
    parts += [f"<pre>{esc(chart)}</pre>" for chart in _charts(report)]
    for title, samples in (("Validation samples", report.samples),
                           ("Worst-scoring samples", report.worst_samples)):
        parts.append(f"<h2>{title} ({len(samples)})</h2>")
        parts += [f"<pre>{esc(chr(10).join(_sample_lines(s)))}</pre>" for s in samples]
    parts.append("</body></html>")
    return safe_text("\n".join(parts), multiline=True)


def to_json(report: Report) -> dict:
    """The numbers."""
    def check(c: Check) -> dict:
        value = None if c.value is None else format_value(c.value)
        return {"name": c.name, "value": value, "expected": c.expectation, "passed": c.passed}

    return safe_data({
        "log": report.log, "last_step": report.last_step, "total_steps": report.total_steps,
        "finished": report.finished, "state": report.state,
        **{title.lower().replace(" ", "_"): [check(c) for c in checks]
           for title, checks in _sections(report)},
        "findings": [f.to_json() for f in report.findings],
        "samples": [{"prompt": s.prompt, "response": s.response, "ground_truth": s.ground_truth,
                     "score": s.score} for s in report.samples],
        "worst_samples": len(report.worst_samples)})
