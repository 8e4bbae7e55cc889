// The Python program check --deep runs in each environment's interpreter, one framework per
// process: it imports the framework, asks it what it sees, runs a small checked matmul on the
// GPU, and reads the shared objects the process mapped. It writes one JSON line after a
// marker, and a step line before each step so that a crash or a hang names where it was.
// Written for Python 3.6 and later; it changes nothing on the machine.
#include "cudoctor/probe/deep.hpp"

namespace cudoctor::probe {

const char* deep_script() {
  return R"PY(
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # nothing from the working directory
import os, json
def step(name):
    sys.stdout.write("\n@@cudoctor-step@@ " + name + "\n"); sys.stdout.flush()
name = sys.argv[1]
out = {"imported": False, "ld_preload": os.environ.get("LD_PRELOAD", ""),
       "preloaded": [m for m in ("torch", "tensorflow", "jax", "jaxlib", "cupy") if m in sys.modules]}
def close(a, b, tol):
    return all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b))
def run():
    if name == "torch":
        step("import torch"); import torch
        out["imported"] = True; out["version"] = str(torch.__version__); out["cuda"] = torch.version.cuda or ""
        step("torch.cuda.is_available()"); ok = bool(torch.cuda.is_available()); out["available"] = int(ok)
        out["device_count"] = torch.cuda.device_count() if ok else 0
        if ok:
            out["devices"] = [torch.cuda.get_device_name(i) for i in range(out["device_count"])]
            out["arch_list"] = list(torch.cuda.get_arch_list())
            step("matmul"); g = torch.Generator().manual_seed(0)
            a = torch.randn(64, 64, generator=g); b = torch.randn(64, 64, generator=g)
            c = (a.cuda() @ b.cuda()).cpu(); torch.cuda.synchronize()
            out["matmul"] = "ok" if close(c.flatten().tolist(), (a.double() @ b.double()).flatten().tolist(), 1e-2) else "wrong"
    elif name == "tensorflow":
        step("import tensorflow"); import tensorflow as tf
        out["imported"] = True; out["version"] = str(tf.__version__)
        out["cuda"] = str(tf.sysconfig.get_build_info().get("cuda_version", ""))
        step("tf.config.list_physical_devices('GPU')"); gpus = tf.config.list_physical_devices("GPU")
        out["available"] = int(len(gpus) > 0); out["device_count"] = len(gpus); out["devices"] = [g.name for g in gpus]
        if gpus:
            step("matmul")
            with tf.device("/GPU:0"):
                a = tf.random.stateless_normal((64, 64), seed=(1, 2)); c = tf.matmul(a, a)
            h = a.numpy().astype("float64")
            out["matmul"] = "ok" if close(c.numpy().flatten().tolist(), (h @ h).flatten().tolist(), 1e-2) else "wrong"
    elif name == "jax":
        step("import jax"); import jax
        out["imported"] = True; out["version"] = str(jax.__version__)
        step("jax.devices('gpu')")
        try:
            devs = jax.devices("gpu")
        except RuntimeError as e:
            devs = []; out["error"] = "RuntimeError: " + str(e)[:300]
        out["available"] = int(len(devs) > 0); out["device_count"] = len(devs); out["devices"] = [d.device_kind for d in devs]
        if devs:
            step("matmul"); import numpy as np
            a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
            c = np.asarray(jax.device_put(a, devs[0]) @ jax.device_put(a, devs[0]))
            out["matmul"] = "ok" if close(c.flatten().tolist(), (a.astype(np.float64) @ a.astype(np.float64)).flatten().tolist(), 1e-2) else "wrong"
    elif name == "cupy":
        step("import cupy"); import cupy
        out["imported"] = True; out["version"] = str(cupy.__version__)
        step("cupy.cuda.runtime.getDeviceCount()"); n = cupy.cuda.runtime.getDeviceCount()
        out["cuda"] = str(cupy.cuda.runtime.runtimeGetVersion())
        out["available"] = int(n > 0); out["device_count"] = n
        out["devices"] = [cupy.cuda.runtime.getDeviceProperties(i)["name"].decode("utf-8", "replace") for i in range(n)]
        if n:
            step("matmul"); import numpy as np
            a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
            c = cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(a))
            out["matmul"] = "ok" if close(c.flatten().tolist(), (a.astype(np.float64) @ a.astype(np.float64)).flatten().tolist(), 1e-2) else "wrong"
try:
    run()
except BaseException as e:
    out["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1][:400] if str(e).strip() else "")
    if out.get("available") == 1 and "matmul" not in out: out["matmul"] = out["error"]
step("read /proc/self/maps")
mapped = []
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split(None, 5)
        if len(parts) == 6:
            p = parts[5].strip()
            if p.startswith("/") and ".so" in os.path.basename(p) and p not in mapped: mapped.append(p)
out["mapped"] = mapped
sys.stdout.write("\n@@cudoctor-deep@@ " + json.dumps(out) + "\n"); sys.stdout.flush()
os._exit(0)
)PY";
}

}  // namespace cudoctor::probe
