"""What a figure of ``experiments.plot`` shows, read back from its matplotlib objects:
the panels by title, their labelled lines and bars, and the hollow (cpu_bound)
markers, so that tests compare the plotted numbers with the run's."""

from __future__ import annotations

from typing import Any

Points = list[tuple[float, float]]


def panels(fig: Any) -> dict[str, Any]:
    """The visible panels by title."""
    return {ax.get_title(): ax for ax in fig.axes if ax.get_visible() and ax.get_title()}


def lines(ax: Any) -> dict[str, Points]:
    """The labelled lines of a panel: label -> its (x, y) points."""
    return {line.get_label(): [(float(x), float(y)) for x, y in
                               zip(line.get_xdata(), line.get_ydata(), strict=True)]
            for line in ax.get_lines() if not line.get_label().startswith("_")}


def markers(ax: Any, hollow: bool) -> Points:
    """The unlabelled one-point markers (the measured points), hollow or filled."""
    return sorted((float(line.get_xdata()[0]), float(line.get_ydata()[0]))
                  for line in ax.get_lines()
                  if line.get_label().startswith("_") and len(line.get_xdata()) == 1
                  and (str(line.get_markerfacecolor()) == "none") == hollow)


def bars(ax: Any) -> dict[str, Points]:
    """The bars of a panel: label -> (x of the bar's centre, height) per bar."""
    return {c.get_label(): [(float(p.get_x() + p.get_width() / 2), float(p.get_height()))
                            for p in c.patches] for c in ax.containers}
