#!/usr/bin/env python3
"""Compares `cudoctor ldd` with glibc's own loader (`ld.so --list`) on every shared library
under the given directories: the set of (name => path) pairs each resolves must be the same.

  scripts/ldd-agreement.py CUDOCTOR DIR... [--ld-library-path DIRS] [--limit N] [--json OUT]

Prints one line per disagreement and a summary line "N passed, N failed"; exits 1 on any
disagreement. Files that ld.so itself refuses (not dynamic, wrong class) are skipped."""
import argparse, json, os, re, subprocess, sys, time

LDSO = "/lib64/ld-linux-x86-64.so.2"

def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False

def candidates(dirs, limit):
    seen = set()
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                p = os.path.join(root, f)
                if ".so" not in f or os.path.islink(p) or not os.path.isfile(p) or not is_elf(p):
                    continue
                real = os.path.realpath(p)
                if real in seen:
                    continue
                seen.add(real)
                yield p
                if limit and len(seen) >= limit:
                    return

def ldso(path, env):
    # As ldd runs it: with LD_TRACE_LOADED_OBJECTS, missing libraries are listed as "not found".
    r = subprocess.run([LDSO, path], capture_output=True, text=True, env=dict(env, LD_TRACE_LOADED_OBJECTS="1"), timeout=60)
    if r.returncode not in (0, 1) or "not a dynamic executable" in r.stderr + r.stdout:
        return None
    pairs = set()
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
        if m:
            pairs.add((m.group(1), "not found" if m.group(2) == "not found" else m.group(3)))
    return pairs

def ours(cudoctor, path, env, llp):
    args = [cudoctor, "ldd", "--json", path]
    if llp is not None:
        args += ["--ld-library-path", llp]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    if r.returncode == 2:
        return None
    tree = json.loads(r.stdout)[0]
    pairs = set()
    for i, o in enumerate(tree["objects"]):
        if i == 0 or o["rule"] == "interpreter":
            continue
        pairs.add((o["name"], o["path"] if o["found"] else "not found"))
    return pairs

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cudoctor")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--ld-library-path")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if a.ld_library_path is not None:
        env["LD_LIBRARY_PATH"] = a.ld_library_path
    passed = failed = skipped = 0
    t_ours = t_ldso = 0.0
    problems = []
    for p in candidates(a.dirs, a.limit):
        t0 = time.perf_counter()
        want = ldso(p, env)
        t1 = time.perf_counter()
        got = ours(a.cudoctor, p, env, a.ld_library_path)
        t2 = time.perf_counter()
        t_ldso += t1 - t0
        t_ours += t2 - t1
        if want is None:
            skipped += 1
            continue
        if got == want:
            passed += 1
        else:
            failed += 1
            problems.append({"file": p, "ld.so only": sorted(want - (got or set())), "cudoctor only": sorted((got or set()) - want)})
            print(f"DISAGREE {p}\n  ld.so only:    {sorted(want - (got or set()))}\n  cudoctor only: {sorted((got or set()) - want)}")
    print(f"ldd agreement over {passed + failed} files ({skipped} skipped), LD_LIBRARY_PATH={a.ld_library_path!r}: "
          f"ld.so --list {t_ldso:.1f} s, cudoctor ldd {t_ours:.1f} s (one process per file each)")
    print(f"{passed} passed, {failed} failed")
    if a.json:
        json.dump({"passed": passed, "failed": failed, "skipped": skipped, "problems": problems}, open(a.json, "w"), indent=1)
    sys.exit(1 if failed else 0)

if __name__ == "__main__":
    main()
