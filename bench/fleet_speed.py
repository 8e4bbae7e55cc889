#!/usr/bin/env python3
"""`cudoctor fleet` over many reports: wall time and peak memory for 1,000 and 10,000 report
files, and `cudoctor diff` of two. The reports are the real H200 machine's report
(tests/fixtures/snapshots/h200-docker-580.json, 43 KB) and this machine's own
`cudoctor --no-runtime --json`, each node given its host name, with one node in a hundred
broken. Reported, not asserted.

  bench/fleet_speed.py CUDOCTOR [--nodes 1000,10000] [--runs N]"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = os.path.join(HERE, "..", "tests", "fixtures", "snapshots", "h200-docker-580.json")

def write_reports(directory, n, cudoctor):
    h200 = json.load(open(H200))
    local = json.loads(subprocess.run([cudoctor, "--no-runtime", "--json"], capture_output=True, text=True).stdout)
    for i in range(n):
        doc = local if i % 100 == 99 else h200
        doc["host"]["hostname"] = f"node-{i:05}"
        with open(os.path.join(directory, f"node-{i:05}.json"), "w") as f:
            json.dump(doc, f, indent=2)

def measure(cmd):
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        return wall, int(rss.read().split()[-1])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cudoctor")
    ap.add_argument("--nodes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    for n in [int(x) for x in a.nodes.split(",")]:
        d = tempfile.mkdtemp(prefix="cudoctor-fleet-")
        try:
            write_reports(d, n, a.cudoctor)
            size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            subprocess.run(["cat"] + [os.path.join(d, f) for f in sorted(os.listdir(d))[:2000]],
                           stdout=subprocess.DEVNULL)  # warm the page cache
            runs = [measure([a.cudoctor, "fleet", d, "--json"]) for _ in range(a.runs)]
            walls = [w for w, _ in runs]
            print(f"fleet {n:>6} reports ({size / 2**20:.0f} MiB): median {statistics.median(walls):.3f} s "
                  f"[{min(walls):.3f}-{max(walls):.3f}], peak RSS {max(r for _, r in runs) / 1024:.1f} MiB")
            if n == min(int(x) for x in a.nodes.split(",")):
                pair = [os.path.join(d, "node-00000.json"), os.path.join(d, "node-00099.json")]
                dw = [measure([a.cudoctor, "diff", *pair])[0] for _ in range(max(a.runs, 5))]
                print(f"diff of two reports: median {statistics.median(dw) * 1000:.1f} ms")
        finally:
            shutil.rmtree(d)

if __name__ == "__main__":
    main()
