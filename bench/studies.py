#!/usr/bin/env python3
"""Prints the figures bench/studies.sh quotes from one memsight JSON result: studies.py NAME FILE."""
import json
import sys


def texts(findings):
    """Each finding's sentence: results of schema 4 keep findings as objects with their text."""
    return [f if isinstance(f, str) else f["text"] for f in findings]


def plan(r):
    for p in r["plans"]:
        x = p["parts"][0]
        o = x["organisation"]
        w = p.get("power") or {}
        act = 4 * 64 / x["tfaw_ns"]
        print(f"  {x['part']}: {x['chips']} chips, {o['bank_groups']}x{o['banks_per_group']} banks, "
              f"{o['rows']} rows x {o['columns']} columns, page {o['page_bytes']} B, tFAW {x['tfaw_ns']:.1f} ns, "
              f"peak {p['peak_mbs'] / 1000:.1f} GB/s, power {w.get('idle_w', 0):.1f} W idle / "
              f"{w.get('loaded_w', 0):.1f} W loaded, activate ceiling {act:.1f} GB/s per rank")


def bandwidth(r):
    full = max(p["threads"] for p in r["points"])
    for p in r["points"]:
        if p["threads"] == full:
            data = p.get("pattern") or "-"
            print(f"  {p['test']['name']:>18} ({p['isa']}, data {data}): {p['program_gbs']['median']:.1f} GB/s program, "
                  f"{p['dram_gbs']['median']:.1f} GB/s est. DRAM ({p['threads']} threads, "
                  f"{p['bytes_per_thread'] >> 20} MiB each)")
    for f in texts(r["findings"]):
        if "CLZERO" in f or f.startswith("skipped"):
            print(f"  {f}")


def alloc(r):
    for c in r["configs"]:
        s = c.get("peak_rss_over_peak_live") or {}
        e = c.get("rss_over_live") or {}
        a = c.get("arenas") or {}
        print(f"  {c['config']['name']:>15}: peak RSS / peak live {s.get('median', float('nan')):.2f}x, "
              f"RSS / live at the end {e.get('median', float('nan')):.2f}x, arenas {a.get('median', '-')}")
    print("  " + "; ".join(texts(r["recommendation"])))


def rowbuffer(r):
    for s in r["summaries"]:
        print(f"  {s['kernel']} on {s['memory']}: peak {s['peak_gbs']:.1f}, median {s['median_gbs']:.1f}, "
              f"worst {s['worst_gbs']:.1f} GB/s, {s['dips']} dips over {s['points']} points")
    probe = r.get("probe") or {}
    print("  probe: " + probe.get("message", "-")[:200])


def pmem(r):
    if r["fills"]:
        print("  PMDK's classes: " + ", ".join(f"{f['object_bytes']} B {100 * f['utilisation']:.1f}%" for f in r["fills"]))
    if r.get("custom"):
        print("  the class given: " + ", ".join(f"{f['object_bytes']} B {100 * f['utilisation']:.1f}%" for f in r["custom"]))
    for c in r["concurrency"]:
        f = c.get("free_at_failure") or {}
        print(f"  {c['strategy']:>9}: {c['failures']} of {c['allocations'] + c['failures']} failed, "
              f"imbalance {c['imbalance']}, exhaustion {c['exhausted']}, free at failure median "
              f"{100 * f.get('median', 0):.0f}% (least {100 * f.get('least', 0):.0f}%), {c['allocations_per_s']:.0f}/s")
    for v in r.get("volume", []):
        print(f"  volume {v['strategy']:>9}: " + json.dumps({k: v[k] for k in v if k != 'strategy'})[:200])


def latency(r):
    l = r["ladders"][0]
    mem = [p for p in l["levels"]["plateaus"] if p["name"] == "memory"]
    line = f"  memory {mem[0]['ns']:.1f} ns on {l['main']['buffer']['kind']} pages" if mem else "  no memory plateau"
    if l["tlb"]:
        t = l["tlb"][-1]
        line += f"; at {t['size_bytes'] >> 20} MiB {t['small_ns']:.1f} ns vs {t['huge_ns']:.1f} ns on huge pages"
    print(line)
    for f in texts(r["findings"]):
        if "memory-level parallelism" in f:
            print("  " + f)


def tiers(r):
    for t in r["targets"]:
        blocks = ", ".join(f"{b['block_bytes']} B {b['ns']['median']:.0f}" for b in t["block_latency"])
        med = lambda s: f"{s['median']:.0f}" if s else "-"
        print(f"  {json.dumps(t['target'])[:60]}: read {med(t.get('read_latency_ns'))} ns, write "
              f"{med(t.get('write_latency_ns'))} ns; by access size {blocks} ns; granules read "
              f"{t.get('read_granule')} B, write {t.get('write_granule')} B")
    for f in texts(r["findings"]):
        if "access size" in f or "persisting" in f:
            print("  " + f[:300])


def loaded(r):
    for c in r["curves"]:
        k = c["knee_gbs"]
        idle = next((p for p in c["points"] if p["delay_cycles"] is None), None)
        print(f"  {c['mix']}: idle {idle['latency_ns']['median']:.0f} ns, saturation {c['saturation_gbs']:.1f} GB/s, knee "
              + (f"{k:.1f} GB/s" if k else "not reached"))


doc = json.load(open(sys.argv[2]))
{"plan": plan, "bandwidth": bandwidth, "alloc": alloc, "rowbuffer": rowbuffer, "pmem": pmem,
 "latency": latency, "tiers": tiers, "loaded": loaded}[sys.argv[1]](doc["results"])
