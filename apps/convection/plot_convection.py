#!/usr/bin/env python3
"""Plot flowcl-convection's diagnostics: the kinetic energy (log scale) and the plates' Nusselt
numbers against time. Usage: plot_convection.py diagnostics.csv out.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
    t = [float(r["t"]) for r in rows]
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    a.semilogy(t, [max(float(r["energy"]), 1e-300) for r in rows])
    a.set_ylabel("kinetic energy <|u|^2>/2")
    b.plot(t, [float(r["nu_bottom"]) for r in rows], label="bottom plate")
    b.plot(t, [float(r["nu_top"]) for r in rows], "--", label="top plate")
    b.set_ylabel("Nusselt number")
    b.set_xlabel("t (H^2 / kappa)")
    b.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
