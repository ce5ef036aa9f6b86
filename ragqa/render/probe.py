"""The order probe's section of a report (``--probe order``): each judge's position consistency.

Shared by the console and the HTML report: :func:`probe_texts` gives the lines as ``(text, kind)``
pairs, :func:`probe_lines` styles them for the console; the words are the ``probe_*`` labels
(:mod:`ragqa.render.labels`: English, or the language's pack). The figures are those of
:class:`~ragqa.schema.OrderProbeResult` (:mod:`ragqa.jury.probe`); nothing is recomputed here.
"""

from __future__ import annotations

import math

from rich.text import Text

from ragqa.render.labels import labels
from ragqa.schema import Language, OrderProbeResult

__all__ = ["probe_lines", "probe_texts"]


def _share(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def probe_texts(probe: OrderProbeResult | None, *, language: Language = "en") -> list[tuple[str, str]]:
    """The order probe's section as ``(text, kind)`` lines; empty without a probe.

    ``kind`` is ``title``, ``judge``, ``flag``, ``note`` or ``calls``: one line on what was probed,
    one per judge with its pooled consistency (two decimals) and the changed verdicts, followed by
    each metric's consistency, one warning per flagged judge, the notes, and the probe's calls.
    """
    if probe is None:
        return []
    words = {k.removeprefix("probe_"): v for k, v in labels(language).items() if k.startswith("probe_")}
    out = [
        (
            words["title"].format(n=probe.n_samples, selected=probe.n_selected, share=probe.share, seed=probe.seed),
            "title",
        )
    ]
    for judge in probe.judges:
        if not judge.n_items:
            out.append((f"{judge.judge_id}: {words['none']}", "judge"))
            continue
        per_metric = "; ".join(f"{m.metric} {_share(m.consistency)}" for m in judge.metrics if m.n_items)
        out.append(
            (
                words["judge"].format(
                    judge=judge.judge_id,
                    consistency=_share(judge.consistency),
                    changed=judge.n_changed,
                    items=judge.n_items,
                    metrics=f" · {per_metric}" if per_metric else "",
                ),
                "judge",
            )
        )
    out += [
        (words["flag"].format(judge=j.judge_id, rate=100 * probe.max_change_rate), "flag")
        for j in probe.judges
        if j.flagged
    ]
    out += [(note, "note") for note in probe.notes]
    if probe.usage.calls:
        out.append((words["calls"].format(calls=probe.usage.calls), "calls"))
    return out


_STYLE = {"title": ("", "bold"), "flag": ("  ! ", "yellow"), "note": ("  ", "dim"), "calls": ("  ", "dim")}


def probe_lines(probe: OrderProbeResult | None, *, language: Language = "en") -> list[Text]:
    """:func:`probe_texts` as console lines: the title bold, the judges indented, flags in yellow."""
    return [
        Text(_STYLE.get(kind, ("  ", ""))[0] + text, style=_STYLE.get(kind, ("  ", ""))[1])
        for text, kind in probe_texts(probe, language=language)
    ]
