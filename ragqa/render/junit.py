"""JUnit XML, written once for every entry point that reports pass/fail to a CI.

``ragqa evaluate --junit-xml`` (one testcase per sample and metric), ``ragqa test --junit-xml``
(one testcase per promptfoo assertion) and the pytest plugin (whose JUnit report pytest writes
itself) all describe a verdict with the same properties, from :func:`verdict_properties`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragqa.render.atomic import replace_file
from ragqa.schema import PanelResult

__all__ = ["PROPERTY_PREFIX", "JUnitCase", "JUnitSuite", "result_properties", "write_junit"]

PROPERTY_PREFIX = "ragqa:"
"""Prefix of every JUnit property ragqa writes: ``ragqa:<metric>:<name>``."""


def _fmt(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.4f}"


def result_properties(
    result: PanelResult,
    *,
    threshold: float | None = None,
    policy: str | None = None,
    passed: bool | None = None,
) -> list[tuple[str, str]]:
    """The JUnit properties of one panel result, as ``(name, value)`` pairs.

    Names are ``ragqa:<metric>:sample``, ``:aggregate``, ``:threshold``, ``:direction``,
    ``:policy``, ``:passed`` (the last three only when given) and ``:judge:<id>`` per judge, whose
    value is the judge's score with 4 decimals, ``nan``, or ``excluded`` for a failed judge.
    """
    key = f"{PROPERTY_PREFIX}{result.metric}"
    values: list[tuple[str, str]] = [
        ("sample", result.sample_id),
        ("aggregate", _fmt(result.aggregate.value)),
    ]
    if threshold is not None:
        values.append(("threshold", f"{threshold:g}"))
    values.append(("direction", result.direction))
    if policy is not None:
        values.append(("policy", policy))
    if passed is not None:
        values.append(("passed", "true" if passed else "false"))
    props = [(f"{key}:{name}", value) for name, value in values]
    for outcome in result.judges:
        value = "excluded" if outcome.score is None else _fmt(outcome.score.value)
        props.append((f"{key}:judge:{outcome.judge_id}", value))
    return props


@dataclass(frozen=True)
class JUnitCase:
    """One testcase.

    Attributes:
        name: the testcase name.
        classname: the dotted class name CI tools group by.
        time_s: seconds spent.
        properties: ``(name, value)`` pairs.
        failure: ``(message, text)`` for a failed check (a missed threshold), else ``None``.
        error: ``(message, text)`` for a case that could not be judged (every judge failed), else ``None``.
        output: text for ``system-out`` (e.g. the per-judge explanation of a passing case).
    """

    name: str
    classname: str
    time_s: float = 0.0
    properties: Sequence[tuple[str, str]] = ()
    failure: tuple[str, str] | None = None
    error: tuple[str, str] | None = None
    output: str | None = None


@dataclass(frozen=True)
class JUnitSuite:
    """One testsuite: a name and its cases."""

    name: str
    cases: Sequence[JUnitCase] = field(default_factory=tuple)


def _counts(cases: Sequence[JUnitCase]) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.failure is not None)),
        "errors": str(sum(1 for c in cases if c.error is not None and c.failure is None)),
        "time": f"{sum(c.time_s for c in cases):.3f}",
    }


def write_junit(path: str | Path, suites: Sequence[JUnitSuite], *, name: str = "ragqa") -> None:
    """Write JUnit XML with one ``testsuite`` per suite (the path was checked before the run).

    Args:
        path: the XML file to write; written to a temporary name and renamed, so a reader never
            sees half a file.
        suites: the suites in order.
        name: the ``testsuites`` element's name.
    """
    every = [c for s in suites for c in s.cases]
    root = ET.Element("testsuites", {"name": name, **_counts(every)})
    for s in suites:
        suite = ET.SubElement(root, "testsuite", {"name": s.name, "skipped": "0", **_counts(s.cases)})
        for c in s.cases:
            case = ET.SubElement(suite, "testcase", classname=c.classname, name=c.name, time=f"{c.time_s:.3f}")
            if c.properties:
                props = ET.SubElement(case, "properties")
                for prop_name, value in c.properties:
                    ET.SubElement(props, "property", name=prop_name, value=value)
            if c.failure is not None:
                element = ET.SubElement(case, "failure", message=c.failure[0], type="MetricAssertionError")
                element.text = c.failure[1]
            elif c.error is not None:
                element = ET.SubElement(case, "error", message=c.error[0], type="JudgeError")
                element.text = c.error[1]
            if c.output:
                ET.SubElement(case, "system-out").text = c.output
    ET.indent(root)
    replace_file(
        Path(path), lambda temporary: ET.ElementTree(root).write(temporary, encoding="utf-8", xml_declaration=True)
    )
