#!/usr/bin/env python3
"""memsight against the tools people trust, side by side (a benchmark, not a test).

Run through bench/peers.sh, which installs likwid, builds memsight and builds multichase and
STREAM 5.10 from their sources. Every class alternates memsight and its peer(s) in one run,
ROUNDS times (default 5), switching which goes first each round, on the same CPUs, page kind and
sizes, and prints per class the median of each tool's per-run figure and the ratio
memsight ÷ best peer.

Like with like (see README "Agreement with the peers"):
- Bandwidth is program bytes, 10^9 B/s (likwid-bench's MByte/s and STREAM's MB/s count the same:
  no write-allocate traffic). Each tool's per-run figure is what it prints: memsight's median of
  samples, likwid-bench's one rate over its run, STREAM's best rate; the medians over rounds are
  compared.
- Pages: 4 KiB for everyone (likwid and STREAM get malloc's pages, which stay 4 KiB where THP is
  madvise-only; memsight is told --page-kind 4k). Where THP is "always" every tool gets THP.
- Latency: multichase prints the best of its samples; its median is computed here from the
  samples it prints with -v, and compared with memsight's median (both "best" figures are shown).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

MS = os.environ.get("MEMSIGHT", "target/release/memsight")
PEERS = os.environ["PEERS_BUILD"]
ROUNDS = int(os.environ.get("ROUNDS", "5"))
ONLY = set(filter(None, os.environ.get("ONLY", "").split(",")))


def sh(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(cmd, capture_output=True, text=True, env=e)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-400:]}")
    return r.stdout


def memsight_json(args):
    return json.loads(sh([MS, "--json", "--no-progress", *args]))


def ms_bw(test, size, cpus, *extra):
    d = memsight_json(["bandwidth", "--test", test, "--size", size, "--cpus", cpus, "--page-kind", "4k",
                       "--isa", MS_ISA, *extra])
    p = d["results"]["points"][0]
    return p["program_gbs"]["median"], p["program_gbs"]["dropped"]


def likwid(kernel, size, threads):
    out = sh(["likwid-bench", "-t", kernel, "-W", f"N:{size}:{threads}"])
    m = re.search(r"MByte/s:\s+([\d.]+)", out)
    return float(m.group(1)) / 1000.0


def stream_best(kernel):
    out = sh([f"{PEERS}/stream.80M"], env={"OMP_NUM_THREADS": str(NCPU), "OMP_PROC_BIND": "true", "OMP_PLACES": "cores"})
    m = re.search(rf"^{kernel}:\s+([\d.]+)", out, re.M)
    return float(m.group(1)) / 1000.0


def ms_stream(kernel):
    d = memsight_json(["stream", "--elements", "80000000", "--ntimes", "20", "--threads", "all"])
    k = next(k for k in d["results"]["kernels"] if k["function"].lower().startswith(kernel.lower()))
    return k["best_rate_mbs"] / 1000.0, k["gbs"]["dropped"]


def ms_latency(pattern, stride, write=False):
    d = memsight_json(["latency", "--min-size", "1G", "--max-size", "1G", "--stride", str(stride),
                       "--pattern", pattern, "--no-tlb", "--parallel", "1", "--cpu", "0", "--page-kind", "4k",
                       *(["--write"] if write else [])])
    ns = d["results"]["ladders"][0]["main"]["points"][-1]["ns"]
    return ns["median"], ns["dropped"], ns["min"]


def multichase(stride, window, chase="simple"):
    out = sh(["taskset", "-c", "0", f"{PEERS}/multichase/multichase", "-m", "1g", "-s", str(stride),
              "-T", window, "-n", "10", "-v", "-c", chase])
    samples = [float(x) for x in re.findall(r"avg=([\d.]+)", out)]
    best = float(out.strip().splitlines()[-1].split()[-1])
    return statistics.median(samples), best


NCPU = len(os.sched_getaffinity(0))
ALL = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
ISA = os.environ.get("LIKWID_ISA", "avx512")
# memsight's vector width for likwid's kernel suffix: both tools run the same width.
MS_ISA = {"avx512": "avx512", "avx": "avx2", "sse": "sse2"}[ISA]

# name, unit, higher is better, memsight runner, {peer name: runner}
BW = 4 * 1024  # MiB total over the threads, per stream set: well above any LLC here
CLASSES = [
    ("L1 read 16 KiB, 1 thread", "GB/s", True, lambda: ms_bw("read", "16K", "0"),
     {"likwid load_" + ISA: lambda: likwid("load_" + ISA, "16kB", 1)}),
    ("L1 write 16 KiB, 1 thread", "GB/s", True, lambda: ms_bw("write", "16K", "0"),
     {"likwid store_" + ISA: lambda: likwid("store_" + ISA, "16kB", 1)}),
    ("L1 copy 16 KiB, 1 thread", "GB/s", True, lambda: ms_bw("copy", "16K", "0"),
     {"likwid copy_" + ISA: lambda: likwid("copy_" + ISA, "16kB", 1)}),
    ("L1 copy 16 KiB, 1 thread, arrays back to back", "GB/s", True,
     lambda: ms_bw("copy", "16K", "0", "--array-gap", "0"),
     {"likwid copy_" + ISA: lambda: likwid("copy_" + ISA, "16kB", 1)}),
    ("L2 read 256 KiB, 1 thread", "GB/s", True, lambda: ms_bw("read", "256K", "0"),
     {"likwid load_" + ISA: lambda: likwid("load_" + ISA, "256kB", 1)}),
    ("L2 write 256 KiB, 1 thread", "GB/s", True, lambda: ms_bw("write", "256K", "0"),
     {"likwid store_" + ISA: lambda: likwid("store_" + ISA, "256kB", 1)}),
    ("L2 copy 256 KiB, 1 thread", "GB/s", True, lambda: ms_bw("copy", "256K", "0"),
     {"likwid copy_" + ISA: lambda: likwid("copy_" + ISA, "256kB", 1)}),
    ("DRAM read, all CPUs", "GB/s", True, lambda: ms_bw("read", "512M", ALL),
     {"likwid load_" + ISA: lambda: likwid("load_" + ISA, f"{NCPU * 512}MB", NCPU)}),
    ("DRAM NT write, all CPUs", "GB/s", True, lambda: ms_bw("write-nt", "512M", ALL),
     {"likwid store_mem_" + ISA: lambda: likwid("store_mem_" + ISA, f"{NCPU * 512}MB", NCPU)}),
    ("DRAM NT copy, all CPUs", "GB/s", True, lambda: ms_bw("copy-nt", "512M", ALL),
     {"likwid copy_mem_" + ISA: lambda: likwid("copy_mem_" + ISA, f"{NCPU * 512}MB", NCPU)}),
    # memsight places a thread's arrays 2 KiB + 64 B apart within their pages; likwid's streams
    # are separate allocations. The same class with memsight's arrays back to back (every array
    # at the same page offset) tells whether placement explains a difference.
    ("DRAM NT copy, all CPUs, arrays back to back", "GB/s", True,
     lambda: ms_bw("copy-nt", "512M", ALL, "--array-gap", "0"),
     {"likwid copy_mem_" + ISA: lambda: likwid("copy_mem_" + ISA, f"{NCPU * 512}MB", NCPU)}),
    ("DRAM copy, all CPUs", "GB/s", True, lambda: ms_bw("copy", "512M", ALL),
     {"likwid copy_" + ISA: lambda: likwid("copy_" + ISA, f"{NCPU * 512}MB", NCPU)}),
    ("STREAM Copy (best), 80M elements", "GB/s", True, lambda: ms_stream("Copy"),
     {"STREAM 5.10": lambda: stream_best("Copy")}),
    ("STREAM Triad (best), 80M elements", "GB/s", True, lambda: ms_stream("Triad"),
     {"STREAM 5.10": lambda: stream_best("Triad")}),
    ("DRAM latency, 128 B stride, 256 KiB windows, 1 GiB", "ns", False, lambda: ms_latency("window", 128),
     {"multichase -s 128 -T 256k": lambda: multichase(128, "256k")}),
    ("DRAM latency, random over 1 GiB", "ns", False, lambda: ms_latency("random", 128),
     {"multichase -s 128 -T 1g": lambda: multichase(128, "1g")}),
    ("DRAM write latency (write chase), 128 B stride, 256 KiB windows, 1 GiB", "ns", False,
     lambda: ms_latency("window", 128, write=True),
     {"multichase -c incr -s 128 -T 256k": lambda: multichase(128, "256k", "incr")}),
]


def first(x):
    return x[0] if isinstance(x, tuple) else x


def main():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
    print(f"date: {sh(['date', '-u', '+%Y-%m-%d %H:%M UTC']).strip()}; host: {os.uname().nodename}; CPU: {model}")
    print(f"uptime: {sh(['uptime']).strip()}")
    print(f"CPUs {ALL}; {ROUNDS} rounds, alternating; 4 KiB pages; likwid kernels *_{ISA}, memsight --isa {MS_ISA}")
    rows = []
    for name, unit, higher, ms, peers in CLASSES:
        if ONLY and not any(o.lower() in name.lower() for o in ONLY):
            continue
        mine, theirs, dropped, extra = [], {p: [] for p in peers}, 0, {p: [] for p in peers}
        for r in range(ROUNDS):
            order = [("memsight", ms)] + list(peers.items())
            if r % 2:
                order.reverse()
            for who, run in order:
                v = run()
                if who == "memsight":
                    mine.append(first(v))
                    if isinstance(v, tuple):
                        dropped += v[1]
                else:
                    theirs[who].append(first(v))
                    if isinstance(v, tuple):
                        extra[who].append(v[1])
        m = statistics.median(mine)
        for p, vals in theirs.items():
            pm = statistics.median(vals)
            ratio = m / pm if higher else m / pm
            note = ""
            if extra[p]:
                note = f"(peer's printed best: median {statistics.median(extra[p]):.1f})"
            rows.append((name, unit, m, min(mine), max(mine), p, pm, min(vals), max(vals), ratio, dropped, note, higher))
        sys.stdout.flush()
    print()
    print(f"{'class':<52} {'unit':<5} {'memsight median (min–max)':<28} {'peer':<28} {'peer median (min–max)':<24} ratio  dropped")
    for (name, unit, m, mlo, mhi, p, pm, plo, phi, ratio, dropped, note, higher) in rows:
        print(f"{name:<52} {unit:<5} {m:8.1f} ({mlo:.1f}–{mhi:.1f}){'':<8} {p:<28} {pm:8.1f} ({plo:.1f}–{phi:.1f})   {ratio:5.2f}  {dropped} {note}")
    print("ratio = memsight ÷ peer (bandwidth: > 1 means memsight measures more; latency: 1.00 = level)")
    print(f"uptime: {sh(['uptime']).strip()}")


if __name__ == "__main__":
    main()
