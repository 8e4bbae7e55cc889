#!/usr/bin/env python3
"""`cudoctor ldd` over the CUDA 13 toolkit's libraries and Debian's libtorch, in one process,
against glibc's `ld.so --list` once per file (what `ldd` does), with their agreement; the
system calls one cudoctor run makes (strace -c, when installed); and the offline check's
median wall time and peak memory. Reported, not asserted.

  bench/ldd_speed.py CUDOCTOR [--runs N]"""
import argparse, importlib.util, json, os, shutil, statistics, subprocess, tempfile, time

LDSO = "/lib64/ld-linux-x86-64.so.2"
DIRS = ["/usr/local/cuda-13.0/lib", "/usr/local/cuda-13.0/targets/x86_64-linux/lib"]
TORCH = "/usr/lib/x86_64-linux-gnu"

# The agreement script's own readers: one notion of "an ELF file" and of ld.so's answer.
_spec = importlib.util.spec_from_file_location(
    "ldd_agreement", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "ldd-agreement.py"))
agreement = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agreement)
is_elf = agreement.is_elf

def files():
    seen, out = set(), []
    names = [(d, f) for d in DIRS if os.path.isdir(d) for f in sorted(os.listdir(d))]
    names += [(TORCH, f) for f in sorted(os.listdir(TORCH)) if f.startswith("libtorch") or f.startswith("libc10")]
    for d, f in names:
        p = os.path.join(d, f)
        if ".so" not in f or os.path.islink(p) or not os.path.isfile(p) or not is_elf(p):
            continue
        if os.path.realpath(p) in seen:
            continue
        seen.add(os.path.realpath(p))
        out.append(p)
    return out

def our_pairs(tree):
    return {(o["name"], o["path"] if o["found"] else "not found")
            for i, o in enumerate(tree["objects"]) if i and o["rule"] != "interpreter"}

def timed(cmd, env):
    """Wall seconds of one run."""
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0

def peak_rss(cmd, env):
    """Peak RSS in KiB, from GNU time, not this interpreter's wait4: a child forked from Python
    keeps Python's own high-water mark through exec (the kernel carries the old mm's
    hiwater_rss into the process's maxrss), so it would read as this script's size."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env)
        return int(rss.read().split()[-1])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cudoctor")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    fs = files()
    print(f"{len(fs)} files: the CUDA 13.0 toolkit's libraries and Debian's libtorch/libc10")

    ldd = [a.cudoctor, "ldd", "--json", *fs]
    ours = [timed(ldd, env) for _ in range(a.runs)]
    theirs = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        for f in fs:
            subprocess.run([LDSO, "--list", f], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        theirs.append(time.perf_counter() - t0)
    t_ours = statistics.median(ours)
    t_theirs = statistics.median(theirs)
    print(f"cudoctor ldd, one process: median {t_ours * 1000:.1f} ms [{min(ours) * 1000:.1f}-"
          f"{max(ours) * 1000:.1f}], peak RSS {peak_rss(ldd, env) / 1024:.1f} MiB")
    print(f"ld.so --list per file:     median {t_theirs * 1000:.1f} ms [{min(theirs) * 1000:.1f}-{max(theirs) * 1000:.1f}]")
    print(f"ratio: {t_theirs / t_ours:.1f}x")

    trees = json.loads(subprocess.run([a.cudoctor, "ldd", "--json", *fs], capture_output=True, text=True, env=env).stdout)
    agree = sum(our_pairs(t) == agreement.ldso(f, env) for f, t in zip(fs, trees))
    print(f"agreement with ld.so: {agree}/{len(fs)} files ({100.0 * agree / len(fs):.0f} %)")

    if shutil.which("strace"):
        with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
            subprocess.run(["strace", "-f", "-c", "-o", out.name, a.cudoctor, "ldd", "--json", *fs],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            calls = {}
            for line in out.read().splitlines():
                parts = line.split()
                if len(parts) >= 5 and parts[-1] in ("newfstatat", "statx", "openat", "getdents64", "readlinkat"):
                    errors = int(parts[4]) if len(parts) == 6 else 0
                    calls[parts[-1]] = (int(parts[3]), errors)
            print("system calls of one run: " + ", ".join(f"{k} {n} ({e} failed)" for k, (n, e) in sorted(calls.items())))

    offline = [a.cudoctor, "--no-runtime", "--json"]
    check = [timed(offline, env) for _ in range(max(a.runs, 11))]
    print(f"offline check (cudoctor --no-runtime --json): median {statistics.median(check) * 1000:.1f} ms "
          f"[{min(check) * 1000:.1f}-{max(check) * 1000:.1f}], peak RSS {max(peak_rss(offline, env) for _ in range(3)) / 1024:.1f} MiB")

main()
