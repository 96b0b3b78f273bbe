"""Geometry of the pictures drawn on the server (the templates write the SVG): the 95%
interval bars of a leaderboard and a bot's rating-history plot."""

from __future__ import annotations

from typing import Any

#: series colours of the history plot (readable on white, distinct in greyscale order)
COLOURS = ("#1f5fa8", "#c0392b", "#2e8540", "#8e44ad", "#b9770e", "#16a085")


def bar(row: dict[str, Any], scale: dict[str, float], width: float = 160.0) -> dict[str, float]:
    """Where a row's interval (``elo_low``..``elo_high``) and its Elo fall on a bar of
    ``width`` pixels that spans ``scale``."""
    span = max(scale["high"] - scale["low"], 1e-9)

    def x(value: float) -> float:
        return round(width * (value - scale["low"]) / span, 1)

    low, high = x(row["elo_low"]), x(row["elo_high"])
    return {"width": width, "low": low, "span": max(high - low, 1.0), "elo": x(row["elo"])}


def history_plot(
    points: list[dict[str, Any]], width: float = 640.0, height: float = 220.0
) -> dict[str, Any]:
    """A line per bot version through its Elo at each checkpoint, with its interval as a
    vertical whisker; checkpoints evenly spaced in order, Elo on the vertical axis."""
    left, right, top, bottom = 56.0, 12.0, 12.0, 28.0
    checkpoints: list[str] = []
    for p in points:
        if p["after"] not in checkpoints:
            checkpoints.append(p["after"])
    low = min((p["elo_low"] for p in points), default=1400.0)
    high = max((p["elo_high"] for p in points), default=1600.0)
    pad = max(10.0, (high - low) * 0.05)
    low, high = low - pad, high + pad
    inner_w, inner_h = width - left - right, height - top - bottom

    def x(index: int) -> float:
        if len(checkpoints) == 1:
            return round(left + inner_w / 2, 1)
        return round(left + inner_w * index / (len(checkpoints) - 1), 1)

    def y(value: float) -> float:
        return round(top + inner_h * (high - value) / (high - low), 1)

    labels = sorted({p["label"] for p in points})
    series = []
    for n, label in enumerate(labels):
        dots = [
            {
                "x": x(checkpoints.index(p["after"])),
                "y": y(p["elo"]),
                "y_low": y(p["elo_low"]),
                "y_high": y(p["elo_high"]),
                "title": f"{label}: {p['elo']:.0f} ({p['elo_low']:.0f}..{p['elo_high']:.0f}) "
                f"after {p['matches']} matches",
            }
            for p in points
            if p["label"] == label
        ]
        path = " ".join(f"{d['x']},{d['y']}" for d in dots)
        series.append(
            {"label": label, "colour": COLOURS[n % len(COLOURS)], "dots": dots, "path": path}
        )
    step = _tick_step(high - low)
    first = int(low // step + 1) * step
    ticks = [{"value": v, "y": y(v)} for v in range(int(first), int(high) + 1, int(step))]
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "bottom": height - bottom,
        "top": top,
        "series": series,
        "ticks": ticks,
        "checkpoints": len(checkpoints),
    }


def _tick_step(span: float) -> int:
    for step in (10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if span / step <= 6:
            return step
    return 2000
