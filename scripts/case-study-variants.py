#!/usr/bin/env python3
"""The case study of "The Sunk Carbon Fallacy" (SoCC 2024) under alternative modelling choices.

Prints, for each variant, what SCI placement adds over oSCI placement on the paper's 740-server
fleet (examples/fleets/mit-740.toml): the peak and where it lies, and the utilization band above
5% (years in service) or 10% (embodied zeroed after 5 years), the thresholds the paper quotes.
The first row is lumos's default `paper` model (the paper's cluster footprint with a base power
per server running jobs, sized so that embodied carbon is 20% of lifecycle emissions); the rest
change one choice each. It is the exploration behind docs/guide/carbon.md, "The case study's
model": a continuous fill
(server types filled in metric order, jobs not rounded to whole jobs), so its band edges can differ
by a point from `lumos place --case-study`, which places seeded jobs one by one.
Usage: scripts/case-study-variants.py [FLEET.toml]
"""
import math
import sys
import tomllib

HOURS = 8760


def load(path):
    with open(path, "rb") as f:
        fleet = tomllib.load(f)
    ref = fleet["fleet"]["reference_year"]
    for s in fleet["server"]:
        s["age"] = ref - s["year"]
    return fleet["server"]


def embodied_g_per_year(s, policy, zero_at=False):
    e = s["embodied_kg"] * 1000
    if policy == "years-in-service":
        return e / max(s["lifetime_y"], s["age"])
    old = s["age"] >= s["lifetime_y"] if zero_at else s["age"] > s["lifetime_y"]
    return 0.0 if old else e / s["lifetime_y"]


def paper_base_w(servers, grid=10.0, pue=1.0, share=0.2):
    # The base power per server that makes embodied carbon `share` of the fleet's emissions over
    # its lifetime (the paper chose 10 g/kWh so that it is 20%): lumos's case_study_server_base_w.
    emb = sum(s["count"] * s["embodied_kg"] * 1000 for s in servers)
    wh = sum(s["count"] * s["max_w"] * s["lifetime_y"] * HOURS for s in servers)
    server_h = sum(s["count"] * s["lifetime_y"] * HOURS for s in servers)
    return max(0.0, (emb * (1 / share - 1) / (grid * pue / 1000) - wh) / server_h)


def vc_units(s):
    # A thread's virtual-core class (the paper's Fig. 6: VC1 250-500 score, VC2 550-700, VC3 = 3x).
    per_thread = s["score"] / s["resources"]
    return s["resources"] * (1 if per_thread < 520 else 2 if per_thread < 1000 else 3)


def curve(servers, policy, footprint="fleet", unit="score", idle=0.0, powered="used", grid=10.0,
          base_w=0.0, pue=1.0, rank_base=False, zero_at=False):
    unit_of = {"score": lambda s: s["score"], "thread": lambda s: s["resources"], "vc": vc_units}
    u = [unit_of[unit](s) for s in servers]
    cap = [s["count"] * uk for s, uk in zip(servers, u)]
    o = [s["max_w"] * HOURS / 1000 * grid * pue / uk for s, uk in zip(servers, u)]  # g/unit-year
    base = [base_w * HOURS / 1000 * grid * pue / uk for uk in u]  # a running server's base power
    rank_o = [ok + (bk if rank_base else 0) for ok, bk in zip(o, base)]
    m = [embodied_g_per_year(s, policy, zero_at) / uk for s, uk in zip(servers, u)]
    sunk = sum(s["count"] * embodied_g_per_year(s, policy, zero_at) for s in servers)
    points = []
    for level in [i / 100 for i in range(101)]:
        fp = {}
        for metric, key in (("osci", lambda k: rank_o[k]), ("sci", lambda k: rank_o[k] + m[k])):
            left, used = level * sum(cap), [0.0] * len(servers)
            for k in sorted(range(len(servers)), key=key):
                used[k] = min(left, cap[k])
                left -= used[k]
            g = sum(used[k] * (o[k] * (1 - idle) + base[k]) for k in range(len(servers)))
            for k, s in enumerate(servers):  # idle power of the servers that are on
                on = {"used": used[k] / u[k], "server": math.ceil(used[k] / u[k] - 1e-9),
                      "type": s["count"] if used[k] > 0 else 0, "all": s["count"]}[powered]
                g += on * u[k] * o[k] * idle
            fp[metric] = g + (sunk if footprint == "fleet" else 0)
        points.append((level, fp["sci"] / fp["osci"] - 1 if fp["osci"] > 0 else 0))
    return points


def summary(points, threshold):
    level, peak = max(points, key=lambda p: p[1])
    band = [lv for lv, a in points if a > threshold]
    edges = f"{100 * band[0]:.0f}-{100 * band[-1]:.0f}%" if band else "none"
    return f"{100 * peak:5.1f}% at {100 * level:3.0f}%, >{100 * threshold:.0f}%: {edges:8s}"


def variants(servers):
    b = paper_base_w(servers)
    paper = {"base_w": b}
    return [
        (f"paper: fleet + {b:.1f} W base per running server (default)", paper),
        ("paper, base power 60 W", {"base_w": 60}),
        ("paper, base power 180 W", {"base_w": 180}),
        ("paper, the 2019 Silver-4116 zeroed too (age >= 5)", {**paper, "zero_at": True}),
        ("paper, base power in the metrics too", {**paper, "rank_base": True}),
        ("paper, jobs in virtual cores", {**paper, "unit": "vc"}),
        ("paper, PUE 1.2 (base power re-sized: "
         f"{paper_base_w(servers, pue=1.2):.1f} W)", {"base_w": paper_base_w(servers, pue=1.2),
                                                      "pue": 1.2}),
        ("fleet footprint (--case-study-model fleet)", {}),
        ("marginal footprint (--case-study-model marginal)", {"footprint": "marginal"}),
        ("marginal, idle 30% of TDP on servers in use", {"footprint": "marginal", "idle": 0.3,
                                                         "powered": "server"}),
        ("fleet, idle 30% of TDP on every server", {"idle": 0.3, "powered": "all"}),
        ("marginal, idle 30% on every server of a type in use", {"footprint": "marginal",
                                                                 "idle": 0.3, "powered": "type"}),
        ("marginal, jobs in virtual cores", {"footprint": "marginal", "unit": "vc"}),
        ("marginal, jobs in threads", {"footprint": "marginal", "unit": "thread"}),
        ("marginal, 11.85 g/kWh (embodied 20% of service life)", {"footprint": "marginal",
                                                                 "grid": 11.85}),
    ]


if __name__ == "__main__":
    servers = load(sys.argv[1] if len(sys.argv) > 1 else "examples/fleets/mit-740.toml")
    print(f"{'variant':56s} {'years in service':34s} zeroed after 5 years")
    for name, kw in variants(servers):
        print(f"{name:56s} {summary(curve(servers, 'years-in-service', **kw), 0.05)}  "
              f"{summary(curve(servers, 'zero-after-lifetime', **kw), 0.10)}")
