"""The report's histograms as inline SVG, drawn with matplotlib, byte for byte
the same for the same numbers.

matplotlib's SVG is made deterministic by a fixed `svg.hashsalt` (its clip-path
ids are hashes salted with it, random otherwise) and `metadata={"Date": None}`;
text stays text (`svg.fonttype: none`), so the page stays small. Several SVGs
live in one HTML page, so every id a figure defines (and every reference to
one) takes a prefix of its own: no two elements of the page share an id.
No pyplot (no global figure state); the Figure is drawn by the SVG canvas.
"""

import io
import re

BAR = "#4878a8"
MEAN = "#c44e52"
_RC = {
    "svg.hashsalt": "attention-kit-report",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def bins_for(maximum, n):
    """`n` equal bins from 0 to `maximum` (one bin [0, 1] when maximum is 0)."""
    top = maximum if maximum > 0 else 1.0
    return [top * i / n for i in range(n + 1)]


def counts(values, edges):
    """How many values fall in each bin; the last bin holds its right edge (full marks),
    values outside [first, last] edge are clamped into the end bins."""
    out = [0] * (len(edges) - 1)
    for v in values:
        i = 0
        while i < len(out) - 1 and v >= edges[i + 1]:
            i += 1
        out[i] += 1
    return out


def _svg(fig, prefix):
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # no XML declaration or DOCTYPE inside HTML
    text = re.sub(r"<!--.*?-->|<metadata>.*?</metadata>", "", text, flags=re.S)  # comments, RDF: bulk only
    text = text.replace(' id="', f' id="{prefix}').replace("url(#", f"url(#{prefix}")
    return text.replace('href="#', f'href="#{prefix}').strip()


def histogram(values, maximum, *, prefix, bins=10, size=(5.2, 2.4), xlabel="", ylabel="", mean=None, title=""):
    """An SVG histogram of `values` on [0, `maximum`], as text to put inline in HTML."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    edges = bins_for(maximum, bins)
    heights = counts(values, edges)
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=size, dpi=72)
        ax = fig.add_subplot()
        widths = [b - a for a, b in zip(edges, edges[1:])]
        ax.bar(edges[:-1], heights, width=widths, align="edge", color=BAR, edgecolor="white", linewidth=0.8)
        if mean is not None:
            ax.axvline(mean, color=MEAN, linestyle="--", linewidth=1.2)
        ax.set_xlim(edges[0], edges[-1])
        ax.set_ylim(0, max(heights + [1]) * 1.1)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        if xlabel:
            ax.set_xlabel(xlabel)
        if ylabel:
            ax.set_ylabel(ylabel)
        fig.set_layout_engine("constrained")
        svg = _svg(fig, prefix)
    label = f"<title>{_escape(title)}</title>" if title else ""
    return svg.replace(">", f' role="img">{label}', 1) if label else svg


def _escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
