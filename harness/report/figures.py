"""harness/report/figures.py: the report's figures, drawn by matplotlib as inline SVG.

- the interop heatmap: producer rows x consumer columns of the bridge's matrix
  (interop.json), each cell coloured by its outcome, hatched (so outcomes differ in
  greyscale too) and labelled with the outcome and its counts; each cell's group has the
  id heatmap-cell-ROW-COLUMN, which the browser check counts;
- the bench figures (harness/report/bench_text.py's JSON): each series as lines, bars or
  points, and the ratios against their goals as one bar chart.

Text stays text in the SVG (svg.fonttype none), so the page is searchable and the
browser check can read labels; matplotlib escapes it. Each figure gets its own hash salt,
so the ids of two inline figures never collide and the output is the same for the same
input.
"""
import io
import re

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

# Outcome of a heatmap cell -> (fill, hatch, text colour); Okabe-Ito hues whose
# lightness differs (vermillion, reddish purple, a light orange, a pale blue), hatches
# of their own so that greyscale prints and colour-blind readers still tell them apart.
# A Warning (a broken SHOULD clause, or a TSM rule under --profile standard) is no
# failure: its own hue and its horizontal hatch, never the Fail's or the XFail's.
OUTCOME_STYLE = {
    "fail": ("#d55e00", "xx", "white"),
    "warning": ("#cc79a7", "--", "black"),
    "xfail": ("#f0c05a", "//", "black"),
    "pass": ("#d4ecf7", "", "black"),
    "skip": ("#ffffff", "..", "black"),
}
OUTCOME_LABEL = {"fail": "FAIL", "warning": "warnings (SHOULD/TSM)", "xfail": "known failures",
                 "pass": "pass", "skip": "skipped"}
BAD = ("Fail", "XPass", "Crash", "Error", "Timeout")
SVG_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)


def svg_of(fig, salt):
    """The figure as an <svg> element to inline (no XML prologue, no metadata)."""
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    plt.close(fig)
    return SVG_PROLOGUE.sub("", buf.getvalue(), count=1)


def cell_outcome(counts):
    """A cell's outcome, the worst of its counts: a failure, then a Warning, then an
    expected failure, then a pass."""
    if sum(counts.get(s, 0) for s in BAD):
        return "fail"
    if counts.get("Warning", 0):
        return "warning"
    if counts.get("XFail", 0):
        return "xfail"
    if counts.get("Pass", 0):
        return "pass"
    return "skip"


def cell_label(outcome, counts):
    parts = [f"{n} {s.lower()}" for s, n in counts.items() if n]
    return "\n".join([OUTCOME_LABEL[outcome]] + parts)


def heatmap_axes(ax, rows, cols):
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(cols))], cols)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], rows)
    ax.xaxis.tick_top()
    ax.set_xlabel("consumer")
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("producer")
    ax.tick_params(length=0, labelsize=11)
    for side in ax.spines.values():
        side.set_visible(False)


def heatmap_svg(rows, cols, matrix):
    """The interop matrix as SVG; matrix[row][col] is a {status: count} dict or absent."""
    fig, ax = plt.subplots(figsize=(1.9 * len(cols) + 1.2, 1.1 * len(rows) + 0.8))
    heatmap_axes(ax, rows, cols)
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            counts = matrix.get(row, {}).get(col)
            if counts is None:
                continue
            outcome = cell_outcome(counts)
            fill, hatch, ink = OUTCOME_STYLE[outcome]
            cell = Rectangle((j, i), 1, 1, facecolor=fill, hatch=hatch, edgecolor="#555555",
                             linewidth=0.8)
            cell.set_gid(f"heatmap-cell-{i}-{j}")
            ax.add_patch(cell)
            ax.text(j + 0.5, i + 0.5, cell_label(outcome, counts), ha="center", va="center",
                    fontsize=10, color=ink, linespacing=1.2,
                    bbox={"facecolor": fill, "edgecolor": "none", "pad": 1.5})
    return svg_of(fig, "heatmap")


def series_svg(index, series):
    """One bench series: x against one or more labelled y lists."""
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    style = series.get("style", "line")
    xs = series["x"]
    positions = list(range(len(xs))) if style == "bar" else xs
    width = 0.8 / max(1, len(series["lines"]))
    for k, line in enumerate(series["lines"]):
        if style == "bar":
            ax.bar([p + k * width for p in positions], line["y"], width, label=line["label"],
                   hatch=["", "//", "..", "xx"][k % 4], edgecolor="#333333")
        else:
            ax.plot(positions, line["y"], marker="os^D"[k % 4],
                    linestyle="" if style == "points" else "-", label=line["label"])
    if style == "bar":
        ax.set_xticks([p + width * (len(series["lines"]) - 1) / 2 for p in positions], xs,
                      rotation=30, ha="right")
    ax.set_xlabel(series.get("x_label", ""))
    ax.set_ylabel(series.get("y_label", ""))
    if series.get("log_y"):
        ax.set_yscale("log")
    if series.get("log_x"):
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return svg_of(fig, f"series-{index}")


def ratios_svg(ratios):
    """The bench ratios as horizontal bars, each stated goal a red mark."""
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(ratios) + 1.0))
    names = [r["name"] for r in ratios]
    ax.barh(range(len(ratios)), [r["value"] for r in ratios], color="#9ecae1", edgecolor="#333333")
    for i, r in enumerate(ratios):
        ax.text(r["value"], i, f" {r['value']:.2f}", va="center", fontsize=8)
        if r.get("goal") is not None:
            ax.plot([r["goal"]] * 2, [i - 0.4, i + 0.4], color="#d55e00", linewidth=2)
    ax.set_yticks(range(len(ratios)), names, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="#333333", linestyle="--", linewidth=1)
    stated = any(r.get("goal") is not None for r in ratios)
    ax.set_xlabel("ratio to the baseline (dashed: equal)" + ("; red mark: the goal" if stated else ""))
    ax.grid(True, axis="x", alpha=0.3)
    return svg_of(fig, "ratios")
