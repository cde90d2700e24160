#!/usr/bin/env python3
"""Dissipation and enstrophy of a flowcl-tgv run against the 512^3 DNS (Dairay et al. 2017).

usage: plot_tgv.py diagnostics.csv reference.csv out.png reynolds resolution
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def columns(path, names):
    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    out = {n: [] for n in names}
    for r in rows:
        try:
            values = [float(r[n]) for n in names]
        except ValueError:
            continue
        if all(v == v for v in values):  # skip NaN (the first two rows have no -dE/dt)
            for n, v in zip(names, values):
                out[n].append(v)
    return out


def main():
    run, ref, png = sys.argv[1], sys.argv[2], sys.argv[3]
    reynolds, resolution = float(sys.argv[4]), int(sys.argv[5])
    r = columns(ref, ["t", "eps_minus_dEdt", "enstrophy_half_mean_omega2"])
    d = columns(run, ["t_mid", "dissipation_dEdt_pair"])
    z = columns(run, ["t", "enstrophy", "dissipation_2nu_enstrophy"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    if abs(reynolds - 1600) < 1e-9:
        a.plot(r["t"], r["eps_minus_dEdt"], "k-", lw=1, label="DNS 512^3 (Dairay et al. 2017)")
        b.plot(r["t"], r["enstrophy_half_mean_omega2"], "k-", lw=1, label="DNS 512^3")
    a.plot(d["t_mid"], d["dissipation_dEdt_pair"], "C0-", label="flowcl: -dE/dt (over 2 steps)")
    a.plot(z["t"], z["dissipation_2nu_enstrophy"], "C1--", label="flowcl: 2 nu enstrophy")
    b.plot(z["t"], z["enstrophy"], "C0-", label="flowcl")
    a.set_xlabel("t")
    a.set_ylabel("dissipation")
    b.set_xlabel("t")
    b.set_ylabel("enstrophy <|w|^2>/2")
    a.legend()
    b.legend()
    title = f"Taylor-Green vortex, Re = {reynolds:g}, {resolution}^3"
    if abs(reynolds - 1600) < 1e-9 and resolution < 512:
        title += " (under-resolved: the DNS takes 512^3)"
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
