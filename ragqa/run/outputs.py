"""Output paths checked before the first judge call: :func:`ragqa.render.paths.check_output_path`, re-exported.

The check lives with the renderers (it is what every writer, :meth:`ragqa.report.Report.to_csv`
included, needs); the run layer and its callers keep importing it from here.
"""

from __future__ import annotations

from ragqa.render.paths import check_output_path

__all__ = ["check_output_path"]
