#!/usr/bin/env python3
"""PyOpenCL peer of benchmarks/launch_list: the same 100 small kernels with 2 parameters that
change on every call, enqueued through PyOpenCL. Prints the median microseconds per kernel as
'pyopencl_us_per_kernel X'. Run by the launch_list benchmark when pyopencl is importable."""
import argparse
import statistics
import time

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void advance(__global float *y, const float t, const int k) {
  y[get_global_id(0)] += t * (float)k;
}
"""
KERNELS, GLOBAL = 100, 64


def pick_device(spec):
    platforms = cl.get_platforms()
    devices = [(pi, di, d) for pi, p in enumerate(platforms) for di, d in enumerate(p.get_devices())]
    if not spec:
        gpus = [d for d in devices if d[2].type & cl.device_type.GPU]
        return (gpus or devices)[0][2]
    plat, _, dev = spec.partition(":")
    for pi, di, d in devices:
        p = d.platform
        ok_p = not plat or (plat.isdigit() and int(plat) == pi) or plat.lower() in (p.name + p.vendor).lower()
        ok_d = not dev or (dev.isdigit() and int(dev) == di) or dev.lower() in d.name.lower() \
            or dev.lower() == cl.device_type.to_string(d.type).lower()
        if ok_p and ok_d:
            return d
    raise SystemExit(f"no device matches {spec}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--device")
    a = ap.parse_args()
    ctx = cl.Context([pick_device(a.device)])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, GLOBAL * 4)
    kernels = [cl.Kernel(prg, "advance") for _ in range(KERNELS)]
    times, step = [], 0
    for r in range(-2, a.repeats):
        q.finish()
        t0 = time.perf_counter()
        for _ in range(a.calls):
            t, k = np.float32(1e-3 * step), np.int32(step % 7)
            for knl in kernels:
                knl(q, (GLOBAL,), None, y, t, k)
            step += 1
        q.finish()
        if r >= 0:
            times.append((time.perf_counter() - t0) / (a.calls * KERNELS) * 1e6)
    print(f"pyopencl_us_per_kernel {statistics.median(times):.4f}")


if __name__ == "__main__":
    main()
