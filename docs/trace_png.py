#!/usr/bin/env python3
"""Render an ncclsim timeline (NCCLSIM_TRACE, Chrome Trace Event Format) to
a PNG: a row per rank and stream, a bar per NCCL operation, a tick per
enqueue, an arrow per flow (send to receive, rank 0's collective to the
others').

    python3 docs/trace_png.py trace.json out.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"ncclSend": "#4c72b0", "ncclRecv": "#55a868", "ncclAllReduce": "#c44e52",
          "ncclPutSignal": "#8172b2", "ncclSignal": "#ccb974", "ncclWaitSignal": "#64b5cd"}


def main(src, dst):
    with open(src) as f:
        events = json.load(f)["traceEvents"]
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    tracks = sorted({(e["pid"], e["tid"]) for e in events if e["ph"] in ("X", "i")})
    row = {t: i for i, t in enumerate(tracks)}
    xs = [e for e in events if e["ph"] == "X"]
    t0 = min(e["ts"] for e in events if e["ph"] in ("X", "i"))
    fig, ax = plt.subplots(figsize=(11, 0.7 * len(tracks) + 1.4))
    for e in xs:
        y = row[(e["pid"], e["tid"])]
        ax.barh(y, e["dur"], left=e["ts"] - t0, height=0.6, color=COLORS.get(e["name"], "#999999"),
                edgecolor="black", linewidth=0.4)
        ax.text(e["ts"] - t0 + e["dur"] / 2, y, e["name"].replace("nccl", ""), ha="center", va="center",
                fontsize=7, color="white", clip_on=True)
    for e in events:
        if e["ph"] == "i":
            y = row[(e["pid"], e["tid"])]
            ax.plot([e["ts"] - t0] * 2, [y - 0.38, y - 0.3], color="black", linewidth=0.8)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    for e in events:
        if e["ph"] == "f" and e["id"] in starts:
            s = starts[e["id"]]
            ax.annotate("", xy=(e["ts"] - t0, row[(e["pid"], e["tid"])] - 0.3),
                        xytext=(s["ts"] - t0, row[(s["pid"], s["tid"])] + 0.3),
                        arrowprops=dict(arrowstyle="->", color="#444444", linewidth=0.7))
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([names.get(t, str(t)) for t in tracks])
    ax.invert_yaxis()
    ax.set_xlabel("microseconds")
    ax.set_title("ncclsim timeline: " + src.split("/")[-1] + " (ticks: enqueues, arrows: flows)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
