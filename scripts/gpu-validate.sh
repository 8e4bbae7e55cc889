#!/usr/bin/env bash
# GPU validation on a machine with an NVIDIA GPU: runs cudoctor, checks its report against
# nvidia-smi and (when installed) PyTorch, prints a table of pass/fail and figures.
# Uses $CUDOCTOR, else build/src/cudoctor/cudoctor, else a prebuilt build-device/bin/*,
# else builds one (needs cmake and the build dependencies). Writes the report to $OUT if set.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp -d)}

pick() {
  for c in "${CUDOCTOR:-}" "$here/build/src/cudoctor/cudoctor" "$here/build-device/bin/cudoctor-dynamic" \
           "$here/build-device/bin/cudoctor-static"; do
    [[ -n $c && -x $c ]] && "$c" --version >/dev/null 2>&1 && { echo "$c"; return 0; }
  done
  return 1
}
bin=$(pick)
if [[ -z $bin ]] && command -v cmake >/dev/null; then
  "$here/scripts/build.sh" -DCUDOCTOR_TESTS=OFF -DCUDOCTOR_BENCH=OFF >&2 && bin=$(pick)
fi
[[ -n $bin ]] || { echo "gpu-validate: no runnable cudoctor binary and cannot build one" >&2; exit 2; }

echo "== machine"
uname -srm; (. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}")
nvidia-smi -L 2>&1 | head -20
echo "== cudoctor: $bin ($("$bin" --version))"
"$bin" -v --color never; echo "exit code: $?"
"$bin" --json > "$out/report.json"; echo "$?" > "$out/exit_code"
"$bin" --format markdown > "$out/report.md"
# check --deep (issue 15): each framework asked in its own interpreter; its view must agree with the static one.
"$bin" check --deep --json --timeout 120 > "$out/deep.json"; echo "$?" > "$out/deep_exit_code"
"$bin" tune --json > "$out/tune.json"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,compute_cap,pcie.link.gen.max,pcie.link.width.max,persistence_mode \
  --format=csv,noheader,nounits > "$out/nvidia-smi.csv" 2>&1
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
# Power limits, clocks and clocks-event reasons as nvidia-smi reads them (issue 13), beside NVML's in cudoctor's report.
nvidia-smi --query-gpu=index,power.limit,enforced.power.limit,power.default_limit,power.min_limit,power.max_limit,clocks.max.sm,pstate,clocks_event_reasons.active \
  --format=csv,noheader,nounits > "$out/nvidia-smi-power.csv" 2>&1
nvidia-smi -q -d PERFORMANCE,POWER > "$out/nvidia-smi-q.txt" 2>&1
python3 - "$bin" "$out" <<'PY'
import csv, json, os, re, subprocess, sys, time
bin, out = sys.argv[1], sys.argv[2]
rep = json.load(open(f"{out}/report.json"))
rows = []
def check(what, ours, ref, ok=None):
    ok = (str(ours) == str(ref)) if ok is None else ok
    rows.append((what, str(ours), str(ref), "PASS" if ok else "FAIL"))

smi = [r for r in csv.reader(open(f"{out}/nvidia-smi.csv")) if r]
smi = [[c.strip() for c in r] for r in smi]
smi = [r for r in smi if len(r) >= 10]  # drops nvidia-smi error lines
nv = {g["nvml"]["uuid"]: g for g in rep["gpus"] if g.get("nvml")}
check("exit code (0 = healthy)", open(f"{out}/exit_code").read().strip(), "0")
check("verdict", rep["verdict"]["summary"], "healthy", rep["verdict"]["healthy"])
check("GPU count (NVML vs nvidia-smi)", len(nv), len(smi))
check("GPU count (PCI vs nvidia-smi)", sum(1 for g in rep["gpus"] if g["pci"]["address"]), len(smi))
hdr = open(f"{out}/nvidia-smi.txt").read()
m = re.search(r"CUDA Version:\s*([0-9.]+)", hdr)
cuda = rep["driver"]["nvml"]["cuda_driver_version"]
check("CUDA driver version", f"{cuda//1000}.{(cuda%1000)//10}", m.group(1) if m else "?")
for r in smi:
    idx, name, uuid, bus, drv, mem, cc, gen, width, pers = r[:10]
    g = nv.get(uuid)
    if not g:
        check(f"GPU {idx} {uuid} found", "missing", "present", False); continue
    n = g["nvml"]
    bus_sysfs = bus.lower()[4:] if len(bus) == 16 else bus.lower()
    check(f"GPU {idx} name", n["name"], name)
    check(f"GPU {idx} PCI bus id (NVML, sysfs)", f'{n["pci_bus_id"]}, {g["pci"]["address"]}', bus_sysfs,
          n["pci_bus_id"] == bus_sysfs == g["pci"]["address"])
    check(f"GPU {idx} driver version", rep["driver"]["kernel_module"]["version"], drv)
    check(f"GPU {idx} memory MiB", n["memory_total_bytes"] // (1 << 20), mem)
    check(f"GPU {idx} compute capability", n["compute_capability"], cc)
    check(f"GPU {idx} PCIe max gen x width", f'{n["pcie_gen_max"]} x{n["pcie_width_max"]}', f"{gen} x{width}")
    check(f"GPU {idx} persistence", n["persistence_mode"], {"Enabled": "enabled", "Disabled": "disabled"}.get(pers, pers))
    check(f"GPU {idx} sysfs link width", g["pci"]["max_link_width"], width)
# Power limits, maximum SM clock, P-state and clocks-event reasons against nvidia-smi's.
bi = {str(g["nvml"]["index"]): g["nvml"] for g in rep["gpus"] if g.get("nvml")}
def watts(v):
    try: return str(round(float(v)))
    except ValueError: return v
for r in csv.reader(open(f"{out}/nvidia-smi-power.csv")):
    r = [c.strip() for c in r]
    if len(r) < 9 or r[0] not in bi: continue
    n = bi[r[0]]
    check(f"GPU {r[0]} power limit / enforced / default W", f'{n.get("power_limit_w")} / {n.get("power_limit_enforced_w")} / {n.get("power_limit_default_w")}',
          f"{watts(r[1])} / {watts(r[2])} / {watts(r[3])}")
    check(f"GPU {r[0]} power limit range W", f'{n.get("power_limit_min_w")}-{n.get("power_limit_max_w")}', f"{watts(r[4])}-{watts(r[5])}")
    check(f"GPU {r[0]} max SM clock MHz", n.get("max_clock_sm_mhz"), r[6])
    check(f"GPU {r[0]} P-state", f'P{n.get("performance_state")}', r[7])
    reasons = n.get("clocks_event_reasons", -1)
    check(f"GPU {r[0]} clocks-event reasons", f"0x{reasons:016x}" if reasons >= 0 else "?", r[8],
          reasons >= 0 and r[8].startswith("0x") and int(r[8], 16) == reasons)
# L4: the driver API and the runtimes, against nvidia-smi.
rt = rep.get("runtime") or {}
da = rt.get("driver_api") or {}
devs = {d["pci_bus_id"]: d for d in da.get("devices", [])}
check("L4 cuInit", (da.get("init") or {}).get("name", "?"), "CUDA_SUCCESS", (da.get("init") or {}).get("code") == 0)
check("L4 driver API CUDA version", f'{da.get("driver_version",0)//1000}.{(da.get("driver_version",0)%1000)//10}', m.group(1) if m else "?")
check("L4 device count", len(devs), len(smi))
for r in smi:
    idx, name, bus = r[0], r[1], r[3]
    bus_sysfs = bus.lower()[4:] if len(bus) == 16 else bus.lower()
    d = devs.get(bus_sysfs)
    if not d:
        check(f"L4 device at {bus_sysfs}", "missing", "present", False); continue
    check(f"L4 device {idx} name", d["name"], name)
    check(f"L4 device {idx} compute capability", d["compute_capability"], r[6])
    check(f"L4 device {idx} context", d["context"]["name"] or d["context"]["code"], "CUDA_SUCCESS", d["context"]["code"] == 0)
    rows.append((f"L4 device {idx} memory (driver API vs NVML)", f'{d["memory_total_bytes"]>>20} MiB', f"{r[5]} MiB", "INFO"))
for c in rt.get("cudarts", []):
    check(f'L4 runtime {c["library"]}', f'{c["runtime_version"]} -> {c["device_count_call"]["name"] or c["device_count_call"]["code"]}, {c["device_count"]} devices',
          f"{len(smi)} devices", c["device_count_call"]["code"] == 0 and c["device_count"] == len(smi))
# L5: the computation check.
for c in rt.get("compute", []):
    check(f'L5 device {c["device"]} child', c["outcome"]["status"], "ok")
    for k in c.get("copies", []):
        check(f'L5 device {c["device"]} copy {k["kind"]} matches', k["matches"] or k["kind"].startswith("h2d"), True)
        rows.append((f'L5 device {c["device"]} copy {k["kind"]}', f'{k["gb_per_s"]:.1f} GB/s', f'{k["bytes"]>>20} MiB', "INFO"))
    for g in c.get("gemms", []):
        check(f'L5 device {c["device"]} GEMM {g["dtype"]} vs CPU', f'err {g["max_abs_error"]:.2e}', f'tol {g["tolerance"]:.2e}', g["passed"])
        rows.append((f'L5 device {c["device"]} GEMM {g["dtype"]} n={g["throughput_size"]}', f'{g["tflops"]:.1f} TFLOP/s', "", "INFO"))
# L3: the torch cudoctor found for this python, against what `import torch` really loads.
try:
    probe = ("import json,torch,sys\ntorch.cuda.init()\nlibs={}\n"
             "for line in open('/proc/self/maps'):\n"
             "  p=line.split()[-1]\n"
             "  for k in ('libcudart.so','libcublas.so','libcublasLt.so','libcudnn.so','libnccl.so','libnvJitLink.so'):\n"
             "    if '/'+k in p: libs[k]=__import__('os').path.realpath(p)\n"
             "print(json.dumps({'file':torch.__file__,'version':torch.__version__,'cuda':torch.version.cuda,'libs':libs}))")
    tl = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300).stdout)
    found = None
    for e in rep.get("pythons", []):
        for f in e.get("frameworks", []):
            if f["name"] == "torch" and tl["file"].startswith(f["location"]):
                found = f
    check("L3 torch found for this python", found["location"] if found else "not found", os.path.dirname(tl["file"]), found is not None)
    if found:
        check("L3 torch version", found["version"], tl["version"])
        check("L3 torch CUDA build", found["cuda"], tl["cuda"])
        ours = {l["soname"].split(".so")[0] + ".so": os.path.realpath(l["path"]) for l in found["libraries"]}
        for k, path in sorted(tl["libs"].items()):
            check(f"L3 {k} torch loads", ours.get(k, "not in cudoctor's tree"), path, ours.get(k) == path)
        check("L3 torch has kernels for this GPU", "no finding" if not any(x["id"] == "framework-no-kernels-for-gpu" for x in rep["findings"]) else "finding",
              "no finding")
        rows.append(("L3 torch cubins", " ".join(found["sm_archs"]) or "-", " ".join(found["ptx_archs"]) or "-", "INFO"))
except Exception as e:
    rows.append(("L3 torch", "-", f"not checked: {e}", "SKIP"))
for lib in rep["driver"]["libraries"]:
    check(f'{lib["soname"]} version = kernel module', lib["version"] or lib["real_path"],
          rep["driver"]["kernel_module"]["version"], lib["version"] == rep["driver"]["kernel_module"]["version"])
try:
    code = ("import json,torch;print(json.dumps({'v':torch.__version__,'cuda':torch.version.cuda,"
            "'n':torch.cuda.device_count(),'names':[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],"
            "'cc':['%d.%d'%torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]}))")
    t = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout)
    names = [g["nvml"]["name"] for g in sorted(nv.values(), key=lambda g: g["nvml"]["index"])]
    ccs = [g["nvml"]["compute_capability"] for g in sorted(nv.values(), key=lambda g: g["nvml"]["index"])]
    check(f'torch {t["v"]} (CUDA {t["cuda"]}) device count', len(nv), t["n"])
    check("torch device names", names, t["names"])
    check("torch compute capabilities", ccs, t["cc"])
    # PyTorch's own throughput for the same products, as a reference for L5's figures.
    bench = ("import json,time,torch\nr={}\n"
             "for name,dt in (('fp32',torch.float32),('fp16',torch.float16),('bf16',torch.bfloat16)):\n"
             "  torch.backends.cuda.matmul.allow_tf32=False\n"
             "  a=torch.rand(4096,4096,device='cuda',dtype=dt);b=torch.rand(4096,4096,device='cuda',dtype=dt)\n"
             "  a@b;torch.cuda.synchronize();t=time.perf_counter()\n"
             "  for _ in range(5): a@b\n"
             "  torch.cuda.synchronize();r[name]=2*4096**3*5/(time.perf_counter()-t)/1e12\n"
             "print(json.dumps(r))")
    tb = json.loads(subprocess.run([sys.executable, "-c", bench], capture_output=True, text=True, timeout=300).stdout)
    for c in rt.get("compute", []):
        for g in c.get("gemms", []):
            if g["dtype"] in tb:
                rows.append((f'L5 GEMM {g["dtype"]}: cudoctor vs torch', f'{g["tflops"]:.1f} TFLOP/s', f'{tb[g["dtype"]]:.1f} TFLOP/s', "INFO"))
except Exception as e:
    rows.append(("torch", "-", f"not checked: {e}", "SKIP"))
# check --deep: torch, JAX and CuPy, each imported in its interpreter, must see the GPUs, compute
# right and map the CUDA libraries the static prediction names (deep-agrees).
try:
    deep = json.load(open(f"{out}/deep.json"))
    for e in deep.get("pythons", []):
        for f in e["frameworks"]:
            d = f.get("deep")
            if not d or f["name"] not in ("torch", "jax", "cupy"):
                continue
            who = f'{f["name"]} {f["version"]} ({e["interpreter"] or e["prefix"]})'
            check(f"deep {who} imported", d["status"] if d["imported"] else d["error"] or d["status"], "ok",
                  d["status"] == "ok" and d["imported"])
            check(f"deep {who} sees the GPUs", d["device_count"], len(smi))
            check(f"deep {who} matmul", d["matmul"] or "not run", "ok")
            ids = [x["id"] for x in deep["findings"] if x["id"].startswith("deep-") and (e["interpreter"] or e["prefix"]) in x["title"]]
            agrees = [x for x in deep["findings"] if x["id"] == "deep-agrees" and (e["interpreter"] or e["prefix"]) in x["title"]]
            check(f"deep {who} agrees with the static view", "deep-agrees" if agrees else ", ".join(ids) or "no finding",
                  "deep-agrees", bool(agrees))
            rows.append((f"deep {who} mapped", f'{len(d["mapped"])} objects in {d["seconds"]:.1f} s',
                         " ".join(os.path.basename(l["mapped"]) for l in d["libraries"] if l["mapped"]) or "-", "INFO"))
except Exception as e:
    rows.append(("check --deep", "-", f"not checked: {e}", "SKIP"))
try:
    tune = json.load(open(f"{out}/tune.json"))
    rows.append(("tune", f'{len(tune["settings"]["settings"])} settings', ", ".join(sorted({x["id"] for x in tune["findings"]})) or "none", "INFO"))
except Exception as e:
    rows.append(("tune", "-", f"not checked: {e}", "SKIP"))
times = []
for _ in range(5):
    t0 = time.perf_counter(); subprocess.run([bin, "--json"], capture_output=True); times.append(time.perf_counter() - t0)
nvml = rep["driver"]["nvml"]["outcome"]
rows.append(("wall time of cudoctor --json (best of 5)", f"{min(times)*1000:.1f} ms", f"NVML child {nvml['seconds']*1000:.1f} ms", "INFO"))
w = max(len(r[0]) for r in rows)
for r in rows: print(f"{r[3]:4}  {r[0]:<{w}}  ours: {r[1]}  ref: {r[2]}")
fails = sum(r[3] == "FAIL" for r in rows)
print(f"{sum(r[3]=='PASS' for r in rows)} passed, {fails} failed")
sys.exit(1 if fails else 0)
PY
