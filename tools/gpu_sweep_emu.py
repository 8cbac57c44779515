#!/usr/bin/env python3
"""tools/gpu_sweep.py's launch path without a GPU: the correctness step of every attention variant through ctypes on
engine-cuda's fake libcuda.so.1 (FakeDriver: "device pointers" are host addresses, cuLaunchKernel runs the kernel's
host build from the KernelEmulator library), on torch CPU tensors. It checks the parts a GPU run would otherwise be
the first to exercise: the PTX loading, the entry lookup, the packing of the 16 kernel arguments, the launch geometry
and the float64 reference of every mask kind. About 3 minutes for the fp32 variants and the D=64 16-bit ones (ALL=1:
every variant, much longer: the mma stand-in is slow).

    # once: the emulator library and the fake driver (after `mvn -pl engine-cuda -am test-compile` and one run of an
    # emulated engine-cuda test, which leaves /tmp/attn-emu*/libattn_emu.so)
    $JAVA_HOME/bin/java -cp engine-cuda/target/test-classes:engine-cuda/target/classes:kernels/target/classes \\
        tools/FakeDriverMain.java /tmp/fakecu      # or any call of FakeDriver.build(dir)
    LD_LIBRARY_PATH=/tmp/fakecu ATTN_EMU_LIB=$(ls -t /tmp/attn-emu*/libattn_emu.so | head -1) \\
        python3 tools/gpu_sweep_emu.py             # needs torch (CPU is enough)
"""
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import gpu_sweep as g  # noqa: E402

g.DEV = "cpu"
torch.cuda.synchronize = lambda: None


class EmuDriver(g.Driver):
    def context(self):
        self.check(self.cu.cuInit(0), "cuInit (fake driver: ATTN_EMU_LIB must name the emulator library)")

    def stream(self):
        return 0


def main():
    src = g.Sources(None)
    table, params, problems, _ = g.check_table(src)
    if problems:
        sys.exit("attention_variants.json against the PTX: %s" % problems)
    a = types.SimpleNamespace(budget_s=1e9, runs=1, quick=True)
    sw = g.Sweep(a, src, table, params, torch, driver=EmuDriver(torch))
    bad = 0
    for v in table["variants"]:
        if v["precision"] != "fp32" and int(v["d"]) != 64 and not os.environ.get("ALL"):
            continue
        fn = sw.drv.function(src, v["file"], v["entry"], int(v.get("smem", 0)))
        print(v["entry"], flush=True)
        bad += sum(not r["ok"] for r in sw.check(v, fn))
    print("FAILED %d cases" % bad if bad else "ALL OK")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
